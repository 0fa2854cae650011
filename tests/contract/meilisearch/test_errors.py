"""Engine failures as client errors (docs/errors.md): a rejected query is a 400 with
Meilisearch's own message; credentials, a missing index or a failing engine a 502; a
timeout a 504. No response body or log line carries the host or the key."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from searchport.domain.config import ConfigError
from tests.contract.meilisearch import meili_answers as ma
from tests.contract.meilisearch.conftest import (
    FACET_SEARCH,
    HOST,
    INDEX_PATH,
    KEY,
    MeiliApp,
    MeiliDouble,
    books_yaml,
    build_container,
    q,
)
from tests.contract.scripted import OffSpec

FILTER_MESSAGE = (
    "Attribute `colour` is not filterable. Available filterable attributes are: `genre`.\n"
    "1:7 colour = \"red\""
)
CREDENTIALS = "The meilisearch engine rejected searchport's credentials"
NO_INDEX = "The index configured for this handle does not exist in the meilisearch engine"


def no_secrets(text: str) -> None:
    assert "meili.test" not in text and KEY not in text and HOST not in text


@pytest.mark.parametrize(("status", "body", "expected_status", "expected"), [
    (400, ma.error(FILTER_MESSAGE, "invalid_search_filter"), 400,
     "The meilisearch engine rejected the query: Attribute `colour` is not filterable. "
     "Available filterable attributes are: `genre`. 1:7 colour = \"red\""),
    (400, "not json", 400, "The meilisearch engine rejected the query: no reason given"),
    (401, ma.error("The Authorization header is missing.", "missing_authorization_header",
                   "auth"), 502, CREDENTIALS),
    (403, ma.error("The provided API key is invalid.", "invalid_api_key", "auth"), 502,
     CREDENTIALS),
    (404, ma.error("Index `books` not found.", "index_not_found"), 502, NO_INDEX),
    (404, "<html>no route</html>", 502, "The meilisearch engine failed (HTTP 404)"),
    (429, ma.error("Too many requests", "too_many_search_requests", "system"), 502,
     "The meilisearch engine is overloaded (it answered 429 Too Many Requests)"),
    (500, ma.error("An internal error has occurred.", "internal", "internal"), 502,
     "The meilisearch engine failed (HTTP 500)"),
    (503, "", 502, "The meilisearch engine failed (HTTP 503)"),
    (504, "", 504, "The meilisearch engine timed out"),
])
def test_engine_statuses_map_to_client_errors(
    books: MeiliApp, double: MeiliDouble, caplog: pytest.LogCaptureFixture,
    status: int, body: Any, expected_status: int, expected: str
) -> None:
    double.search((status, body))
    with caplog.at_level(logging.INFO):
        response = books.get("/books/search", params=q(filters={"colour": "red"}))
    assert response.status_code == expected_status
    assert response.json() == {"error": expected}
    no_secrets(response.text)
    no_secrets(caplog.text)


@pytest.mark.parametrize(("failure", "status", "expected"), [
    (httpx.ConnectError("connection refused"), 502, "The meilisearch engine cannot be reached"),
    (httpx.ReadTimeout("timed out"), 504, "The meilisearch engine did not answer within 5 s"),
    (httpx.RemoteProtocolError("peer closed"), 502, "The meilisearch engine cannot be reached"),
])
def test_network_failures(books: MeiliApp, double: MeiliDouble,
                          caplog: pytest.LogCaptureFixture,
                          failure: Exception, status: int, expected: str) -> None:
    double.search(failure)
    with caplog.at_level(logging.INFO):
        response = books.get("/books/search")
    assert response.status_code == status
    assert response.json() == {"error": expected}
    no_secrets(caplog.text)


@pytest.mark.parametrize("answer", [
    b"not json",
    {"hits": "nope", "totalHits": 1},
    {"hits": [], "totalHits": "many"},
    {"hits": [3], "totalHits": 1},
    {"hits": [], "totalHits": 1, "facetDistribution": {"genre": {"x": "lots"}}},
])
def test_unreadable_answers_are_a_502(books: MeiliApp, double: MeiliDouble,
                                      answer: Any) -> None:
    double.search((200, answer))
    response = books.get("/books/search", params={"facets": "kind"})
    assert response.status_code == 502
    assert response.json() == {
        "error": "The meilisearch engine sent an answer searchport cannot read"}


def test_a_multi_search_of_the_wrong_length_is_unreadable(books: MeiliApp,
                                                          double: MeiliDouble) -> None:
    double.multi((200, ma.multi(ma.search())))
    response = books.get("/books/search", params=q(facets="kind", filters={"kind": "x"}))
    assert response.status_code == 502


def test_a_rejected_raw_query_carries_the_engines_reason(books: MeiliApp,
                                                         double: MeiliDouble) -> None:
    double.search(OffSpec((400, ma.error(  # a raw query Meilisearch refuses, on purpose
        "Unknown field `size`: expected one of `q`, `offset`.", "bad_request"))))
    response = books.post("/books/query", json={"size": 3})
    assert response.status_code == 400
    assert response.json() == {"error": "The meilisearch engine rejected the query: Unknown "
                                        "field `size`: expected one of `q`, `offset`."}


def test_a_failing_facet_search_fails_the_facet_values(books: MeiliApp,
                                                       double: MeiliDouble) -> None:
    double.search((200, ma.search(hits_per_page=0, facets={"genre": {}})))
    double.on("POST", FACET_SEARCH, (400, ma.error(
        "Attribute `genre` is not facet-searchable.", "invalid_facet_search_facet_name")))
    response = books.get("/books/facets/kind", params={"q": "x"})
    assert response.status_code == 400
    assert "not facet-searchable" in response.json()["error"]


def test_a_document_lookup_on_a_missing_index_is_a_502(books: MeiliApp,
                                                       double: MeiliDouble) -> None:
    double.on("GET", f"{INDEX_PATH}/documents/b01",
              (404, ma.error("Index `books` not found.", "index_not_found")))
    response = books.get("/books/documents/b01")
    assert response.status_code == 502
    assert response.json() == {"error": NO_INDEX}


def test_mapping_needs_settings_access(books: MeiliApp, double: MeiliDouble) -> None:
    double.on("GET", f"{INDEX_PATH}/settings",
              (403, ma.error("The provided API key is invalid.", "invalid_api_key", "auth")))
    response = books.get("/books/mapping")
    assert response.status_code == 502
    assert response.json() == {"error": CREDENTIALS}


def test_an_unreachable_engine_at_start_still_serves_once_it_answers(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    double.on("GET", INDEX_PATH, httpx.ConnectError("down"), (200, ma.index()))
    app = meili_app(books_yaml(), double)
    double.search((200, ma.search([ma.hit(ma.CASTLE)])))
    response = app.get("/books/search")
    assert response.status_code == 200
    assert response.json()["hits"][0]["objectID"] == "b01"  # the fallback idField: id


@pytest.mark.parametrize(("connection", "message"), [
    ('host: "http://m:7700"\n    indexName: ["a", "b"]',
     "indexes.books.indexName: engine meilisearch takes one index name"),
    ("host: ftp://x\n    indexName: books", "indexes.books.host: not an http:// or https:// URL"),
    ("indexName: books", "indexes.books.host: required for engine meilisearch"),
])
def test_configuration_errors_name_the_key(connection: str, message: str) -> None:
    yaml = f"indexes:\n  books:\n    engine: meilisearch\n    {connection}\n"
    with pytest.raises(ConfigError) as raised:
        build_container(yaml, MeiliDouble())
    assert str(raised.value) == message


def test_nested_paths_are_a_configuration_error() -> None:
    yaml = books_yaml(fields="    fields:\n      variants.color: {nestedPath: variants}\n")
    with pytest.raises(ConfigError, match="nestedPath: not supported by engine meilisearch"):
        build_container(yaml, MeiliDouble())


@pytest.mark.parametrize(("reply", "status", "expected"), [
    ((400, ma.error(FILTER_MESSAGE, "invalid_search_filter")), 400,
     "The meilisearch engine rejected the query: Attribute `colour` is not filterable. "
     "Available filterable attributes are: `genre`. 1:7 colour = \"red\""),
    ((413, ma.error("The provided payload reached the size limit. The maximum accepted "
                    "payload size is 100 MiB.", "payload_too_large")), 400,
     "The meilisearch engine rejected the query: The provided payload reached the size "
     "limit. The maximum accepted payload size is 100 MiB."),
    ((404, ma.error("Index `books` not found.", "index_not_found")), 502, NO_INDEX),
    ((403, ma.error("The provided API key is invalid.", "invalid_api_key", "auth")), 502,
     CREDENTIALS),
    ((500, ma.error("An internal error has occurred.", "internal", "internal")), 502,
     "The meilisearch engine failed (HTTP 500)"),
])
def test_raw_query_failures(books: MeiliApp, double: MeiliDouble,
                            caplog: pytest.LogCaptureFixture,
                            reply: Any, status: int, expected: str) -> None:
    """A raw query Meilisearch refuses (400, or 413 for a body over its payload limit) is the
    caller's: a 400 with its message; what is not about the query stays a 502."""
    double.search(reply)
    with caplog.at_level(logging.INFO):
        response = books.post("/books/query", json={"q": "x", "filter": "colour = red"})
    assert response.status_code == status
    assert response.json() == {"error": expected}
    no_secrets(response.text)
    no_secrets(caplog.text)
