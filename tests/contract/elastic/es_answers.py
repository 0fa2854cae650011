"""Canned Elasticsearch/OpenSearch answers, shaped as the REST API documentation shows them.

Each builder returns the JSON body an engine sends; the shapes follow the reference pages
of the search API (``hits.total {value, relation}``, ``_shards``), the bucket aggregations
(terms, filter, nested, reverse_nested, histogram, geotile_grid), the metric aggregations
(geo_centroid, top_hits), the phrase suggester, the get document API, the get mapping API
and the error responses. Where the two products differ (the get API's ``_type`` in
OpenSearch 1.x, the security plugin's plain-text 401, the name of the rejected-execution
exception), the builder takes the engine name.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

INDEX = "cities"


# ---------------------------------------------------------------- search


def shards(total: int = 1) -> Json:
    return {"total": total, "successful": total, "skipped": 0, "failed": 0}


def hit(doc_id: str, source: Json | None, *, index: str = INDEX, score: float | None = 1.0,
        highlight: dict[str, list[str]] | None = None, sort: list[Any] | None = None) -> Json:
    """One entry of ``hits.hits``. A search sorted on a field has ``"_score": null`` and a
    ``sort`` array (the search API, "Sort search results")."""
    found: Json = {"_index": index, "_id": doc_id, "_score": score}
    if source is not None:
        found["_source"] = source
    if highlight is not None:
        found["highlight"] = highlight
    if sort is not None:
        found["sort"] = sort
    return found


def search(hits: list[Json] | None = None, *, total: Any = None, relation: str = "eq",
           aggregations: Json | None = None, suggest: Json | None = None,
           took: int = 3) -> Json:
    """A ``POST /<index>/_search`` answer. ``total`` defaults to the number of hits; pass
    an int to get the ``{"value", "relation"}`` object, or ``("plain", n)`` for the bare
    number older servers (and ``rest_total_hits_as_int``) send."""
    hits = hits or []
    if total is None:
        total = len(hits)
    if isinstance(total, tuple):
        total_json: Any = total[1]
    else:
        total_json = {"value": total, "relation": relation}
    scores = [h["_score"] for h in hits if isinstance(h.get("_score"), int | float)]
    answer: Json = {
        "took": took,
        "timed_out": False,
        "_shards": shards(),
        "hits": {
            "total": total_json,
            "max_score": max(scores) if scores else None,
            "hits": hits,
        },
    }
    if aggregations is not None:
        answer["aggregations"] = aggregations
    if suggest is not None:
        answer["suggest"] = suggest
    return answer


def empty_search() -> Json:
    return search([], total=0)


# ---------------------------------------------------------------- aggregations


def bucket(key: Any, doc_count: int, *, key_as_string: str | None = None, **subs: Any) -> Json:
    """A bucket of a terms or histogram aggregation, with any sub-aggregation results."""
    found: Json = {"key": key}
    if key_as_string is not None:
        found["key_as_string"] = key_as_string
    found["doc_count"] = doc_count
    found.update(subs)
    return found


def terms(buckets: list[Json], *, other: int = 0) -> Json:
    return {"doc_count_error_upper_bound": 0, "sum_other_doc_count": other, "buckets": buckets}


def single(doc_count: int, **subs: Any) -> Json:
    """A single-bucket aggregation (``filter``, ``nested``, ``reverse_nested``)."""
    return {"doc_count": doc_count, **subs}


def histogram(buckets: list[Json]) -> Json:
    return {"buckets": buckets}


def centroid(lat: float, lon: float, count: int) -> Json:
    """A ``geo_centroid`` result (the geo-centroid aggregation page)."""
    return {"location": {"lat": lat, "lon": lon}, "count": count}


def top_hits(hits: list[Json], total: int) -> Json:
    """A ``top_hits`` result: a full ``hits`` object, as in the search answer."""
    scores = [h["_score"] for h in hits if isinstance(h.get("_score"), int | float)]
    return {"hits": {"total": {"value": total, "relation": "eq"},
                     "max_score": max(scores) if scores else None, "hits": hits}}


def geotile(buckets: list[Json]) -> Json:
    """A ``geotile_grid`` result: buckets keyed ``"{zoom}/{x}/{y}"``."""
    return {"buckets": buckets}


def phrase_suggest(text: str, options: list[tuple[str, float]], *,
                   name: str = "phrase_suggestion") -> Json:
    """The ``suggest`` section of a search answer with one phrase suggester (the phrase
    suggester answers one entry for the whole text, options best first)."""
    return {name: [{
        "text": text,
        "offset": 0,
        "length": len(text),
        "options": [
            {"text": option, "highlighted": option, "score": score}
            for option, score in options
        ],
    }]}


# ---------------------------------------------------------------- documents and mappings


def doc_found(doc_id: str, source: Json, *, engine: str, index: str = INDEX) -> Json:
    """``GET /<index>/_doc/<id>`` for an existing document (200)."""
    found: Json = {"_index": index, "_id": doc_id}
    if engine == "opensearch":
        found["_type"] = "_doc"  # OpenSearch 1.x still names the type
    found.update({"_version": 1, "_seq_no": 0, "_primary_term": 1, "found": True,
                  "_source": source})
    return found


def doc_not_found(doc_id: str, *, engine: str, index: str = INDEX) -> Json:
    """``GET /<index>/_doc/<id>`` for a missing document (404 with ``found: false``)."""
    found: Json = {"_index": index, "_id": doc_id}
    if engine == "opensearch":
        found["_type"] = "_doc"
    found["found"] = False
    return found


def mapping(properties: Json, *, index: str = INDEX) -> Json:
    """``GET /<index>/_mapping``: index name -> ``{"mappings": {"properties": ...}}``."""
    return {index: {"mappings": {"properties": properties}}}


def text_with_keyword(sub: str = "keyword", **extra: Any) -> Json:
    """A string as a dynamic mapping indexes it: ``text`` with a ``keyword`` sub-field."""
    return {"type": "text", "fields": {sub: {"type": "keyword", "ignore_above": 256}}, **extra}


CITY_PROPERTIES: Json = {
    "name": {
        "type": "text",
        "fields": {
            "keyword": {"type": "keyword", "ignore_above": 256},
            "shingle": {"type": "text", "analyzer": "shingle_analyzer"},
        },
    },
    "description": {"type": "text"},
    "continent": {"type": "keyword"},
    "country": text_with_keyword(),
    "population": {"type": "long"},
    "area": {"type": "double"},
    "founded": {"type": "date"},
    "capital": {"type": "boolean"},
    "location": {"type": "geo_point"},
    "tags": {  # a nested type found in the mapping (no nestedPath in the config)
        "type": "nested",
        "properties": {"label": {"type": "keyword"}, "weight": {"type": "integer"}},
    },
    "landmarks": {  # declared nested in the config (nestedPath); mapped as nested too
        "type": "nested",
        "properties": {"kind": {"type": "keyword"}, "title": text_with_keyword(),
                       "height": {"type": "integer"}, "location": {"type": "geo_point"}},
    },
}


def city_mapping(index: str = INDEX) -> Json:
    return mapping(CITY_PROPERTIES, index=index)


# ---------------------------------------------------------------- error bodies


def error(kind: str, reason: str, status: int, *, root: list[Json] | None = None,
          **extra: Any) -> Json:
    """An error answer: ``{"error": {"root_cause": [...], "type", "reason", ...}, "status"}``."""
    cause = {"type": kind, "reason": reason, **extra}
    return {
        "error": {"root_cause": [cause] if root is None else root, **cause},
        "status": status,
    }


def search_phase_failure(root_type: str, root_reason: str, *, status: int = 400,
                         index: str = INDEX) -> Json:
    """``search_phase_execution_exception``: "all shards failed", the real problem in
    ``root_cause`` and in each ``failed_shards[].reason``."""
    cause = {"type": root_type, "reason": root_reason}
    return {
        "error": {
            "root_cause": [dict(cause, index=index)],
            "type": "search_phase_execution_exception",
            "reason": "all shards failed",
            "phase": "query",
            "grouped": True,
            "failed_shards": [
                {"shard": 0, "index": index, "node": "dGlZ1x8yQwC3ZKzY6u8gGA",
                 "reason": dict(cause, index=index)}
            ],
            "caused_by": {"type": root_type, "reason": root_reason},
        },
        "status": status,
    }


TEXT_SORT_REASON = (
    "Text fields are not optimised for operations that require per-document field data "
    "like aggregations and sorting, so these operations are disabled by default. Please use "
    "a keyword field instead. Alternatively, set fielddata=true on [description] in order to "
    "load field data by uninverting the inverted index. Note that this can use significant "
    "memory."
)


def text_sort_failure(index: str = INDEX) -> Json:
    """Sorting or aggregating on a ``text`` field (400)."""
    return search_phase_failure("illegal_argument_exception", TEXT_SORT_REASON, index=index)


def parsing_exception(reason: str = "unknown query [matchh]", line: int = 1,
                      col: int = 20) -> Json:
    """A malformed query body (400)."""
    return {
        "error": {
            "root_cause": [{"type": "parsing_exception", "reason": reason,
                            "line": line, "col": col}],
            "type": "parsing_exception",
            "reason": reason,
            "line": line,
            "col": col,
            "caused_by": {"type": "named_object_not_found_exception",
                          "reason": f"[{line}:{col}] unknown field [matchh]"},
        },
        "status": 400,
    }


def security_401(engine: str) -> tuple[Json | str, dict[str, str]]:
    """A request with missing or wrong credentials: Elasticsearch's ``security_exception``
    with its ``WWW-Authenticate`` challenges; OpenSearch's security plugin answers a plain
    ``Unauthorized``."""
    if engine == "opensearch":
        return "Unauthorized", {"WWW-Authenticate": 'Basic realm="OpenSearch Security"',
                                "Content-Type": "text/plain; charset=UTF-8"}
    challenge = {"WWW-Authenticate": ['Basic realm="security" charset="UTF-8"', "ApiKey"]}
    body = error("security_exception",
                 "unable to authenticate user [searchport] for REST request [/cities/_search]",
                 401, header=challenge)
    return body, {"WWW-Authenticate": 'Basic realm="security" charset="UTF-8"'}


def security_403(engine: str) -> Json:
    """Valid credentials without the privilege to read the index."""
    if engine == "opensearch":
        reason = ("no permissions for [indices:data/read/search] and User [name=searchport, "
                  "backend_roles=[], requestedTenant=null]")
    else:
        reason = ("action [indices:data/read/search] is unauthorized for user [searchport] "
                  "with effective roles [reader] on indices [cities], this action is granted "
                  "by the index privileges [read,all]")
    return error("security_exception", reason, 403)


def index_not_found(index: str = INDEX) -> Json:
    details: Json = {"resource.type": "index_or_alias", "resource.id": index,
                     "index_uuid": "_na_", "index": index}
    return error("index_not_found_exception", f"no such index [{index}]", 404, **details)


def rejected_429(engine: str) -> Json:
    """The search thread pool's queue is full."""
    kind = ("rejected_execution_exception" if engine == "opensearch"
            else "es_rejected_execution_exception")
    return error(kind, "rejected execution of org.elasticsearch.action.search.FetchSearchPhase "
                 "on EsThreadPoolExecutor[name = node-1/search, queue capacity = 1000]", 429)


def unavailable_503() -> Json:
    """No shard copy could answer (a red index, a node restarting)."""
    return {
        "error": {
            "root_cause": [],
            "type": "search_phase_execution_exception",
            "reason": "all shards failed",
            "phase": "query",
            "grouped": True,
            "failed_shards": [],
        },
        "status": 503,
    }
