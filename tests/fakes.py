"""Hand-written fakes of the ports, for unit tests of the domain and the HTTP layer.

Each fake follows its port exactly: the typed assignments at the end are checked by mypy
(``tests.fakes`` is one of the modules it checks), so a port that changes fails them.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from dependency_injector import providers

from searchport.adapters.observed import TimedEngine
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import ObservedSearch, SearchRecord, to_record, utc_day
from searchport.domain.analytics.reports import CLICK_RANGES as RANGES
from searchport.domain.analytics.reports import (
    DayClicks,
    DayCount,
    DayPosition,
    DayUsers,
    EventCounts,
    FilterCombination,
    FilterCount,
    HitStats,
    PopularQuery,
    Revenue,
    SearchStats,
    TopSearch,
)
from searchport.domain.analytics.segments import EVERY_SEARCH, Segment
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import Config
from searchport.domain.errors import AnalyticsUnavailable, InvalidQuery, InvalidRequest
from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.entrypoints.container import Container
from searchport.entrypoints.http.observability import Metrics
from searchport.entrypoints.http.timing import EngineCalls


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
            suggest=True, histogram=True, geo_grid=True, geo_area=True
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

    # each answer waits for the loop once, as a real engine's does (its answer comes over
    # the network or from a thread): identical questions asked at once can share it

    async def search(self, query: SearchQuery) -> EngineResult:
        self.queries.append(query)
        await asyncio.sleep(0)
        return self.result

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        self.queries.append(query)
        await asyncio.sleep(0)
        return self.values

    async def get_document(self, doc_id: str) -> Hit | None:
        self.queries.append(doc_id)
        await asyncio.sleep(0)
        return self.documents.get(doc_id)

    async def record_vector(self, doc_id: str) -> tuple[float, ...] | None:
        self.queries.append(doc_id)
        await asyncio.sleep(0)
        if doc_id not in self.documents:
            return None
        raise InvalidRequest("semantic search is not configured for this index")

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
    """A catalog of ``engines`` (one per handle, timed as the container times them)."""
    observer = EngineCalls(metrics)
    return Catalog({
        handle: IndexEntry(handle, index, TimedEngine(engines[handle], handle, observer))
        for handle, index in config.indexes.items()
    })


def fake_container(
    config: Config, engines: Mapping[str, FakeEngine], cache: FakeCache | None = None
) -> Container:
    """The real container with its two seams (the engine adapters, the cache) fakes."""
    container = in_memory_analytics(Container(config=config, base_dir=Path(".")))
    container.engines.override(providers.Object(dict(engines)))
    container.cache_backend.override(providers.Object(cache or FakeCache(status="disabled")))
    return container


def half_up(value: Fraction) -> int:
    """A non-negative ``value`` rounded half up, as both databases round an average."""
    return int(value + Fraction(1, 2))


def in_segment(tags: tuple[str, ...] | list[str], segment: Segment) -> bool:
    """Whether a search made with ``tags`` counts in ``segment``."""
    return not segment or any(all(t in tags for t in need) for need in segment)


class FakeAnalyticsStore:
    """An ``AnalyticsStore`` in lists: what is recorded is written at once (its salt of the
    day ``salt-YYYY-MM-DD``). ``failing``: every call raises AnalyticsUnavailable;
    ``hold``: set, writes wait until it is cleared (a store that is too slow); ``full``:
    no room for recorded events."""

    def __init__(self) -> None:
        self.searches: list[SearchRecord] = []
        self.events: list[InsightsEvent] = []
        self.salts: dict[date, bytes] = {}
        self.full = False
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

    def record_search(self, search: ObservedSearch) -> None:
        day = utc_day(search.at)
        self.searches.append(to_record(search, self.salts.setdefault(
            day, f"salt-{day}".encode())))

    def record_events(self, events: Sequence[InsightsEvent]) -> bool:
        if self.full:
            return False
        self.events.extend(events)
        return True

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

    # -- reads: the AnalyticsStore port computed in plain Python, independently of SQL --

    def _scope(self, handle: str, start: date, end: date, segment: Segment = EVERY_SEARCH,
               search: str | None = None) -> list[SearchRecord]:
        return [s for s in self.searches if s.handle == handle and start <= s.day <= end
                and in_segment(s.tags, segment) and (search is None or s.query == search)]

    def _events(self, handle: str, start: date) -> list[InsightsEvent]:
        """The events that count: every click and conversion, whatever its day (each is
        counted for the searches it names)."""
        return [e for e in self.events if e.type in ("click", "conversion")]

    def _purchases(self, handle: str, start: date) -> list[InsightsEvent]:
        return [e for e in self._events(handle, start) if e.subtype == "purchase"]

    @staticmethod
    def _named(e: InsightsEvent) -> set[str]:
        """The searches an event names: its queryID, else (a conversion) its objects'."""
        if e.query_id:
            return {e.query_id}
        return set(e.object_query_ids) - {""} if e.type == "conversion" else set()

    def _per_search(self, handle: str, start: date) -> dict[str, Counter[str]]:
        """Per queryID: the events of each kind (click, conversion, addToCart, purchase)."""
        found: dict[str, Counter[str]] = {}
        for e in self._events(handle, start):
            for q in self._named(e):
                kinds = found.setdefault(q, Counter())
                kinds[e.type] += 1
                if e.subtype:
                    kinds[e.subtype] += 1
        return found

    @staticmethod
    def _figures(tracked: list[Counter[str]]) -> EventCounts:
        def got(kind: str) -> int:
            return sum(1 for c in tracked if c[kind] > 0)

        def total(kind: str) -> int:
            return sum(c[kind] for c in tracked)

        return EventCounts(tracked=len(tracked), clicked=got("click"), clicks=total("click"),
                           converted=got("conversion"), conversions=total("conversion"),
                           carted=got("addToCart"), add_to_carts=total("addToCart"),
                           purchased=got("purchase"), purchases=total("purchase"))

    async def searches_by_day(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayCount]:
        self._check()
        mine = self._scope(handle, start, end, segment)
        days = Counter(s.day for s in mine)
        empty = Counter(s.day for s in mine if s.nb_hits == 0)
        return [DayCount(day, n, empty[day]) for day, n in sorted(days.items())]

    async def users(self, handle: str, start: date, end: date, *,
                    segment: Segment = EVERY_SEARCH) -> tuple[int, list[DayUsers]]:
        self._check()
        mine = self._scope(handle, start, end, segment)
        days: dict[date, set[str]] = {}
        for s in mine:
            days.setdefault(s.day, set()).add(s.user_token)
        return (len({s.user_token for s in mine}),
                [DayUsers(day, len(users)) for day, users in sorted(days.items())])

    async def top_searches(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, no_results: bool = False,
                           no_clicks: bool = False,
                           segment: Segment = EVERY_SEARCH) -> list[TopSearch]:
        self._check()
        clicked = {e.query_id for e in self.events if e.type == "click"}
        found: dict[str, list[SearchRecord]] = {}
        for s in self._scope(handle, start, end, segment):
            if no_results and s.nb_hits:
                continue
            if no_clicks and (s.query_id is None or s.query_id in clicked):
                continue
            found.setdefault(s.query, []).append(s)
        ranked = sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return [TopSearch(q, len(r), half_up(Fraction(sum(s.nb_hits for s in r), len(r))),
                          0 if no_clicks else sum(bool(s.refinements) for s in r))
                for q, r in ranked[offset:offset + limit]]

    async def popular_queries(self, handle: str, start: date, end: date, *,
                              min_count: int, limit: int) -> list[PopularQuery]:
        self._check()
        found: dict[str, list[SearchRecord]] = {}
        for s in self._scope(handle, start, end, EVERY_SEARCH):
            if s.query:
                found.setdefault(s.query, []).append(s)
        ranked = sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return [PopularQuery(q, len(r), half_up(Fraction(sum(s.nb_hits for s in r), len(r))))
                for q, r in ranked if len(r) >= min_count][:limit]

    def _by_day(self, handle: str, start: date, end: date, segment: Segment,
                kind: str) -> list[DayClicks]:
        events = self._per_search(handle, start)
        days: dict[date, list[Counter[str]]] = {}
        for s in self._scope(handle, start, end, segment):
            if s.query_id:
                days.setdefault(s.day, []).append(events.get(s.query_id, Counter()))
        found = []
        for day, tracked in sorted(days.items()):
            f = self._figures(tracked)
            found.append(DayClicks(day, f.tracked, f.clicked, f.clicks) if kind == "click"
                         else DayClicks(day, f.tracked, f.converted, f.conversions))
        return found

    async def clicks_by_day(self, handle: str, start: date, end: date, *,
                            segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        self._check()
        return self._by_day(handle, start, end, segment, "click")

    async def conversions_by_day(self, handle: str, start: date, end: date, *,
                                 segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        self._check()
        return self._by_day(handle, start, end, segment, "conversion")

    async def click_positions(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayPosition]:
        self._check()
        tracked = {s.query_id for s in self.searches
                   if s.query_id and in_segment(s.tags, segment)}
        found: Counter[tuple[date, int]] = Counter()
        for e in self.events:
            day = utc_day(e.at)
            if (e.type == "click" and e.handle == handle and start <= day <= end
                    and (not segment or e.query_id in tracked)):
                found.update((day, p) for p in e.positions)
        return [DayPosition(day, p, n) for (day, p), n in sorted(found.items())]

    def _positions(self, handle: str, start: date, end: date, segment: Segment,
                   search: str | None = None) -> dict[str, list[int]]:
        """Per query: the positions clicked after its tracked searches."""
        query_of = {s.query_id: s.query for s in self._scope(handle, start, end, segment,
                                                             search) if s.query_id}
        found: dict[str, list[int]] = {}
        for e in self._events(handle, start):
            if e.type == "click" and e.query_id in query_of:
                found.setdefault(query_of[e.query_id], []).extend(e.positions)
        return found

    async def search_stats(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, segment: Segment = EVERY_SEARCH,
                           with_events: bool = False, order_by: str = "searchCount",
                           descending: bool = False) -> list[SearchStats]:
        self._check()
        events = self._per_search(handle, start)
        positions = self._positions(handle, start, end, segment)
        by_query: dict[str, list[SearchRecord]] = {}
        for s in self._scope(handle, start, end, segment):
            by_query.setdefault(s.query, []).append(s)
        stats = []
        for q, found in by_query.items():
            tracked = [events.get(s.query_id, Counter()) for s in found if s.query_id]
            figures = self._figures(tracked) if with_events else EventCounts()
            if with_events:
                clicked = positions.get(q, [])
                ranges = [0] * len(RANGES)
                for p in clicked:
                    ranges[next(i for i, (low, high) in enumerate(RANGES)
                                if low <= p and (high == -1 or p <= high))] += 1
                figures = msgspec.structs.replace(figures, positions=sum(clicked),
                                                  clicked_positions=len(clicked),
                                                  ranges=tuple(ranges))
            stats.append(SearchStats(
                query=q, count=len(found),
                nb_hits=half_up(Fraction(sum(s.nb_hits for s in found), len(found))),
                events=figures))

        def metric(s: SearchStats) -> Fraction | None:
            e = s.events
            part, whole = {"searchCount": (s.count, 1),
                           "clickThroughRate": (e.clicked, e.tracked),
                           "conversionRate": (e.converted, e.tracked),
                           "averageClickPosition": (e.positions, e.clicked_positions),
                           }[order_by]
            return Fraction(part, whole) if whole else None

        def key(s: SearchStats) -> tuple[bool, Fraction, bytes]:
            m = metric(s)
            value = Fraction(0) if m is None else (-m if descending else m)
            return m is None, value, s.query.encode()

        return sorted(stats, key=key)[offset:offset + limit]

    async def query_revenue(self, handle: str, start: date, end: date,
                            queries: Sequence[str], *,
                            segment: Segment = EVERY_SEARCH) -> list[Revenue]:
        self._check()
        totals: dict[tuple[str, str], float] = {}
        mine = [s for s in self._scope(handle, start, end, segment)
                if s.query_id and s.query in queries]
        for e in self._purchases(handle, start):
            if e.revenue is None or e.currency is None:
                continue
            for s in mine:
                if s.query_id in self._named(e):
                    key = (s.query, e.currency)
                    totals[key] = totals.get(key, 0.0) + e.revenue
        return [Revenue(q, c, v) for (q, c), v in sorted(totals.items())]

    def _hit_events(self, handle: str, start: date) -> dict[tuple[str, str], Counter[str]]:
        """Per (queryID, objectID): the events naming that object after that search."""
        found: dict[tuple[str, str], Counter[str]] = {}
        for e in self._events(handle, start):
            for i, hit in enumerate(e.object_ids):
                q = e.query_id or (e.object_query_ids[i] if i < len(e.object_query_ids)
                                   else None)
                if not q:
                    continue
                kinds = found.setdefault((q, hit), Counter())
                kinds[e.type] += 1
                if e.subtype:
                    kinds[e.subtype] += 1
        return found

    async def hit_stats(self, handle: str, start: date, end: date, *, limit: int,
                        offset: int = 0, segment: Segment = EVERY_SEARCH,
                        search: str | None = None,
                        with_events: bool = False) -> list[HitStats]:
        self._check()
        events = self._hit_events(handle, start)
        count: Counter[str] = Counter()
        tracked: dict[str, list[Counter[str]]] = {}
        for s in self._scope(handle, start, end, segment, search):
            for hit in s.hits:
                count[hit] += 1
                if s.query_id:
                    tracked.setdefault(hit, []).append(events.get((s.query_id, hit),
                                                                  Counter()))
        ranked = sorted(count.items(), key=lambda kv: (-kv[1], kv[0].encode()))
        return [HitStats(hit=h, count=n, events=self._figures(tracked.get(h, []))
                         if with_events else EventCounts())
                for h, n in ranked[offset:offset + limit]]

    async def hit_revenue(self, handle: str, start: date, end: date, hits: Sequence[str], *,
                          segment: Segment = EVERY_SEARCH,
                          search: str | None = None) -> list[Revenue]:
        self._check()
        totals: dict[tuple[str, str], float] = {}
        shown = Counter((s.query_id, hit) for s in self._scope(handle, start, end, segment,
                                                                search)
                        if s.query_id for hit in s.hits if hit in hits)
        for e in self._purchases(handle, start):
            if e.currency is None:
                continue
            for i, hit in enumerate(e.object_ids):
                q = e.query_id or (e.object_query_ids[i] if i < len(e.object_query_ids)
                                   else None)
                value = e.object_revenues[i] if i < len(e.object_revenues) else None
                if value is None and len(e.object_ids) == 1:
                    value = e.revenue
                if value is None or not q or not shown[(q, hit)]:
                    continue
                key = (hit, e.currency)
                totals[key] = totals.get(key, 0.0) + value * shown[(q, hit)]
        return [Revenue(h, c, v) for (h, c), v in sorted(totals.items())]

    async def filter_counts(self, handle: str, start: date, end: date, *, limit: int,
                            offset: int = 0, segment: Segment = EVERY_SEARCH,
                            search: str | None = None,
                            attribute: str | None = None) -> list[FilterCount]:
        self._check()
        found: Counter[tuple[str, str, str]] = Counter()
        for s in self._scope(handle, start, end, segment, search):
            for r in s.refinements:
                if attribute is None:
                    found[(r.attribute, "", "")] += 1
                elif r.attribute == attribute:
                    found[(r.attribute, r.operator, r.value)] += 1
        ranked = sorted(found.items(), key=lambda kv: (-kv[1], kv[0][0].encode(),
                                                       kv[0][2].encode(), kv[0][1].encode()))
        return [FilterCount(a, o, v, n) for (a, o, v), n in ranked[offset:offset + limit]]

    async def no_result_filters(self, handle: str, start: date, end: date, *, limit: int,
                                offset: int = 0, segment: Segment = EVERY_SEARCH,
                                search: str | None = None) -> list[FilterCombination]:
        self._check()
        found: Counter[tuple[tuple[str, str, str], ...]] = Counter(
            tuple((r.attribute, r.operator, r.value) for r in s.refinements)
            for s in self._scope(handle, start, end, segment, search)
            if s.nb_hits == 0 and s.refinements)
        ranked = sorted(found.items(), key=lambda kv: (-kv[1], msgspec.json.encode(kv[0])))
        return [FilterCombination(r, n) for r, n in ranked[offset:offset + limit]]

    async def last_update(self, handle: str) -> float | None:
        self._check()
        return max((s.at for s in self.searches if s.handle == handle), default=None)

    async def close(self) -> None:
        self.closed = True



class FakeEmbedder:
    """Embeds a text as the counts of the letters a to e, made unit length (so that texts
    sharing letters are near); ``fail`` raises it instead, ``delay`` waits first. Records
    every call."""

    def __init__(self, *, fail: Exception | None = None, delay: float = 0.0) -> None:
        self.fail = fail
        self.delay = delay
        self.calls: list[list[str]] = []
        self.started = False
        self.closed = False

    @property
    def model(self) -> str:
        return "fake-letters"

    async def start(self) -> None:
        self.started = True

    @staticmethod
    def vector_of(text: str) -> tuple[float, ...]:
        counts = [float(text.lower().count(letter)) for letter in "abcde"]
        norm = sum(c * c for c in counts) ** 0.5 or 1.0
        return tuple(c / norm for c in counts)

    async def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        self.calls.append(list(texts))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.fail is not None:
            raise self.fail
        return [self.vector_of(text) for text in texts]

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
    from searchport.ports.embedder import EmbedderPort
    from searchport.ports.engine import SearchEnginePort

    _fake_engine: SearchEnginePort = FakeEngine()
    _field_facet_engine: SearchEnginePort = FieldFacetEngine(values_by_field={})
    _echo_engine: SearchEnginePort = EchoEngine()
    _failing_engine: SearchEnginePort = FailingEngine(RuntimeError())
    _fake_cache: CachePort = FakeCache()
    _unreachable_cache: CachePort = UnreachableCache()
    _fake_analytics_store: AnalyticsStore = FakeAnalyticsStore()
    _fake_embedder: EmbedderPort = FakeEmbedder()
