"""The contract tier of the Meilisearch adapter: the real application (config loader,
container, use cases, HTTP layer, adapter, the production engine client) over real HTTP
to a scripted Meilisearch on 127.0.0.1
(``tests/contract/scripted.py``) that records every request.

- ``MeiliDouble``: a scripted engine answering by method and path (``on(...)``).
- ``meili_app(config_yaml, handler)``: a started app (Litestar ``TestClient``) over
  ``handler``, with ``.sent``, the requests the adapter made.
- ``books_yaml(...)``: the config most tests use.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from tests.contract.meilisearch import meili_answers as ma
from tests.contract.scripted import Handler as Handler
from tests.contract.scripted import Recorder as Recorder
from tests.contract.scripted import Reply as Reply
from tests.contract.scripted import ScriptedEngine, Sent, StartedApp, started
from tests.contract.scripted import build_container as build_container

HOST = "http://meili.test:7700"
KEY = "meili-search-key-123"
INDEX_PATH = f"/indexes/{ma.INDEX}"
SEARCH = f"{INDEX_PATH}/search"
MULTI = "/multi-search"
FACET_SEARCH = f"{INDEX_PATH}/facet-search"


class MeiliDouble(ScriptedEngine):
    """A Meilisearch server reduced to a table of answers.

    ``on(method, path, *replies)`` scripts a route; replies are used in order and the last
    one is repeated. ``GET /indexes/books`` (the primary-key lookup) answers
    ``meili_answers.index()`` unless scripted otherwise. A request to an unscripted route
    fails the test.
    """

    def __init__(self, *, primary_key: str | None = "id") -> None:
        super().__init__()
        self.on("GET", INDEX_PATH, (200, ma.index(primary_key=primary_key)))

    def search(self, *replies: Reply) -> MeiliDouble:
        return self.on("POST", SEARCH, *replies)

    def multi(self, *replies: Reply) -> MeiliDouble:
        return self.on("POST", MULTI, *replies)


@dataclass
class MeiliApp(StartedApp):
    """A started application over a scripted Meilisearch."""

    def data_requests(self) -> list[Sent]:
        """Every request but the primary-key lookups (the adapter's own bookkeeping)."""
        return [s for s in self.sent if not (s.method == "GET" and s.path == INDEX_PATH)]

    def last(self) -> Sent:
        found = self.data_requests()
        assert found, "no request was sent"
        return found[-1]


@contextmanager
def serve(config_yaml: str, handler: Handler, *, environ: Mapping[str, str] | None = None,
          settle: bool = True) -> Iterator[MeiliApp]:
    """A started app. With ``settle``, startup's background primary-key lookup has been
    answered before the first test request, so ``sent`` does not depend on scheduling."""
    with started(MeiliApp, config_yaml, handler, environ=environ,
                 warm_up=(lambda _: 1) if settle else None) as app:
        yield app


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
