"""The contract tier of the Meilisearch adapter: the real application (config loader,
container, use cases, HTTP layer, adapter) with the network replaced by an
``httpx.MockTransport`` that plays a scripted Meilisearch and records every request.

- ``MeiliDouble``: a scripted engine answering by method and path (``on(...)``).
- ``meili_app(config_yaml, handler)``: a started app (Litestar ``TestClient``) over
  ``handler``, with ``.sent``, the requests the adapter made.
- ``books_yaml(...)``: the config most tests use.
"""

from __future__ import annotations

import json
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from dependency_injector import providers
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.adapters.http_clients import HttpClients
from searchport.domain.config import Config
from searchport.entrypoints.app import create_app
from searchport.entrypoints.container import Container
from tests.contract.meilisearch import meili_answers as ma

HOST = "http://meili.test:7700"
KEY = "meili-search-key-123"
INDEX_PATH = f"/indexes/{ma.INDEX}"
SEARCH = f"{INDEX_PATH}/search"
MULTI = "/multi-search"
FACET_SEARCH = f"{INDEX_PATH}/facet-search"

Handler = Callable[[httpx.Request], httpx.Response]
# A scripted reply: a response; (status, JSON body or text); an exception to raise; or a
# function of the request.
Reply = httpx.Response | tuple[Any, ...] | BaseException | Handler


class MeiliDouble:
    """A Meilisearch server reduced to a table of answers.

    ``on(method, path, *replies)`` scripts a route; replies are used in order and the last
    one is repeated. ``GET /indexes/books`` (the primary-key lookup) answers
    ``meili_answers.index()`` unless scripted otherwise. A request to an unscripted route
    fails the test.
    """

    def __init__(self, *, primary_key: str | None = "id") -> None:
        self.unexpected: list[str] = []
        self._routes: dict[tuple[str, str], list[Reply]] = {}
        self._lock = threading.Lock()
        self.on("GET", INDEX_PATH, (200, ma.index(primary_key=primary_key)))

    def on(self, method: str, path: str, *replies: Reply) -> MeiliDouble:
        assert replies
        self._routes[(method, path)] = list(replies)
        return self

    def search(self, *replies: Reply) -> MeiliDouble:
        return self.on("POST", SEARCH, *replies)

    def multi(self, *replies: Reply) -> MeiliDouble:
        return self.on("POST", MULTI, *replies)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode("ascii").split("?", 1)[0]
        with self._lock:
            queue = self._routes.get((request.method, path))
            if not queue:
                self.unexpected.append(f"{request.method} {path}")
                raise AssertionError(f"unscripted engine request {request.method} {path}")
            reply = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, httpx.Response):
            return reply
        if callable(reply):
            return reply(request)
        status, body = reply
        content = body if isinstance(body, bytes) else (
            body.encode() if isinstance(body, str) else json.dumps(body).encode())
        return httpx.Response(status, content=content,
                              headers={"Content-Type": "application/json"})


@dataclass(frozen=True)
class Sent:
    """One request the adapter sent."""

    method: str
    path: str  # as on the wire: percent-encoded, without the query string
    query: str
    url: str
    headers: httpx.Headers
    body: Any  # the decoded JSON body, or None without one


@dataclass
class Recorder:
    handler: Handler
    sent: list[Sent] = field(default_factory=list)
    answered: int = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        content = request.content
        raw_path, _, query = request.url.raw_path.decode("ascii").partition("?")
        self.sent.append(Sent(method=request.method, path=raw_path, query=query,
                              url=str(request.url), headers=request.headers,
                              body=json.loads(content) if content else None))
        try:
            return self.handler(request)
        finally:
            self.answered += 1


@dataclass
class MeiliApp:
    """A started application over a scripted engine."""

    client: TestClient[Any]
    recorder: Recorder
    config: Config
    container: Container

    @property
    def sent(self) -> list[Sent]:
        return self.recorder.sent

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.client.get(url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.client.post(url, **kwargs)

    def data_requests(self) -> list[Sent]:
        """Every request but the primary-key lookups (the adapter's own bookkeeping)."""
        return [s for s in self.sent if not (s.method == "GET" and s.path == INDEX_PATH)]

    def last(self) -> Sent:
        found = self.data_requests()
        assert found, "no request was sent"
        return found[-1]


def build_container(config_yaml: str, handler: Handler, *,
                    environ: Mapping[str, str] | None = None) -> tuple[Container, Recorder]:
    config = parse_config(textwrap.dedent(config_yaml), environ or {})
    recorder = Recorder(handler)
    container = Container(config=config, base_dir=Path("."))
    container.http_clients.override(
        providers.Object(HttpClients(transport=httpx.MockTransport(recorder)))
    )
    container.catalog()
    container.cache()
    return container, recorder


@contextmanager
def serve(config_yaml: str, handler: Handler, *, environ: Mapping[str, str] | None = None,
          settle: bool = True) -> Iterator[MeiliApp]:
    """A started app. With ``settle``, startup's background primary-key lookup has been
    answered before the first test request, so ``sent`` does not depend on scheduling."""
    container, recorder = build_container(config_yaml, handler, environ=environ)
    app = create_app(container)
    with TestClient(app) as client:
        if settle:
            deadline = time.monotonic() + 5
            while recorder.answered < 1 and time.monotonic() < deadline:
                time.sleep(0.001)
            time.sleep(0.005)  # let the engine store what it read
        yield MeiliApp(client=client, recorder=recorder, config=container.config(),
                       container=container)
    unexpected = getattr(handler, "unexpected", [])
    assert not unexpected, f"the adapter sent unscripted requests: {unexpected}"


@pytest.fixture
def meili_app() -> Iterator[Callable[..., MeiliApp]]:
    """``meili_app(config_yaml, handler, **kwargs)``: a started app, stopped after the test."""
    with ExitStack() as stack:

        def start(config_yaml: str, handler: Handler, **kwargs: Any) -> MeiliApp:
            return stack.enter_context(serve(config_yaml, handler, **kwargs))

        yield start


BOOK_FIELDS = """\
    fields:
      title: {weight: 2}
      author: {searchable: true}
      kind: {field: genre}
      when: {field: year}
"""


def books_yaml(*, host: str = HOST, index_name: str = ma.INDEX, api_key: str | None = KEY,
               settings: str = "", fields: str = BOOK_FIELDS, handle: str = "books") -> str:
    """One handle over the ``books`` index. ``settings``: more index keys, one per line."""
    extra = textwrap.indent(textwrap.dedent(settings).strip(), " " * 4)
    return (
        "indexes:\n"
        f"  {handle}:\n"
        "    engine: meilisearch\n"
        f"    host: {json.dumps(host)}\n"
        f"    indexName: {json.dumps(index_name)}\n"
        + (f"    apiKey: {json.dumps(api_key)}\n" if api_key is not None else "")
        + (extra + "\n" if extra else "")
        + fields
    )


@pytest.fixture
def double() -> MeiliDouble:
    return MeiliDouble()


@pytest.fixture
def books(double: MeiliDouble, meili_app: Callable[..., MeiliApp]) -> MeiliApp:
    """The default app: ``books_yaml()`` over ``double`` (script it before a request)."""
    return meili_app(books_yaml(), double)


def q(**params: Any) -> dict[str, str]:
    """Query parameters; dict and list values are sent as JSON text."""
    return {k: json.dumps(v) if isinstance(v, dict | list) else str(v)
            for k, v in params.items()}
