"""Failures of a real Typesense 0.24.1 as statuses: refused credentials and a missing
collection are 502s, a stopped server 502, a server that never answers 504; no response
body or log line carries the engine's URL or API key."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.integration.typesense_server import (
    app_client,
    index_settings,
)
from tests.typesense_server import TypesenseServer

WRONG_KEY = "wrong-key-0123456789-secret"
ROUTES = ["/h/search?q=castle", "/h/facets/genre", "/h/autocomplete?q=cas&facets=genre",
          "/h/documents/b01", "/h/mapping"]


def answers(client: TestClient[Any]) -> list[tuple[int, dict[str, Any]]]:
    found = [client.get(route) for route in ROUTES]
    found.append(client.post("/h/query", content=b'{"q": "*", "query_by": "title"}'))
    return [(r.status_code, r.json()) for r in found]


def leaks(text: str, *secrets: str) -> list[str]:
    return [s for s in secrets if s in text]


def test_refused_credentials_are_502_without_the_key(
        server: TypesenseServer, caplog: pytest.LogCaptureFixture) -> None:
    settings = index_settings(server) | {"apiKey": WRONG_KEY}
    with app_client({"h": settings}) as client:
        found = answers(client)
        listing = client.get("/indexes")
    assert listing.status_code == 200  # listing handles never calls the engine
    expected = {"error": "The typesense engine rejected searchport's credentials"}
    assert found == [(502, expected)] * len(found)
    assert not leaks(caplog.text, WRONG_KEY, server.url, str(server.port))


def test_a_missing_collection_is_a_502(server: TypesenseServer) -> None:
    with app_client({"h": index_settings(server, "no_such_collection")}) as client:
        found = answers(client)
    expected = {"error": "The collection configured for this handle does not exist in the "
                         "typesense engine"}
    assert found == [(502, expected)] * len(found)


def test_a_stopped_server_is_a_502(tmp_path_factory: pytest.TempPathFactory,
                                   caplog: pytest.LogCaptureFixture) -> None:
    own = TypesenseServer(tmp_path_factory.mktemp("typesense-stopped"))
    own.start()
    try:
        own.create_collection({"name": "books", "fields": [{"name": "title", "type": "string"},
                                                           {"name": "genre", "type": "string",
                                                            "facet": True}]},
                              [{"id": "b01", "title": "Castle", "genre": "x"}])
        # the circuit breaker out of reach: every call meets the stopped server itself
        never_open = {"circuitBreaker": {"failures": 1000}}
        with app_client({"h": index_settings(own)}, resilience=never_open) as client:
            assert client.get("/h/search?q=castle").status_code == 200
            own.stop()
            found = answers(client)
    finally:
        own.stop()
    assert found == [(502, {"error": "The typesense engine cannot be reached"})] * len(found)
    assert not leaks(caplog.text, own.api_key, own.url, str(own.port))


def test_a_stopped_server_opens_the_circuit_with_502s(
        tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture) -> None:
    """With the default breaker, the failed calls open the circuit; from then on the answer
    is the breaker's own 502, still without the engine's URL or key."""
    own = TypesenseServer(tmp_path_factory.mktemp("typesense-circuit"))
    own.start()
    try:
        own.create_collection({"name": "books", "fields": [{"name": "title", "type": "string"},
                                                           {"name": "genre", "type": "string",
                                                            "facet": True}]},
                              [{"id": "b01", "title": "Castle", "genre": "x"}])
        with app_client({"h": index_settings(own)}) as client:
            assert client.get("/h/search?q=castle").status_code == 200
            own.stop()
            found = answers(client) + answers(client)
    finally:
        own.stop()
    unreachable = (502, {"error": "The typesense engine cannot be reached"})
    circuit_open = (502, {"error": "The engine is unavailable after repeated failures; "
                                   "searchport will try it again in 10 s"})
    opened = found.index(circuit_open)
    assert opened > 0 and found[:opened] == [unreachable] * opened
    assert found[opened:] == [circuit_open] * (len(found) - opened)
    adapter_logs = "\n".join(r.getMessage() for r in caplog.records
                              if r.name == "searchport.typesense")
    assert not leaks(adapter_logs, own.api_key, own.url, str(own.port))


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield int(sock.getsockname()[1])


def test_a_server_that_never_answers_is_a_504(silent_port: int) -> None:
    settings = {"engine": "typesense", "host": f"http://127.0.0.1:{silent_port}",
                "apiKey": "k", "indexName": "books", "timeout": 0.3}
    with app_client({"h": settings}) as client:
        response = client.get("/h/search?q=castle")
    assert (response.status_code, response.json()) == (
        504, {"error": "The typesense engine did not answer within 0.3 s"})


def test_an_engine_rejection_is_a_400_with_its_reason(server: TypesenseServer) -> None:
    with app_client({"h": index_settings(server)}) as client:
        response = client.get("/h/search", params={
            "sort": '{"year": "asc", "pages": "asc", "price": "asc", "published": "asc"}'})
    assert (response.status_code, response.json()) == (400, {
        "error": "The typesense engine rejected the query: Only upto 3 sort fields are allowed."
    })
