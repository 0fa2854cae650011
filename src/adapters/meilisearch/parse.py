"""Meilisearch answers to domain results; the inverse of ``translate.py``.

An answer of an unexpected shape raises ``UnreadableAnswer``, which the engine turns into
a 502: a gateway never guesses at what an engine meant.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

from searchport.adapters.meilisearch.translate import POST, PRE, SearchPlan
from searchport.adapters.network.answers import UnreadableAnswer as UnreadableAnswer
from searchport.adapters.network.answers import as_list as _list
from searchport.adapters.network.answers import iso_date as iso_date
from searchport.adapters.network.answers import mapping as _mapping
from searchport.domain.query import SearchQuery
from searchport.domain.results import EngineResult, FacetValue, FieldStats, Hit

Json = Mapping[str, Any]

# keys Meilisearch adds to a hit; everything else is the document
HIT_METADATA = frozenset({
    "_formatted", "_rankingScore", "_rankingScoreDetails", "_matchesPosition",
    "_geoDistance", "_semanticScore", "_federation",
    "_vectors",  # reserved: the embeddings, which Meilisearch before 1.11 returned unasked
})


def search_result(answer: Json, plan: SearchPlan, query: SearchQuery, *, uid: str,
                  primary_key: str, dates: frozenset[str] = frozenset()) -> EngineResult:
    if plan.multi:
        results = _list(answer.get("results"), "results")
        if len(results) != 1 + len(plan.own_facets):
            raise UnreadableAnswer("results has the wrong length")
        main = _mapping(results[0], "results[0]")
        extra = {f: _mapping(r, "results[]") for f, r in zip(plan.own_facets, results[1:],
                                                              strict=True)}
    else:
        main, extra = answer, {}
    drop_key = query.fields is not None and primary_key not in query.fields
    hits = [
        hit(raw, uid=uid, primary_key=primary_key, highlight=query.highlight, drop_key=drop_key)
        for raw in _list(main.get("hits"), "hits")[plan.skip:]
    ]
    result = EngineResult(hits=hits, total=total(main, exact=query.exact_total))
    for field in query.facets:
        result.facets[field] = distribution(extra.get(field, main), field, dates)
    for field in query.stats:
        found = facet_stats(extra.get(field, main), field)
        if found is not None:
            result.stats[field] = found
    return result


def total(answer: Json, *, exact: bool) -> int:
    raw = answer.get("totalHits" if exact else "estimatedTotalHits")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    raise UnreadableAnswer("the total is not a number")


def hit(raw: Any, *, uid: str, primary_key: str, highlight: bool = False,
        drop_key: bool = False) -> Hit:
    raw = _mapping(raw, "hit")
    source = {k: v for k, v in raw.items() if k not in HIT_METADATA}
    key = source.get(primary_key)
    if drop_key:
        source.pop(primary_key, None)
    score = raw.get("_rankingScore")
    formatted = raw.get("_formatted")
    return Hit(
        id="" if key is None else str(key),
        index=uid,
        score=float(score) if _number(score) and math.isfinite(score) else None,
        source=source,
        highlights=highlights(formatted, source)
        if highlight and isinstance(formatted, Mapping) else {},
    )


def document(raw: Any, *, uid: str, primary_key: str, doc_id: str) -> Hit:
    found = hit(raw, uid=uid, primary_key=primary_key)
    return found if found.id else Hit(id=doc_id, index=uid, source=found.source)


# ---------------------------------------------------------------- highlights


def highlights(formatted: Json, source: Json) -> dict[str, list[str]]:
    """Field (dotted path) -> each of its values that has a match, HTML-escaped with
    ``<mark>`` around the matched words. A document whose own text holds a sentinel gets
    none: its marks could not be told from the engine's."""
    if _has_sentinel(source):
        return {}
    found: dict[str, list[str]] = {}
    _walk(formatted, "", found)
    return found


def _walk(value: Any, path: str, found: dict[str, list[str]]) -> None:
    if isinstance(value, str):
        if PRE in value:
            found.setdefault(path, []).append(render(value))
    elif isinstance(value, list):
        for item in value:
            _walk(item, path, found)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _walk(item, f"{path}.{key}" if path else str(key), found)


def render(formatted: str) -> str:
    return html.escape(formatted).replace(PRE, "<mark>").replace(POST, "</mark>")


def _has_sentinel(value: Any) -> bool:
    if isinstance(value, str):
        return PRE in value or POST in value
    if isinstance(value, list):
        return any(_has_sentinel(v) for v in value)
    if isinstance(value, Mapping):
        return any(_has_sentinel(k) or _has_sentinel(v) for k, v in value.items())
    return False


# ---------------------------------------------------------------- facets


def distribution(answer: Json, field: str,
                 dates: frozenset[str] = frozenset()) -> list[FacetValue]:
    """One field of ``facetDistribution`` (absent when no matching document has it); the
    values of ``dates`` (fields the config types date: Unix seconds) as ISO-8601."""
    facets = answer.get("facetDistribution") or {}
    counts = _mapping(facets, "facetDistribution").get(field) or {}
    text = iso_date if field in dates else str
    return [FacetValue(value=text(value), count=_count(count))
            for value, count in _mapping(counts, "facetDistribution[field]").items()]


def facet_stats(answer: Json, field: str) -> FieldStats | None:
    """``facetStats`` of one field: min and max of its numeric values in the matching
    documents (absent when none has one). Meilisearch gives nothing more, and avg, sum and
    count cannot be derived exactly: they stay unknown."""
    stats = _mapping(answer.get("facetStats") or {}, "facetStats").get(field)
    if stats is None:
        return None
    stats = _mapping(stats, "facetStats[field]")
    low, high = stats.get("min"), stats.get("max")
    if not isinstance(low, int | float) or not isinstance(high, int | float) or (
            isinstance(low, bool) or isinstance(high, bool)):
        raise UnreadableAnswer("facetStats min and max must be numbers")
    return FieldStats(min=float(low), max=float(high))


def facet_hits(answer: Json) -> list[FacetValue]:
    return [
        FacetValue(value=str(_mapping(h, "facetHits[]")["value"]), count=_count(h["count"]))
        for h in _list(answer.get("facetHits"), "facetHits")
    ]


# ---------------------------------------------------------------- errors


def error_message(answer: Any) -> str:
    """``message`` of a Meilisearch error body ``{message, code, type, link}``."""
    if isinstance(answer, Mapping) and isinstance(answer.get("message"), str):
        return str(answer["message"])
    return ""


def error_code(answer: Any) -> str:
    if isinstance(answer, Mapping) and isinstance(answer.get("code"), str):
        return str(answer["code"])
    return ""


# ---------------------------------------------------------------- shapes


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _count(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise UnreadableAnswer("a facet count is not a number")
