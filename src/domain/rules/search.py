"""One search with the applied rules' plan: the edited query and added filters, hidden
records left out, promoted records placed page by page (``paging``).

Hidden and promoted records are left out of the engine's search by their ids
(``SearchQuery.excluded_ids``, which every engine adapter expresses in its own terms); the
promoted ones are fetched by id (``SearchQuery.ids``) in a second search run beside it
(with the search's filters when the rule asked ``filterPromotes``, with a key's forced
filters always), and placed into the page. The promoted records that match the search
(its text and filters) are counted in its facets, stats and histograms by a third search,
of those records only, whose figures are added to the others' (``tallies``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.replicas import Searcher
from searchport.domain.results import EngineResult, Hit
from searchport.domain.rules.effects import Promotion, RulePlan
from searchport.domain.rules.paging import Window, organic_window, place
from searchport.domain.rules.ruleset import RuleQuery, selected_values
from searchport.domain.rules.tallies import added_up
from searchport.domain.rules.text import FacetValues, keys

if TYPE_CHECKING:
    from searchport.domain.catalog import IndexEntry
    from searchport.ports.engine import SearchEnginePort

MAX_FACET_VALUES = 1000  # values of one attribute a {facet:...} placeholder may take


class RuleAsk(msgspec.Struct, frozen=True, kw_only=True):
    """What a search asks of the rules (``enableRules``, ``ruleContexts``) and its page
    (0-based), by which promoted records are placed."""

    enabled: bool = True
    contexts: frozenset[str] = frozenset()
    page: int = 0
    per_page: int = 20


class RuleOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What the applied rules did to one search: the plan, and the promoted hits shown."""

    plan: RulePlan
    promoted: frozenset[str] = frozenset()


async def rule_plan(entry: IndexEntry, query: SearchQuery, ask: RuleAsk) -> RulePlan | None:
    """The plan of the handle's rules for ``query`` (its text and the facet values its own
    filters select); ``None`` when no rule applies."""
    rules = entry.rules
    if rules is None or not ask.enabled:
        return None
    facets = None if entry.facet_values is None else await entry.facet_values.values(
        entry.engine)
    found = rules.apply(RuleQuery(text=query.text, contexts=ask.contexts,
                                  selected=selected_values(query.filters)), facets)
    return found if found.applied else None


class RuledResult(msgspec.Struct, kw_only=True):
    result: EngineResult  # the page's hits (promoted ones placed) and the total
    promoted: frozenset[str] = frozenset()  # ids of the promoted hits shown


def ruled_query(query: SearchQuery, plan: RulePlan) -> SearchQuery:
    """``query`` with the rules' edited text and filters (nothing to place)."""
    if not plan.applied:
        return query
    return msgspec.structs.replace(query, text=plan.query,
                                   filters=query.filters + plan.filters)


async def search_with_rules(search: Searcher, query: SearchQuery, plan: RulePlan, *,
                            page: int, per_page: int,
                            forced: tuple[Filter, ...] = ()) -> RuledResult:
    """``search``: the handle's engine search (as its replica orders hits, if it is one);
    ``query``: the search as asked (filters include ``forced``), for page ``page`` of
    ``per_page`` hits, its window (``offset + limit``) ending where the engine's result
    window does; ``forced``: the filters a promoted record must match whatever the rules
    say (a key's)."""
    query = ruled_query(query, plan)
    if not plan.promoted and not plan.hidden:
        return RuledResult(result=await search(query))
    promoted_ids = tuple(p.object_id for p in plan.promoted)
    window = organic_window(page, per_page, len(plan.promoted))
    end = min(window.offset + window.limit, query.offset + query.limit)  # the result window
    window = Window(window.offset, max(0, end - window.offset))
    organic = msgspec.structs.replace(
        query, offset=window.offset, limit=window.limit,
        excluded_ids=tuple(dict.fromkeys((*query.excluded_ids, *plan.hidden, *promoted_ids))))
    searches = [search(organic)]
    for filtered in (False, True):
        ids = tuple(p.object_id for p in plan.promoted if p.filtered == filtered)
        if ids:
            searches.append(search(msgspec.structs.replace(
                query, text="", offset=0, limit=len(ids), sort=(), geo_sort=None,
                filters=query.filters if filtered else forced, ids=ids,
                facets=(), stats=(), histograms=(), geo_grid=None, suggest_field=None,
                exact_total=False)))
    # the promoted records that match the search count in its facets, stats, histograms
    tallied = bool(promoted_ids) and bool(query.facets or query.stats or query.histograms)
    if tallied:
        searches.append(search(msgspec.structs.replace(
            query, offset=0, limit=0, ids=promoted_ids, highlight=False, geo_grid=None,
            suggest_field=None)))
    organic_result, *fetched = await asyncio.gather(*searches)
    if tallied:
        organic_result = added_up(organic_result, fetched.pop(), query)
    found: dict[str, Hit] = {h.id: h for r in fetched for h in r.hits}
    present = [p for p in plan.promoted if p.object_id in found]
    sorted_total = organic_result.sorted_total  # a virtual replica pages through these
    pageable = organic_result.total if sorted_total is None else sorted_total
    shown = place(page, per_page, present, organic_result.hits, window, pageable)
    hits = [found[x.object_id] if isinstance(x, Promotion) else x for x in shown]
    result = msgspec.structs.replace(
        organic_result, hits=hits, total=organic_result.total + len(present),
        sorted_total=None if sorted_total is None else sorted_total + len(present))
    return RuledResult(result=result, promoted=frozenset(
        x.object_id for x in shown if isinstance(x, Promotion)))


class FacetValueCache:
    """The values ``{facet:...}`` placeholders may take, read from the engine (at most
    ``MAX_FACET_VALUES`` per attribute, the most frequent) and kept ``ttl`` seconds."""

    def __init__(self, attributes: frozenset[str], real: Callable[[str], str], *,
                 ttl: float, clock: Callable[[], float]) -> None:
        self._attributes = attributes
        self._real = real
        self._ttl = ttl
        self._clock = clock
        self._values: FacetValues = {}
        self._read_at: float | None = None
        self._lock = asyncio.Lock()

    async def values(self, engine: SearchEnginePort) -> FacetValues:
        if not self._attributes:
            return self._values
        now = self._clock()
        if self._read_at is not None and now - self._read_at < self._ttl:
            return self._values
        async with self._lock:
            if self._read_at is None or self._clock() - self._read_at >= self._ttl:
                self._values = await self._read(engine)
                self._read_at = self._clock()
        return self._values

    async def _read(self, engine: SearchEnginePort) -> FacetValues:
        found: dict[str, dict[tuple[str, ...], str]] = {}
        for attribute in sorted(self._attributes):
            values = await engine.facet_values(FacetValuesQuery(
                field=self._real(attribute), limit=MAX_FACET_VALUES))
            found[attribute] = {k: v.value for v in values if (k := keys(v.value))}
        return found
