"""The contract tier of the Elasticsearch/OpenSearch adapter: the real application (config
loader, container, use cases, HTTP layer, adapter, the production engine client) over real
HTTP to a scripted engine on 127.0.0.1 (``tests/contract/scripted.py``) that records every
request.

- ``engine``: parametrizes a test over ``elasticsearch`` and ``opensearch``.
- ``EngineDouble``: a scripted engine answering by method and path (``on(...)``).
- ``es_app(config_yaml, handler)``: a started app (Litestar ``TestClient``) over ``handler``,
  with ``.sent``, the requests the adapter made (method, path, headers, decoded JSON body).
- ``cities``/``double``: a shared app of ``city_yaml(engine)`` and its engine double.
- ``city_yaml(engine, ...)``: the config most tests use.

Every search a double answers with success is also sent to the session's real node of its
engine when the test ends, which must accept it too (``real_node.py``).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from searchport.domain.config import Config
from tests.contract.elastic import es_answers as es
from tests.contract.elastic import real_node
from tests.contract.scripted import Handler as Handler
from tests.contract.scripted import Recorder as Recorder
from tests.contract.scripted import Reply as Reply
from tests.contract.scripted import ScriptedEngine, Sent, StartedApp, started
from tests.contract.scripted import build_container as build_container

ENGINES = ("elasticsearch", "opensearch")
HOST = "http://es.test:9200"

@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def _searches_held_against_the_real_node(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    refused = real_node.check(request.config)
    assert not refused, "the real OpenSearch node refused searches the double accepted:\n" \
        + "\n".join(refused)


# ---------------------------------------------------------------- the scripted engine


class EngineDouble(ScriptedEngine):
    """An Elasticsearch or OpenSearch server reduced to a table of answers.

    ``on(method, path, *replies)`` scripts a route; replies are used in order and the last
    one is repeated. ``GET /<index>/_mapping`` answers ``es_answers.city_mapping`` unless
    scripted otherwise. An Elasticsearch double sends ``X-Elastic-Product: Elasticsearch``
    on every answer, as every Elasticsearch since 7.14 does; an OpenSearch double does not.
    A request to an unscripted route fails the test (the app answers 500).
    """

    content_type = "application/json; charset=UTF-8"

    def __init__(self, engine: str, *, index: str = es.INDEX, prefix: str = "",
                 mapping: Any = None, product_header: bool | None = None) -> None:
        super().__init__()
        self.engine = engine
        self.prefix = prefix
        self.product_header = engine == "elasticsearch" if product_header is None \
            else product_header
        self._mapping_route = ("GET", f"{prefix}/{index}/_mapping")
        self._served_mapping: Any = None
        self._default_mapping: Reply = (200, mapping or es.city_mapping(index))
        self.on("GET", f"/{index}/_mapping", self._default_mapping)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        response = super().__call__(request)
        if response.status_code >= 300:
            return response
        path = request.url.path
        if request.method == "GET" and path.endswith("/_mapping"):
            # the mapping the adapter now works with, for the searches that follow
            self._served_mapping = real_node.readable_mapping(response.content)
        elif (request.method == "POST" and path.endswith("/_search")
                and self._served_mapping is not None
                and not response.extensions.get("off_spec")):
            real_node.keep(self.engine, request.url.raw_path.decode("ascii"),
                           request.content, self._served_mapping)
        return response

    def reset(self) -> None:
        """Back to the state of a new double (the scripted mapping kept)."""
        with self._lock:
            self._routes = {self._mapping_route: [self._default_mapping]}
            self.unexpected.clear()

    def on(self, method: str, path: str, *replies: Reply) -> EngineDouble:
        """Script ``method path`` (the path after the host's prefix, percent-encoded)."""
        return super().on(method, self.prefix + path, *replies)

    def search(self, *replies: Reply, index: str = es.INDEX) -> EngineDouble:
        return self.on("POST", f"/{index}/_search", *replies)

    def answer_headers(self) -> dict[str, str]:
        return {"X-Elastic-Product": "Elasticsearch"} if self.product_header else {}


# ---------------------------------------------------------------- recording


@dataclass
class EsApp(StartedApp):
    """A started application over a scripted Elasticsearch or OpenSearch."""

    @property
    def double(self) -> EngineDouble:
        handler = self.recorder.handler
        assert isinstance(handler, EngineDouble)
        return handler

    def requests(self, method: str | None = None, path: str | None = None) -> list[Sent]:
        return [s for s in self.sent
                if (method is None or s.method == method) and (path is None or s.path == path)]

    def searches(self) -> list[Sent]:
        return [s for s in self.sent if s.method == "POST" and s.path.endswith("/_search")]

    def last_search(self) -> Sent:
        found = self.searches()
        assert found, f"no search was sent: {[(s.method, s.path) for s in self.sent]}"
        return found[-1]

    def mapping_fetches(self) -> list[Sent]:
        return [s for s in self.sent if s.method == "GET" and s.path.endswith("/_mapping")]

    def data_requests(self) -> list[Sent]:
        """Every request but the mapping fetches (the adapter's own bookkeeping)."""
        return [s for s in self.sent if not s.path.endswith("/_mapping")]


def _elastic_handles(config: Config) -> int:
    return sum(1 for i in config.indexes.values() if i.engine in ENGINES)


@contextmanager
def serve_es(config_yaml: str, handler: Handler, *, environ: Mapping[str, str] | None = None,
             base_dir: Path | None = None, settle: bool = True) -> Iterator[EsApp]:
    """``es_app`` as a context manager. With ``settle``, startup's background mapping fetch
    (one per handle) has been answered before the first test request, so the order of
    ``sent`` does not depend on scheduling."""
    with started(EsApp, config_yaml, handler, environ=environ, base_dir=base_dir,
                 warm_up=_elastic_handles if settle else None) as app:
        yield app


@pytest.fixture
def es_app() -> Iterator[Callable[..., EsApp]]:
    """``es_app(config_yaml, handler, *, environ=None, base_dir=None)``: a started app;
    stopped when the test ends."""
    with ExitStack() as stack:

        def start(config_yaml: str, handler: Handler, **kwargs: Any) -> EsApp:
            return stack.enter_context(serve_es(config_yaml, handler, **kwargs))

        yield start


# ---------------------------------------------------------------- configs


CITY_FIELDS = """\
    fields:
      name: {weight: 2}
      description: {searchable: true}
      region: {field: continent}
      people: {field: population}
      where: {field: location}
      landmarks.kind: {nestedPath: landmarks}
      landmarks.title: {nestedPath: landmarks}
    defaults:
      suggestField: name.shingle
"""


def city_yaml(engine: str, *, host: str = HOST, index_name: str | list[str] = "cities",
              settings: str = "", fields: str = CITY_FIELDS, handle: str = "cities") -> str:
    """One handle over the ``cities`` index. ``settings``: more index keys, one per line."""
    names = json.dumps(index_name)
    extra = textwrap.indent(textwrap.dedent(settings).strip(), " " * 4)
    return (
        "indexes:\n"
        f"  {handle}:\n"
        f"    engine: {engine}\n"
        f"    host: {json.dumps(host)}\n"
        f"    indexName: {names}\n"
        + (extra + "\n" if extra else "")
        + fields
    )


class AppPool:
    """Started apps shared by the tests of a session (building one costs ~0.1 s), each
    handed out with its engine double reset and its record of requests emptied. What an
    app keeps between tests (the mapping it read, the product check done) is the same in
    every test that uses it; tests that need a fresh app use ``es_app``."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack
        self._apps: dict[str, EsApp] = {}

    def get(self, config_yaml: str, make_double: Callable[[], EngineDouble]) -> EsApp:
        app = self._apps.get(config_yaml)
        if app is None:
            app = self._stack.enter_context(serve_es(config_yaml, make_double()))
            self._apps[config_yaml] = app
        app.double.reset()
        app.sent.clear()
        return app


@pytest.fixture(scope="session")
def app_pool() -> Iterator[AppPool]:
    with ExitStack() as stack:
        yield AppPool(stack)


@pytest.fixture
def cities(engine: str, app_pool: AppPool) -> Iterator[EsApp]:
    """The shared app of ``city_yaml(engine)``; script its engine through ``double``."""
    app = app_pool.get(city_yaml(engine), lambda: EngineDouble(engine))
    yield app
    assert not app.double.unexpected, (
        f"the adapter sent unscripted requests: {app.double.unexpected}"
    )


@pytest.fixture
def double(cities: EsApp) -> EngineDouble:
    """The engine behind ``cities``."""
    return cities.double
