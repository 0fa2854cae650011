"""Elasticsearch/OpenSearch answers to domain results; the inverse of ``translate.py``.

An answer of an unexpected shape raises ``UnreadableAnswer``, which the engine turns into
a 502: a gateway never guesses at what an engine meant.

A search answer is decoded straight into msgspec structs (``decode_search``): its hits, the
bulk of the bytes, become ``Hit``s without a dict per hit, a copy of each ``_source`` or a
walk over each ``highlight``. An answer whose hits do not fit those types (an ``_id`` that
is a number, a highlight that is not a list...) is read again the tolerant way, by
``search_result`` over the decoded JSON, so both read every answer alike.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from searchport.adapters.elastic.translate import (
    DOCS,
    GEO_GRID,
    INNER,
    facet_name,
    histogram_name,
    stats_name,
)
from searchport.adapters.network.answers import UnreadableAnswer as UnreadableAnswer
from searchport.adapters.network.answers import as_list as _list
from searchport.adapters.network.answers import mapping as _mapping
from searchport.domain.query import FacetValuesQuery, SearchQuery
from searchport.domain.results import (
    Bucket,
    EngineGeoCluster,
    EngineResult,
    FacetValue,
    FieldStats,
    Hit,
)
from searchport.domain.shaping import format_number

Json = Mapping[str, Any]


class _Total(msgspec.Struct):
    value: int | None = None


class _Hit(msgspec.Struct):
    id: str = msgspec.field(name="_id", default="")
    index: str = msgspec.field(name="_index", default="")
    score: float | None = msgspec.field(name="_score", default=None)
    source: dict[str, Any] = msgspec.field(name="_source", default_factory=dict)
    highlight: dict[str, list[str]] = msgspec.field(default_factory=dict)


class _Hits(msgspec.Struct):
    hits: list[_Hit] = msgspec.field(default_factory=list)
    total: _Total | int | None = None


class _SearchAnswer(msgspec.Struct):
    hits: _Hits
    aggregations: dict[str, Any] | None = None
    suggest: dict[str, Any] | None = None


_search_answer = msgspec.json.Decoder(_SearchAnswer)


def decode_search(content: bytes, query: SearchQuery) -> EngineResult:
    """``search_result`` of a search answer's bytes, decoded into structs when they fit."""
    try:
        answer = _search_answer.decode(content)
    except msgspec.ValidationError:
        return search_result(_json(content), query)
    except msgspec.DecodeError:
        raise UnreadableAnswer("the answer is not JSON") from None
    hits_part = answer.hits
    total = hits_part.total
    result = EngineResult(
        hits=[Hit(id=h.id, index=h.index,
                  score=h.score if h.score is None or math.isfinite(h.score) else None,
                  source=h.source, highlights=h.highlight)
              for h in hits_part.hits],
        total=(total.value or 0) if isinstance(total, _Total) else (total or 0),
    )
    _aggregations(result, answer.aggregations or {}, answer.suggest or {}, query)
    typed_prefix_marks(result, query)
    return result


def _json(content: bytes) -> Any:
    try:
        return msgspec.json.decode(content)
    except msgspec.DecodeError:
        raise UnreadableAnswer("the answer is not JSON") from None


def search_result(answer: Json, query: SearchQuery) -> EngineResult:
    hits_part = _mapping(answer.get("hits"), "hits")
    aggs = answer.get("aggregations") or {}
    result = EngineResult(
        hits=[hit(raw) for raw in _list(hits_part.get("hits", []), "hits.hits")],
        total=total(hits_part.get("total")),
    )
    _aggregations(result, _mapping(aggs, "aggregations"), answer.get("suggest") or {}, query)
    typed_prefix_marks(result, query)
    return result


_WORDS = re.compile(r"\w+")
_WHOLE_MARK = re.compile(r"<mark>(\w+)</mark>")


def typed_prefix_marks(result: EngineResult, query: SearchQuery) -> None:
    """Marks of the word being typed cut to its letters, as the other engines mark them:
    Elasticsearch's highlighter marks every word a ``bool_prefix`` matched whole
    (``<mark>Parma</mark>`` for "par" becomes ``<mark>Par</mark>ma``). A marked word that
    is a query word itself keeps its mark."""
    text = query.text
    if not (query.highlight and query.prefix_last_word and text[-1:].isalnum()):
        return
    words = [w.casefold() for w in _WORDS.findall(text)]
    typed, whole = words[-1], set(words[:-1])

    def cut(found: re.Match[str]) -> str:
        word = found.group(1)
        folded = word.casefold()
        if folded in whole or len(folded) <= len(typed) or not folded.startswith(typed) \
                or len(folded) != len(word):
            return found.group(0)
        return f"<mark>{word[:len(typed)]}</mark>{word[len(typed):]}"

    # a fragment can only change if it holds the typed letters (casefolding a fragment folds
    # each of its words): most fragments skip the substitution, the costly part;
    # the answer's own lists are changed in place, only where a fragment changes
    for item in result.hits:
        for fragments in item.highlights.values():
            for i, fragment in enumerate(fragments):
                if "<mark>" in fragment and typed in fragment.casefold():
                    fragments[i] = _WHOLE_MARK.sub(cut, fragment)


def _aggregations(result: EngineResult, aggs: Json, suggest: Any, query: SearchQuery) -> None:
    for position, field in enumerate(query.facets):
        node = aggs.get(facet_name(position))
        if node is not None:
            result.facets[field] = facet_buckets(node)
    for position, field in enumerate(query.stats):
        node = aggs.get(stats_name(position))
        found = field_stats(node) if node is not None else None
        if found is not None:
            result.stats[field] = found
    for position, spec in enumerate(query.histograms):
        node = aggs.get(histogram_name(position))
        if node is not None:
            result.histograms[spec.field] = histogram_buckets(node)
    if query.geo_grid is not None:
        node = aggs.get(GEO_GRID)
        result.geo_clusters = geo_clusters(node) if node is not None else []
    if query.suggest_field:
        result.suggestions = suggestions(suggest)


def hit(raw: Any) -> Hit:
    raw = _mapping(raw, "hit")
    score = raw.get("_score")
    source = raw.get("_source")
    highlights = raw.get("highlight")
    return Hit(
        id=str(raw.get("_id", "")),
        index=str(raw.get("_index", "")),
        score=float(score) if isinstance(score, int | float) and math.isfinite(score) else None,
        source=dict(source) if isinstance(source, Mapping) else {},
        highlights={
            str(name): [str(f) for f in fragments]
            for name, fragments in (highlights or {}).items()
            if isinstance(fragments, list)
        },
    )


def total(raw: Any) -> int:
    """``hits.total``: ``{"value": n, "relation": ...}`` or, from older servers, a number."""
    if isinstance(raw, Mapping):
        raw = raw.get("value")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if raw is None:
        return 0
    raise UnreadableAnswer("hits.total is not a number")


def _terms_node(node: Any) -> Json:
    """Descend ``filter`` and ``nested`` wrappers to the terms aggregation."""
    found = _mapping(node, "aggregation")
    while "buckets" not in found:
        found = _mapping(found.get(INNER), "aggregation")
    return found


def _documents(bucket: Json) -> Json:
    """Where a bucket's root documents are counted: its ``reverse_nested`` child when the
    field is inside nested objects, else the bucket itself."""
    docs = bucket.get(DOCS)
    return bucket if docs is None or not isinstance(docs, Mapping) else docs


def facet_buckets(node: Any) -> list[FacetValue]:
    return [
        FacetValue(value=bucket_value(b), count=int(_documents(b)["doc_count"]))
        for b in _list(_terms_node(node)["buckets"], "buckets")
    ]


def bucket_value(bucket: Json) -> str:
    """A facet value as text: booleans as ``true``/``false`` and dates as ISO-8601 (both
    from ``key_as_string``), numbers as JSON writes them."""
    key = bucket.get("key")
    if type(key) is str and "key_as_string" not in bucket:  # a keyword's value: most facets
        return key
    text = bucket.get("key_as_string")
    if isinstance(text, str):
        return _whole_seconds(text)
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        return format_number(key)
    return str(key)


_ZERO_FRACTION = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.0+(Z|[+-]\d\d:?\d\d)")
_UTC = ("Z", "+00:00", "+0000", "-00:00", "-0000")


def _whole_seconds(text: str) -> str:
    """A date written as every engine writes it (``2024-01-01T00:00:00Z``): the default
    date format's ``.000`` milliseconds and a zero offset dropped; other text unchanged."""
    match = _ZERO_FRACTION.fullmatch(text)
    if match is None:
        return text
    offset = match.group(2)
    return match.group(1) + ("Z" if offset in _UTC else offset)


def field_stats(node: Any) -> FieldStats | None:
    """A ``stats`` aggregation under its ``filter``/``nested`` wrappers; ``None`` when it
    counted no value (min and max are then null)."""
    found = _mapping(node, "aggregation")
    while "count" not in found:
        found = _mapping(found.get(INNER), "aggregation")
    count = found["count"]
    if not isinstance(count, int) or count <= 0:
        return None
    numbers: list[float] = []
    for key in ("min", "max", "avg", "sum"):
        number = found.get(key)
        if not isinstance(number, int | float) or isinstance(number, bool):
            raise UnreadableAnswer(f"a stats aggregation without a number as {key}")
        numbers.append(float(number))
    low, high, avg, total = numbers
    return FieldStats(min=low, max=high, avg=avg, sum=total, count=count)


def histogram_buckets(node: Any) -> list[Bucket]:
    return [
        Bucket(key=float(b["key"]), count=int(_documents(b)["doc_count"]))
        for b in _list(_terms_node(node)["buckets"], "buckets")
    ]


def geo_clusters(node: Any) -> list[EngineGeoCluster]:
    clusters = []
    for bucket in _list(_terms_node(node)["buckets"], "buckets"):
        location = (bucket.get("centroid") or {}).get("location") or {}
        documents = _documents(bucket)
        samples = ((documents.get("sample") or {}).get("hits") or {}).get("hits") or []
        clusters.append(EngineGeoCluster(
            lat=float(location.get("lat", math.nan)),
            lng=float(location.get("lon", math.nan)),
            count=int(documents["doc_count"]),
            key=str(bucket["key"]),
            hit=hit(samples[0]) if samples else None,
        ))
    return [c for c in clusters if math.isfinite(c.lat) and math.isfinite(c.lng)]


def suggestions(suggest: Json) -> list[str]:
    """Every option of the phrase suggester, best first, without repeats."""
    found: dict[str, None] = {}
    for entry in suggest.get("phrase_suggestion") or []:
        for option in entry.get("options") or []:
            text = option.get("text")
            if isinstance(text, str):
                found.setdefault(text)
    return list(found)


def facet_values(answer: Json, query: FacetValuesQuery, *, match_here: bool) -> list[FacetValue]:
    """``match_here``: the values were read in full (not a string field) and ``text`` is
    matched now; string fields were matched by the engine."""
    aggs = _mapping(answer.get("aggregations"), "aggregations")
    values = facet_buckets(aggs.get(facet_name(0)))
    if match_here and query.text:
        needle = query.text.casefold()
        values = [v for v in values if needle in v.value.casefold()]
    return values[: query.limit]


def document(answer: Json) -> Hit | None:
    """A ``GET /<index>/_doc/<id>`` answer."""
    if not answer.get("found"):
        return None
    return hit(answer)


def first_hit(answer: Json) -> Hit | None:
    """The first hit of an ``ids`` search, or ``None``."""
    hits = _list(_mapping(answer.get("hits"), "hits").get("hits", []), "hits.hits")
    return hit(hits[0]) if hits else None


def error_reason(answer: Any) -> str:
    """The most specific reason of an engine error body: the first root cause, else the
    cause, else the error's own reason."""
    if not isinstance(answer, Mapping):
        return ""
    error = answer.get("error")
    if isinstance(error, str):
        return error
    if not isinstance(error, Mapping):
        return ""
    for cause in error.get("root_cause") or []:
        if isinstance(cause, Mapping) and isinstance(cause.get("reason"), str):
            return str(cause["reason"])
    caused = error.get("caused_by")
    if isinstance(caused, Mapping) and isinstance(caused.get("reason"), str):
        return str(caused["reason"])
    reason = error.get("reason")
    return reason if isinstance(reason, str) else ""


def error_type(answer: Any) -> str:
    if isinstance(answer, Mapping) and isinstance(answer.get("error"), Mapping):
        kind = answer["error"].get("type")
        return kind if isinstance(kind, str) else ""
    return ""
