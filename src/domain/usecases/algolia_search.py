"""AlgoliaSearch: the use case behind Algolia's search calls (several queries on any handles,
answered in request order; one failing query fails the call, the first in request order).

The protocol itself, its parameters and the shape of its answers, belongs to the inbound
adapter ``entrypoints/algolia``. It hands this use case one ``ProtocolQuery`` per query,
which plans a domain query against its handle (``SearchQuery``, or ``FacetHitsQuery`` for a
search of facet values) and shapes the domain result. What stays here is the product's: the
handle lookup, the rules, the engine call and its timing, facet values filtered, ordered and
counted, the exhaustiveness the engine's capabilities allow, and the query log.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.analytics.records import Tracking, Visitor
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.results import EngineResult, FacetValue
from searchport.domain.rules.effects import RulePlan
from searchport.domain.rules.search import RuleAsk, RuleOutcome, rule_plan, search_with_rules
from searchport.domain.semantic import with_meaning
from searchport.domain.shaping import order_facet_values

MAX_FACET_VALUES = 100  # facet values asked of an engine at most (facet stats, facetHits)

class FacetHitsQuery(msgspec.Struct, frozen=True, kw_only=True):
    """Values of the facet ``field`` containing ``needle`` (case-insensitive), counted under
    ``filters`` and, when ``text`` is not blank, among the records matching it."""

    field: str  # real name
    needle: str
    limit: int
    filters: tuple[Filter, ...] = ()
    text: str = ""
    optional_words: tuple[str, ...] = ()  # of ``text``; the others must all match


class FacetHits(msgspec.Struct, frozen=True, kw_only=True):
    values: list[FacetValue]  # most frequent first, at most ``limit``
    exhaustive: bool  # every matching record counted, exactly


class SearchPlan(Protocol):
    """One planned search: the domain query, and how the protocol shapes its result."""

    @property
    def query(self) -> SearchQuery: ...

    @property
    def rule_ask(self) -> RuleAsk:
        """What the search asks of the handle's rules, and its page."""
        ...

    @property
    def fallback_words(self) -> tuple[tuple[str, ...], ...]:
        """Optional words to try in turn, while the search finds nothing."""
        ...

    @property
    def relevancy_strictness(self) -> int | None:
        """What the search asks of a virtual replica's relevant sort (``None``: its own)."""
        ...

    def shape(self, result: EngineResult, took_ms: int, exact_facet_counts: bool,
              rules: RuleOutcome | None = None) -> Any:
        """The protocol's answer (msgspec-encodable); ``exact_facet_counts``: the engine
        counts every facet value exactly; ``rules``: what the applied rules did."""
        ...

    @property
    def tracking(self) -> Tracking:
        """What the query's analytics parameters ask."""
        ...

    def hits_of(self, answer: Any) -> int:
        """The hit count of an answer ``shape`` made."""
        ...

    def words_only(self, answer: Any) -> Any:
        """An answer ``shape`` made, marked as answered by words alone though the search
        asked for meaning (its ``degraded``: docs/semantic.md)."""
        ...

    def answer_hits(self, answer: Any) -> Sequence[Mapping[str, Any]]:
        """The hits of an answer ``shape`` made, in order."""
        ...


class FacetHitsPlan(Protocol):
    @property
    def query(self) -> FacetHitsQuery: ...

    def shape(self, hits: FacetHits, took_ms: int) -> Any: ...


class ProtocolQuery(Protocol):
    """One query of a call: its handle, and its plan against the handle's entry."""

    @property
    def handle(self) -> str: ...

    def plan(self, entry: IndexEntry) -> SearchPlan | FacetHitsPlan: ...


class AlgoliaSearch:
    """Every query answered (as the protocol's answer struct) in request order."""

    def __init__(self, *, catalog: Catalog, recorder: AnalyticsRecorder | None = None) -> None:
        self._catalog = catalog
        self._recorder = recorder

    async def __call__(self, queries: tuple[ProtocolQuery, ...],
                       access: Access = FULL_ACCESS,
                       visitor: Visitor | None = None) -> list[Any]:
        """Every handle is checked against ``access`` before any query runs: one the key may
        not read refuses the whole call (as an unknown handle). Each search (not a search
        of facet values) goes to the query log, ``visitor`` saying who asked."""
        entries = [access.entry(self._catalog, q.handle) for q in queries]
        answers = await asyncio.gather(*(self._one(q, e, access, visitor)
                                         for q, e in zip(queries, entries, strict=True)),
                                       return_exceptions=True)
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
        return answers

    async def _one(self, query: ProtocolQuery, entry: IndexEntry, access: Access,
                   visitor: Visitor | None) -> Any:
        plan = query.plan(entry)
        forced = access.forced(entry)
        if isinstance(plan.query, FacetHitsQuery):
            facet_plan: Any = plan
            return await self._facet_hits(entry, facet_plan, forced)
        search_plan: SearchPlan = plan
        rules = None if entry.rules is None else await rule_plan(entry, search_plan.query,
                                                                  search_plan.rule_ask)
        answer = await self._search(entry, search_plan, forced, rules)
        if self._recorder is None:
            return answer
        asked = search_plan.query
        return self._recorder.searched(
            answer, handle=entry.handle, query=asked.text, tracking=search_plan.tracking,
            visitor=visitor, nb_hits=search_plan.hits_of(answer),
            hits=search_plan.answer_hits(answer),
            page=asked.offset // asked.limit if asked.limit else 0,
            filters=asked.filters, public=entry.fields.public)

    async def _search(self, entry: IndexEntry, plan: SearchPlan,
                      forced: tuple[Filter, ...], rules: RulePlan | None = None) -> Any:
        started = time.perf_counter()
        query = plan.query
        if forced:
            query = msgspec.structs.replace(query, filters=query.filters + forced)
        query, degraded = await with_meaning(entry, query)  # NeuralSearch
        result, outcome = await self._run(entry, plan, query, forced, rules)
        for optional in plan.fallback_words if result.total == 0 else ():
            relaxed = msgspec.structs.replace(query, optional_words=optional)
            result, outcome = await self._run(entry, plan, relaxed, forced, rules)
            if result.total:
                break
        took = round((time.perf_counter() - started) * 1000)
        answer = plan.shape(result, took, entry.engine.capabilities.exact_facet_counts, outcome)
        return plan.words_only(answer) if degraded else answer

    @staticmethod
    async def _run(entry: IndexEntry, plan: SearchPlan, query: SearchQuery,
                   forced: tuple[Filter, ...], rules: RulePlan | None
                   ) -> tuple[EngineResult, RuleOutcome | None]:
        search = entry.search(plan.relevancy_strictness)
        if rules is None:
            return await search(query), None
        ask = plan.rule_ask
        ruled = await search_with_rules(search, query, rules, page=ask.page,
                                        per_page=ask.per_page, forced=forced)
        return ruled.result, RuleOutcome(plan=rules, promoted=ruled.promoted)

    async def _facet_hits(self, entry: IndexEntry, plan: FacetHitsPlan,
                          forced: tuple[Filter, ...]) -> Any:
        """Without ``text`` the engine's facet-value search counts every record the filters
        select; with it the values come from the top ``MAX_FACET_VALUES`` facet values of
        that search, so the counts are not exhaustive."""
        query = plan.query
        if forced:
            query = msgspec.structs.replace(query, filters=query.filters + forced)
        started = time.perf_counter()
        found: list[FacetValue]
        if query.text.strip():
            result = await entry.engine.search(SearchQuery(
                text=query.text, limit=0, filters=query.filters, facets=(query.field,),
                max_facet_values=MAX_FACET_VALUES,
                search_fields=entry.fields.configured_weights,
                exact_total=entry.config.exact_totals, disjunctive_facets=False,
                all_words=True, optional_words=query.optional_words))
            every = result.facets.get(query.field, [])
            needle = query.needle.casefold()
            found = [v for v in every if needle in v.value.casefold()]
            exhaustive = len(every) < MAX_FACET_VALUES
        else:
            found = await entry.engine.facet_values(FacetValuesQuery(
                field=query.field, text=query.needle, limit=query.limit,
                filters=query.filters))
            exhaustive = True
        took = round((time.perf_counter() - started) * 1000)
        hits = FacetHits(values=order_facet_values(found, query.limit),
                         exhaustive=exhaustive and entry.engine.capabilities.exact_facet_counts)
        return plan.shape(hits, took)
