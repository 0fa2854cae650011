"""Custom ranking on the embedded engine: equally relevant hits in the handle's order.

At build time every document gets one number, its rank weight (``RANK_WEIGHT_FIELD``),
which decreases strictly along the ``customRanking`` order (ties: source order; documents
without a value last). The text query scores a document with a whole-number relevance tier
(``text_query``); a search multiplies it by ``log2(2 + weight)`` (tantivy's
``weight_by_field``), a factor within ``[1, 1 + 2**-12]``: a higher tier stays above a lower
one and equal tiers come out in ranking order. The factor's resolution in tantivy's
32-bit scores is coarse (about a thousand steps), so the page is settled here, exactly:
by (tier, weight) over enough of the best-scored hits that no hit left out could come
before the page (``_settled``).
"""

from __future__ import annotations

import contextlib
import math
import operator
import struct
from collections.abc import Iterable
from typing import Any

import tantivy

from searchport.adapters.tantivy import values
from searchport.adapters.tantivy.documents import field_value
from searchport.adapters.tantivy.schema import RANK_WEIGHT_FIELD, IndexLayout, RankingSpec
from searchport.adapters.tantivy.source import SourceRow

_BEST_FIRST = operator.itemgetter(0, 1)
SPREAD = 2.0**-12  # the largest factor is 1 + SPREAD
# (total, the page, every match when the search saw them all)
Page = tuple[int, list[tuple[float | None, Any]], list[Any] | None]


def _key_value(spec: RankingSpec, row: dict[str, Any]) -> float | None:
    value = field_value(row, spec.name)
    if isinstance(value, list):
        value = next((v for v in value if v is not None), None)
    if value is None:
        return None
    with contextlib.suppress(values.BadValue, ValueError, OverflowError):
        if spec.type == "date":
            return values.as_date(value).timestamp()
        return float(values.as_integer(value) if spec.type == "integer"
                     else values.as_float(value))
    return None


def rank_weights(layout: IndexLayout, rows: Iterable[SourceRow]) -> dict[int, float]:
    """Each row's rank weight, by its position in the source (empty: no custom ranking)."""
    if not layout.ranking:
        return {}
    keyed = []
    for seq, source in enumerate(rows):
        key: list[tuple[int, float]] = []
        for spec in layout.ranking:
            found = None if source.row is None else _key_value(spec, source.row)
            key.append((1, 0.0) if found is None else
                       (0, -found if spec.order == "desc" else found))
        keyed.append((key, seq))
    keyed.sort()
    last = max(1, len(keyed) - 1)
    return {seq: weight_of(rank, last) for rank, (_, seq) in enumerate(keyed)}


def weight_of(rank: int, last: int) -> float:
    """The weight whose factor ``log2(2 + weight)`` is ``1 + SPREAD`` for the first rank and
    ``1`` for the last, strictly decreasing in between."""
    return float(2.0 ** (1.0 + SPREAD * (1.0 - rank / last)) - 2.0)


_FLOAT32 = struct.Struct("f")


# Below this score, dividing by a factor (at most 1 + SPREAD) moves a score by less than a
# quarter: a score within a quarter of a whole number rounds to it either way.
_SMALL = 0.25 / SPREAD


def _factor(weight: float) -> float:
    """What tantivy multiplies a score by: log2 of ``2 + weight`` rounded to 32 bits."""
    single: float = _FLOAT32.unpack(_FLOAT32.pack(2.0 + weight))[0]
    return math.log2(single)


def fetched(want: int) -> int:
    """How many hits a page of ``want`` first asks for: enough to settle it most of the
    time, and to see every match of a narrow query (its aggregations then name them)."""
    return max(2 * want, want + 32)


def ranked_page(searcher: tantivy.Searcher, query: tantivy.Query, offset: int, limit: int
                ) -> Page:
    """The page by (relevance tier, custom ranking), best first."""
    want = offset + limit
    if limit <= 0:  # tantivy panics on a limit of 0
        counted = searcher.search(query, limit=1, count=True)
        return getattr(counted, "count", None) or 0, [], None
    fetch = fetched(want)
    while True:
        found = searcher.search(query, limit=fetch, count=True,
                                weight_by_field=RANK_WEIGHT_FIELD)
        total: int = getattr(found, "count", None) or 0
        hits: list[tuple[float, Any]] = list(found.hits)
        weights = searcher.fast_field_values(RANK_WEIGHT_FIELD, [a for _, a in hits])
        keyed = []
        for (score, address), weight in zip(hits, weights, strict=True):
            w = float(weight or 0.0)
            tier = round(score)
            if score >= _SMALL or abs(score - tier) >= 0.25:  # else the factor cannot move it
                tier = round(score / _factor(w))
            # negated, so that an ascending (stable) sort puts the best first
            keyed.append((-tier, -w, score, address))
        keyed.sort(key=_BEST_FIRST)
        if len(hits) >= total or _settled(keyed[:want], hits[-1][0]):
            every = [address for _, address in hits] if len(hits) >= total else None
            return total, [(-tier, address) for tier, _, _, address in keyed[offset:want]], every
        fetch *= 4


def _settled(page: list[tuple[int, float, float, Any]], last_score: float) -> bool:
    """Whether no hit scored at most ``last_score`` (every hit not fetched) can come before
    any of ``page`` (negated tier and weight, score, address). Such a hit has a tier of at
    most ``last_score`` (factors are >= 1): a page hit of a higher tier is ahead of it; one
    of a tier at least ``floor(last_score)`` and a higher score has the higher factor when
    their tiers are equal."""
    floor = math.floor(last_score)
    return all(-tier > last_score or (score > last_score and -tier >= floor)
               for tier, _, score, _ in page)
