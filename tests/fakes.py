"""Hand-written fakes of the ports, for unit tests of the domain and the HTTP layer.

Each fake follows its port exactly: the typed assignments at the end are checked by mypy
(``tests.fakes`` is one of the modules it checks), so a port that changes fails them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from dependency_injector import providers

from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import Config
from searchport.domain.errors import InvalidQuery
from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.entrypoints.container import Container
from searchport.entrypoints.http.observability import Metrics
from searchport.entrypoints.http.timing import ObservedCache, TimedEngine


class FakeEngine:
    """Records every query and answers with canned results."""

    def __init__(
        self,
        *,
        name: str = "fake",
        capabilities: Capabilities | None = None,
        result: EngineResult | None = None,
        facet_values: list[FacetValue] | None = None,
        documents: dict[str, Hit] | None = None,
    ) -> None:
        self._name = name
        self._capabilities = capabilities or Capabilities(
            suggest=True, histogram=True, geo_grid=True
        )
        self.result = result or EngineResult(hits=[], total=0)
        self.values = facet_values or []
        self.documents = documents or {}
        self.queries: list[Any] = []
        self.started = False
        self.closed = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    async def search(self, query: SearchQuery) -> EngineResult:
        self.queries.append(query)
        return self.result

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        self.queries.append(query)
        return self.values

    async def get_document(self, doc_id: str) -> Hit | None:
        self.queries.append(doc_id)
        return self.documents.get(doc_id)

    async def get_mapping(self) -> dict[str, Any]:
        return {"fake": {"mappings": {}}}

    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        self.queries.append(body)
        if "bad" in body:
            raise InvalidQuery("the engine rejected the query: bad")
        return msgspec.json.encode({"echo": body})

    async def start(self) -> None:
        self.started = True

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        self.closed = True


class FakeCache:
    """A dict cache with a switchable status; ``disabled`` stores nothing, like NoCache."""

    def __init__(self, status: str = "memory") -> None:
        self.status = status
        self.entries: dict[str, bytes] = {}
        self.ttls: dict[str, float] = {}

    async def probe(self) -> str:
        return self.status

    async def get(self, key: str) -> bytes | None:
        return self.entries.get(key)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        if self.status != "disabled":
            self.entries[key] = value
            self.ttls[key] = ttl

    async def clear(self) -> int:
        removed = len(self.entries)
        self.entries.clear()
        return removed

    async def close(self) -> None:
        return None


class FieldFacetEngine(FakeEngine):
    """A FakeEngine whose facet values depend on the (real) field asked for."""

    def __init__(self, *, values_by_field: dict[str, list[FacetValue]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.values_by_field = values_by_field

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        self.queries.append(query)
        return list(self.values_by_field.get(query.field, []))


class EchoEngine(FakeEngine):
    """A FakeEngine whose answers spell out the query it got: two answers are equal only if
    the queries were, so a response served for the wrong request shows. ``delay`` seconds
    pass before each answer (to let identical requests overlap)."""

    def __init__(self, *, delay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.delay = delay

    async def search(self, query: SearchQuery) -> EngineResult:
        self.queries.append(query)
        if self.delay:
            await asyncio.sleep(self.delay)
        echo = msgspec.json.encode(query).decode()
        return EngineResult(hits=[Hit(id="1", index=self.name, score=1.0,
                                      source={"query": echo})], total=len(echo))

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        self.queries.append(query)
        if self.delay:
            await asyncio.sleep(self.delay)
        return [FacetValue(value=msgspec.json.encode(query).decode(), count=1)]

    async def get_document(self, doc_id: str) -> Hit | None:
        self.queries.append(doc_id)
        return Hit(id=doc_id, index=self.name, score=1.0, source={"calls": len(self.queries)})

    async def get_mapping(self) -> dict[str, Any]:
        self.queries.append("mapping")
        return {"calls": len(self.queries)}


class FailingEngine(FakeEngine):
    """A FakeEngine whose data calls raise ``error`` (a domain error or a bug)."""

    def __init__(self, error: Exception, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    async def search(self, query: SearchQuery) -> EngineResult:
        self.queries.append(query)
        raise self.error

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        self.queries.append(query)
        raise self.error

    async def get_document(self, doc_id: str) -> Hit | None:
        self.queries.append(doc_id)
        raise self.error


class UnreachableCache(FakeCache):
    """A cache whose backend is down: ``clear`` cannot tell how many entries went."""

    def __init__(self) -> None:
        super().__init__(status="error")

    async def clear(self) -> int:
        return -1


def fake_catalog(
    config: Config, engines: Mapping[str, FakeEngine], metrics: Metrics | None = None
) -> Catalog:
    """The catalog ``build_catalog`` would build, with fakes instead of real adapters."""
    return Catalog({
        handle: IndexEntry(handle, index, TimedEngine(engines[handle], handle, metrics))
        for handle, index in config.indexes.items()
    })


def fake_container(
    config: Config, engines: Mapping[str, FakeEngine], cache: FakeCache | None = None
) -> Container:
    """The real container with its two seams (catalog, cache) overridden by fakes."""
    container = Container(config=config, base_dir=Path("."))
    metrics = container.metrics()
    container.catalog.override(providers.Object(fake_catalog(config, engines, metrics)))
    cache = cache or FakeCache(status="disabled")
    container.cache.override(providers.Object(ObservedCache(cache, metrics.cache_lookup)))
    return container


if TYPE_CHECKING:
    from searchport.ports.cache import CachePort
    from searchport.ports.engine import SearchEnginePort

    _fake_engine: SearchEnginePort = FakeEngine()
    _field_facet_engine: SearchEnginePort = FieldFacetEngine(values_by_field={})
    _echo_engine: SearchEnginePort = EchoEngine()
    _failing_engine: SearchEnginePort = FailingEngine(RuntimeError())
    _fake_cache: CachePort = FakeCache()
    _unreachable_cache: CachePort = UnreachableCache()
