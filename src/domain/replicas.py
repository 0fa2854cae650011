"""Replicas: another order over a primary handle's index, as Algolia's replicas give.

A replica shares its primary's engine, index, fields and rules. A standard replica sorts
every match strictly by its ``sort`` keys (the engine sorts). A virtual replica applies
Algolia's relevant sort
(``relevancyStrictness``, algolia.com/doc/guides/managing-results/refine-results/sorting/
in-depth/relevant-sort), evaluated here the same way on every engine:

1. the engine ranks the matches by relevance, and the best ``maxHits`` are read (their ids,
   relevance scores and ranking fields only, ``CHUNK`` at a time, or the engine's largest
   page when smaller: ``Capabilities.max_page``);
2. a hit is kept when its score is at least ``strictness`` percent of the best score (0 keeps
   every hit read; a search without text scores every match alike, so all are kept);
3. the kept hits are ordered by the replica's ``customRanking`` (a hit without a value
   after those with one; ties keep the relevance order), and the page is cut from them;
4. the page's records are read whole (highlights included) by their ids.

Facet counts, stats and ``total`` cover every match, as on the primary; ``sorted_total`` is
the number of kept hits (Algolia's ``nbSortedHits``), the only ones paged through. On
either kind, a search with an order of its own (an explicit sort, or a distance ranking)
keeps it, as on the primary.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import msgspec

from searchport.domain.config import IndexConfig
from searchport.domain.fields import FieldMap
from searchport.domain.query import SearchQuery, SortClause
from searchport.domain.results import EngineResult, Hit

Searcher = Callable[[SearchQuery], Awaitable[EngineResult]]
CHUNK = 250  # hits read per engine call at most, the calls made at once


class RelevantSort(msgspec.Struct, frozen=True, kw_only=True):
    """A virtual replica's order: ``ranking`` in real field names."""

    ranking: tuple[SortClause, ...]
    strictness: int  # the default; a search may ask another (``relevancyStrictness``)
    max_hits: int


class Replica(msgspec.Struct, frozen=True, kw_only=True):
    primary: str  # its primary's handle
    sort: tuple[SortClause, ...] = ()  # a standard replica's keys, real names
    relevant: RelevantSort | None = None  # a virtual replica's order

    @property
    def virtual(self) -> bool:
        return self.relevant is not None


def replica_of(config: IndexConfig) -> Replica | None:
    """The replica a handle's config describes (``None``: a primary)."""
    if config.replica_of is None:
        return None
    fields = FieldMap(config.fields)
    relevant = None
    if config.relevant_sort is not None:
        relevant = RelevantSort(
            ranking=tuple(SortClause(field=fields.real(k.field), order=k.order)
                          for k in config.custom_ranking),
            strictness=config.relevant_sort.strictness,
            max_hits=min(config.relevant_sort.max_hits, config.max_result_window))
    return Replica(primary=config.replica_of, relevant=relevant,
                   sort=tuple(SortClause(field=fields.real(k.field), order=k.order)
                              for k in config.sort))


def replica_searcher(search: Searcher, replica: Replica | None,
                     strictness: int | None = None, max_page: int | None = None) -> Searcher:
    """``search`` (the engine's) as the replica orders its hits; ``strictness``: the
    search's ``relevancyStrictness`` (a virtual replica's own when ``None``); ``max_page``:
    the engine's largest page (``Capabilities.max_page``)."""
    if replica is None:
        return search
    relevant = replica.relevant
    if relevant is None:
        keys = replica.sort

        async def standard(query: SearchQuery) -> EngineResult:
            if query.sort or query.geo_sort is not None:
                return await search(query)
            return await search(msgspec.structs.replace(query, sort=keys))
        return standard
    cut = relevant.strictness if strictness is None else strictness
    chunk = min(CHUNK, max_page or CHUNK)

    async def virtual(query: SearchQuery) -> EngineResult:
        return await relevant_search(search, query, relevant, cut, chunk)
    return virtual


async def relevant_search(search: Searcher, query: SearchQuery, order: RelevantSort,
                          strictness: int, chunk: int = CHUNK) -> EngineResult:
    """The page ``query.offset``/``limit`` of the relevant hits (module docstring), the
    pool read ``chunk`` hits per call."""
    if query.ids is not None or query.sort or query.geo_sort is not None:
        return await search(query)  # records read by id, or an order of the search's own
    ranking = order.ranking
    light = msgspec.structs.replace(
        query, sort=(), highlight=False, highlight_fields=(), suggest_field=None,
        fields=tuple(dict.fromkeys(c.field for c in ranking)))
    first = min(order.max_hits, chunk)
    pool = await search(msgspec.structs.replace(light, offset=0, limit=first))
    rest = msgspec.structs.replace(  # the counts came with the first chunk
        light, facets=(), stats=(), histograms=(), geo_grid=None, exact_total=False)
    more = await asyncio.gather(*(
        search(msgspec.structs.replace(rest, offset=at, limit=min(chunk, order.max_hits - at)))
        for at in range(first, min(order.max_hits, pool.total), chunk)))
    every = [*pool.hits, *(h for r in more for h in r.hits)]
    kept = relevant_hits(every, strictness)
    ordered = ranked(kept, ranking)
    ids = tuple(h.id for h in ordered[query.offset:query.offset + query.limit])
    hits: list[Hit] = []
    if ids:
        page = await search(msgspec.structs.replace(
            query, offset=0, limit=len(ids), ids=ids, facets=(), stats=(), histograms=(),
            geo_grid=None, suggest_field=None, exact_total=False))
        found = {h.id: h for h in page.hits}
        hits = [found[i] for i in ids if i in found]
    return msgspec.structs.replace(pool, hits=hits, sorted_total=len(ordered))


def relevant_hits(hits: list[Hit], strictness: int) -> list[Hit]:
    """The hits (relevance order) whose score is at least ``strictness`` percent of the
    best; a hit without a score ranks with the best (a search without text)."""
    scores = [h.score for h in hits if h.score is not None]
    if not scores or strictness <= 0:
        return list(hits)
    best = max(scores)
    if best <= 0:
        return list(hits)
    return [h for h in hits if h.score is None or h.score * 100 >= best * strictness]


def ranked(hits: list[Hit], ranking: tuple[SortClause, ...]) -> list[Hit]:
    """``hits`` ordered by ``ranking`` (stable: ties keep their order); a hit without a
    value for a key comes after those with one, in either direction."""
    def key(hit: Hit) -> tuple[tuple[int, float], ...]:
        found = []
        for clause in ranking:
            value = rank_value(hit.source.get(clause.field))
            if value is None:
                found.append((1, 0.0))
            else:
                found.append((0, -value if clause.order == "desc" else value))
        return tuple(found)
    return sorted(hits, key=key)


def rank_value(value: Any) -> float | None:
    """A ranking field's value as a number: a number itself, a date as Unix seconds (an
    ISO-8601 text), a list by its first value; ``None`` when it has none."""
    if isinstance(value, list):
        value = next((v for v in value if v is not None), None)
    if isinstance(value, bool) or value is None:
        return float(value) if isinstance(value, bool) else None
    if isinstance(value, int | float):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            number = float(value)
            return number if math.isfinite(number) else None
        with contextlib.suppress(ValueError):
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    return None
