"""Typesense answers to domain results; the inverse of ``translate.py``.

- ``objectID`` is the document's ``id``; ``_index`` the collection.
- ``_score`` is Typesense's ``text_match``: one large integer packing, from the most
  significant bits down, the number of query words matched, typos, word proximity, the best
  field's weight and more; higher is better, comparable within one query only. A search
  without text has none (``null``).
- Highlights come from the ``highlights`` list (``snippet``, or ``snippets`` for an array
  field, which holds only the matching elements). Typesense returns the document text as is,
  so each snippet is HTML-escaped here and the private-use tags of ``translate`` become
  ``<mark>``/``</mark>``; a snippet without a mark is no highlight.
- Facet values are text: booleans ``true``/``false``, and on the fields the config types
  ``date`` (stored as ``int64`` Unix seconds) ISO-8601 UTC date-times, never the numbers.

An answer of an unexpected shape raises ``UnreadableAnswer``, which the engine turns into a
502: a gateway never guesses at what an engine meant.
"""

from __future__ import annotations

import html
import struct
from collections.abc import Iterable, Mapping
from typing import Any

from searchport.adapters.network.answers import UnreadableAnswer as UnreadableAnswer
from searchport.adapters.network.answers import as_list as _list
from searchport.adapters.network.answers import iso_date as iso_date
from searchport.adapters.network.answers import mapping as _mapping
from searchport.adapters.network.answers import text as _text
from searchport.adapters.typesense.translate import MARK_END, MARK_START
from searchport.domain.results import FacetValue, FieldStats, Hit

Json = Mapping[str, Any]


def hits(answer: Json, collection: str, *, skip: int, limit: int,
         highlight_fields: frozenset[str], drop_id: bool) -> list[Hit]:
    raw = _list(answer.get("hits", []), "hits")[skip: skip + limit]
    return [hit(r, collection, highlight_fields=highlight_fields, drop_id=drop_id) for r in raw]


def hit(raw: Any, collection: str, *, highlight_fields: frozenset[str] = frozenset(),
        drop_id: bool = False) -> Hit:
    raw = _mapping(raw, "hit")
    source = dict(_mapping(raw.get("document"), "hit.document"))
    doc_id = source.pop("id", "") if drop_id else source.get("id", "")
    score = raw.get("text_match")
    return Hit(
        id=str(doc_id),
        index=collection,
        score=float(score) if isinstance(score, int | float) and not isinstance(score, bool)
        else None,
        source=source,
        highlights=highlights(raw.get("highlights"), highlight_fields) if highlight_fields
        else {},
    )


def document(answer: Any, collection: str) -> Hit:
    """A ``GET /collections/<c>/documents/<id>`` answer."""
    source = dict(_mapping(answer, "document"))
    return Hit(id=str(source.get("id", "")), index=collection, source=source)


def highlights(raw: Any, wanted: frozenset[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for entry in raw if isinstance(raw, list) else []:
        if not isinstance(entry, Mapping) or entry.get("field") not in wanted:
            continue
        snippets = entry.get("snippets")
        if not isinstance(snippets, list):
            snippets = [entry.get("snippet")]
        marked = [mark(s) for s in snippets if isinstance(s, str) and MARK_START in s]
        if marked:
            found[str(entry["field"])] = marked
    return found


def mark(snippet: str) -> str:
    """HTML-escaped text with only ``<mark>``/``</mark>`` added."""
    return html.escape(snippet).replace(MARK_START, "<mark>").replace(MARK_END, "</mark>")


def total(answer: Json) -> int:
    found = answer.get("found", 0)
    if isinstance(found, int) and not isinstance(found, bool):
        return found
    raise UnreadableAnswer("found is not a number")


def field_stats(answer: Json, name: str, single_precision: bool = False) -> FieldStats | None:
    """The ``stats`` Typesense gives with a numeric facet's counts (min, max, avg, sum over
    every value in the matching documents; ``total_values`` is the number of *distinct*
    values); ``None`` when no value matched. The values counted are ``sum / avg``, which is
    exact (avg is computed as sum / count), or unknown when avg is 0. A float field holds
    single-precision numbers: min and max are given as the shortest decimal of that float
    (19.99, not 19.989999771118164)."""
    for group in _list(answer.get("facet_counts", []), "facet_counts"):
        group = _mapping(group, "facet_counts entry")
        if str(group.get("field_name")) != name:
            continue
        stats = _mapping(group.get("stats", {}), "stats")
        if "min" not in stats:
            return None
        low, high, avg, total = (_number(stats.get(k), k) for k in ("min", "max", "avg", "sum"))
        if single_precision:
            low, high = _single(low), _single(high)
        return FieldStats(min=low, max=high, avg=avg, sum=total,
                          count=round(total / avg) if avg else None)
    return None


def _number(value: Any, what: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise UnreadableAnswer(f"stats.{what} is not a number")
    return float(value)


def _single(value: float) -> float:
    """The shortest decimal that reads back as the same single-precision float."""
    packed = struct.pack("<f", value)
    for digits in range(1, 10):
        shortest = float(f"{value:.{digits}g}")
        if struct.pack("<f", shortest) == packed:
            return shortest
    return value


def facet_counts(answer: Json, dates: frozenset[str] = frozenset()) -> dict[str, list[FacetValue]]:
    """Every facet of one search answer, as Typesense ordered them (by count); the values of
    ``dates`` (fields holding Unix seconds) as ISO-8601."""
    facets: dict[str, list[FacetValue]] = {}
    for group in _list(answer.get("facet_counts", []), "facet_counts"):
        group = _mapping(group, "facet_counts entry")
        name = str(group["field_name"])
        text = iso_date if name in dates else _text
        counts = (_mapping(c, "count") for c in _list(group.get("counts", []), "counts"))
        facets[name] = [FacetValue(value=text(c["value"]), count=int(c["count"])) for c in counts]
    return facets


def exact_top(values: list[FacetValue], budget: int, limit: int) -> bool:
    """Whether the best ``limit`` values by count then value are known from the ``budget``
    values Typesense returned (by count, ties in no particular order): yes when it returned
    fewer, or when every value left out counts less than the ``limit``-th best."""
    if len(values) < budget or len(values) <= limit:
        return True
    ordered = sorted(values, key=lambda v: (-v.count, v.value))
    return ordered[-1].count < ordered[limit - 1].count


def matching_values(answers: Iterable[Json], field: str, text: str,
                    dates: frozenset[str] = frozenset()) -> list[FacetValue]:
    """The values of ``field`` in every answer that contain ``text``, ignoring case (a date
    as the ISO-8601 text the client sees)."""
    needle = text.casefold()
    found: dict[str, FacetValue] = {}
    for answer in answers:
        for value in facet_counts(answer, dates).get(field, []):
            if needle in value.value.casefold():
                found.setdefault(value.value, value)
    return list(found.values())


def multi_search_results(answer: Any, expected: int) -> list[Json]:
    results = _list(_mapping(answer, "multi_search answer").get("results"), "results")
    if len(results) != expected:
        raise UnreadableAnswer("multi_search answered a different number of searches")
    return [_mapping(r, "result") for r in results]
