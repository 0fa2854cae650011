"""Hand-written fakes of the ports, for unit tests of the domain and the HTTP layer.

Each fake follows its port exactly: the typed assignments at the end are checked by mypy
(``tests.fakes`` is one of the modules it checks), so a port that changes fails them.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from dependency_injector import providers

from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import SearchRecord
from searchport.domain.analytics.reports import (
    DayClicks,
    DayCount,
    DayPosition,
    DayUsers,
    PopularQuery,
    TopSearch,
)
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import Config
from searchport.domain.errors import AnalyticsUnavailable, InvalidQuery
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
    container = in_memory_analytics(Container(config=config, base_dir=Path(".")))
    metrics = container.metrics()
    container.catalog.override(providers.Object(fake_catalog(config, engines, metrics)))
    cache = cache or FakeCache(status="disabled")
    container.cache.override(providers.Object(ObservedCache(cache, metrics.cache_lookup)))
    return container



class FakeAnalyticsStore:
    """An ``AnalyticsStore`` in lists. ``failing``: every call raises AnalyticsUnavailable;
    ``hold``: set, writes wait until it is cleared (a store that is too slow)."""

    def __init__(self) -> None:
        self.searches: list[SearchRecord] = []
        self.events: list[InsightsEvent] = []
        self.salts: dict[date, bytes] = {}
        self.purged: list[date] = []
        self.writes = 0
        self.opened = self.closed = False
        self.failing = False
        self.hold: asyncio.Event | None = None

    def _check(self) -> None:
        if self.failing:
            raise AnalyticsUnavailable("The analytics store is down")

    async def _held(self) -> None:
        self._check()
        if self.hold is not None:
            while self.hold.is_set():
                await asyncio.sleep(0.005)

    async def open(self) -> None:
        self._check()
        self.opened = True

    async def day_salt(self, day: date) -> bytes:
        self._check()
        return self.salts.setdefault(day, f"salt-{day}".encode())

    async def write_searches(self, records: Sequence[SearchRecord]) -> None:
        await self._held()
        self.writes += 1
        self.searches.extend(records)

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        await self._held()
        self.writes += 1
        self.events.extend(events)

    async def purge(self, before: date) -> int:
        self._check()
        self.purged.append(before)
        kept = [s for s in self.searches if s.day >= before]
        removed = len(self.searches) - len(kept)
        self.searches = kept
        return removed

    async def searches_by_day(self, handle: str, start: date, end: date) -> list[DayCount]:
        self._check()
        mine = [s for s in self.searches if s.handle == handle and start <= s.day <= end]
        days = Counter(s.day for s in mine)
        empty = Counter(s.day for s in mine if s.nb_hits == 0)
        return [DayCount(day, n, empty[day]) for day, n in sorted(days.items())]

    async def users(self, handle: str, start: date, end: date) -> tuple[int, list[DayUsers]]:
        self._check()
        mine = [s for s in self.searches if s.handle == handle and start <= s.day <= end]
        days: dict[date, set[str]] = {}
        for s in mine:
            days.setdefault(s.day, set()).add(s.user_token)
        return (len({s.user_token for s in mine}),
                [DayUsers(day, len(users)) for day, users in sorted(days.items())])

    async def top_searches(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, no_results: bool = False,
                           no_clicks: bool = False) -> list[TopSearch]:
        self._check()
        clicked = {e.query_id for e in self.events if e.type == "click"}
        found: dict[str, list[SearchRecord]] = {}
        for s in self.searches:
            if not (s.handle == handle and start <= s.day <= end):
                continue
            if no_results and s.nb_hits:
                continue
            if no_clicks and (s.query_id is None or s.query_id in clicked):
                continue
            found.setdefault(s.query, []).append(s)
        ranked = sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return [TopSearch(q, len(r), int(sum(s.nb_hits for s in r) / len(r) + 0.5),
                          sum(bool(s.refinements) for s in r))
                for q, r in ranked[offset:offset + limit]]

    async def popular_queries(self, handle: str, start: date, end: date, *,
                              min_count: int, limit: int) -> list[PopularQuery]:
        self._check()
        mine = [s for s in self.searches
                if s.handle == handle and start <= s.day <= end and s.query]
        counts = Counter(s.query for s in mine)
        most: dict[str, int] = {}
        for s in mine:
            most[s.query] = max(most.get(s.query, s.nb_hits), s.nb_hits)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return [PopularQuery(q, n, most[q]) for q, n in ranked if n >= min_count][:limit]

    async def clicks_by_day(self, handle: str, start: date, end: date) -> list[DayClicks]:
        self._check()
        clicks = Counter(e.query_id for e in self.events if e.type == "click")
        days: dict[date, list[int]] = {}
        for s in self.searches:
            if s.handle == handle and s.query_id and start <= s.day <= end:
                figures = days.setdefault(s.day, [0, 0, 0])
                n = clicks[s.query_id]
                figures[0] += 1
                figures[1] += n > 0
                figures[2] += n
        return [DayClicks(day, *figures) for day, figures in sorted(days.items())]

    async def conversions_by_day(self, handle: str, start: date, end: date
                                 ) -> list[DayClicks]:
        self._check()
        named: Counter[str] = Counter()
        for e in self.events:
            if e.type == "conversion":
                named.update({e.query_id} if e.query_id else set(e.object_query_ids) - {""})
        days: dict[date, list[int]] = {}
        for s in self.searches:
            if s.handle == handle and s.query_id and start <= s.day <= end:
                figures = days.setdefault(s.day, [0, 0, 0])
                figures[0] += 1
                figures[1] += named[s.query_id] > 0
                figures[2] += named[s.query_id]
        return [DayClicks(day, *figures) for day, figures in sorted(days.items())]

    async def click_positions(self, handle: str, start: date, end: date
                              ) -> list[DayPosition]:
        self._check()
        found: Counter[tuple[date, int]] = Counter()
        for e in self.events:
            day = datetime.fromtimestamp(e.at, UTC).date()
            if e.type == "click" and e.handle == handle and start <= day <= end:
                found.update((day, p) for p in e.positions)
        return [DayPosition(day, p, n) for (day, p), n in sorted(found.items())]

    async def last_update(self, handle: str) -> float | None:
        self._check()
        return max((s.at for s in self.searches if s.handle == handle), default=None)

    async def close(self) -> None:
        self.closed = True



def in_memory_analytics(container: Container) -> Container:
    """``container`` with its analytics store in memory (a ``FakeAnalyticsStore``): an app a
    test builds beside the checkout never writes an analytics file there."""
    container.analytics_store.override(providers.Object(FakeAnalyticsStore()))
    container.recorder.reset()
    return container

if TYPE_CHECKING:
    from searchport.ports.analytics import AnalyticsStore
    from searchport.ports.cache import CachePort
    from searchport.ports.engine import SearchEnginePort

    _fake_engine: SearchEnginePort = FakeEngine()
    _field_facet_engine: SearchEnginePort = FieldFacetEngine(values_by_field={})
    _echo_engine: SearchEnginePort = EchoEngine()
    _failing_engine: SearchEnginePort = FailingEngine(RuntimeError())
    _fake_cache: CachePort = FakeCache()
    _unreachable_cache: CachePort = UnreachableCache()
    _fake_analytics_store: AnalyticsStore = FakeAnalyticsStore()
