"""Every exchange of the suite held against the published API specifications
(``tests/specs``): the hooks put in place here, and the check that fails a test.

- engine requests and answers over the real network (Typesense): every exchange made by
  ``EnginePools``' network with a real Typesense server of the tests is checked
  (``pools.network`` wrapped; ``TYPESENSE_ORIGINS``);
- the contract tiers' scripted engines: ``tests/contract/scripted.Recorder``;
- what searchport answers on its Algolia routes: every ``httpx.Client`` (Litestar's
  ``TestClient`` is one, so are the e2e clients) has its answers to a ``/1/`` route checked.

What a hook finds is collected in ``tests.specs.exchanges.VIOLATIONS``; the autouse fixture
fails the test during which it was found.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import pytest

from searchport.adapters.network import pools
from searchport.adapters.network.exchange import Answer, Exchange
from tests import servers
from tests.postgres_server import PostgresServer
from tests.specs.exchanges import (
    TYPESENSE_ORIGINS,
    VIOLATIONS,
    algolia_answer,
    engine_answer,
    engine_request,
)


def _typesense_path(path: str) -> bool:
    return path.startswith("/collections") or path == "/multi_search"


class CheckedExchange:
    """An engine exchange whose Typesense requests and answers are held against
    Typesense's specification."""

    def __init__(self, inner: Exchange) -> None:
        self._inner = inner

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        parts = urlsplit(url)
        path = unquote(parts.path)
        checked = (f"{parts.scheme}://{parts.netloc}" in TYPESENSE_ORIGINS
                   and _typesense_path(path))
        if checked:
            sent = json.loads(body) if body else None
            VIOLATIONS.add(f"typesense request {method} {path}",
                           engine_request("typesense", method, path, parts.query, sent))
        answer = await self._inner.exchange(method, url, headers, body, timeout)
        if checked and answer.content:
            try:
                found = json.loads(answer.content)
            except ValueError:
                found = None
            VIOLATIONS.add(f"typesense answer {answer.status_code} to {method} {path}",
                           engine_answer("typesense", method, path, answer.status_code, found))
        return answer

    async def aclose(self) -> None:
        await self._inner.aclose()


# the tests' own httpx clients (the Typesense helper, the e2e clients) log every URL at
# INFO: the tests that look for an engine's address in the logs look at searchport's own
logging.getLogger("httpx").setLevel(logging.WARNING)


def _install_hooks() -> None:
    network = pools.network

    def checked_network(origin: str, tls: Any, proxy: str | None) -> Exchange:
        return CheckedExchange(network(origin, tls, proxy))

    pools.network = checked_network

    send = httpx.Client.send

    def checked_send(self: httpx.Client, request: httpx.Request, **kwargs: Any
                     ) -> httpx.Response:
        response = send(self, request, **kwargs)
        path = unquote(request.url.path)
        if request.method == "POST" and (path.startswith("/1/") or
                                         path.endswith("/instantsearch")):
            content = response.read()
            VIOLATIONS.add(f"searchport's answer {response.status_code} on {path}",
                           algolia_answer(request.method, path, response.status_code, content))
        return response

    httpx.Client.send = checked_send  # type: ignore[method-assign]


_install_hooks()


@pytest.fixture(autouse=True)
def exchanges_meet_their_specifications() -> Iterator[None]:
    """Fails the test when an exchange it caused is refused by its specification."""
    yield
    found = VIOLATIONS.take()
    if found:
        pytest.fail("exchanges refused by their API specification (tests/specs):\n"
                    + "\n".join(found[:10]), pytrace=False)


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the analytics stores, one per test module (each store
    makes a database of its own in it)."""
    server = PostgresServer()
    server.start()
    try:
        yield server
    finally:
        server.remove()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.passed:
        servers.count(report.nodeid)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    line = servers.summary()
    if line is not None:
        terminalreporter.write_line(line)
