"""``SearchQuery`` and ``FacetValuesQuery`` to Elasticsearch/OpenSearch query DSL.

Pure functions of the query and a ``FieldCatalog``; ``parse.py`` reads the answers back.

Where each filter goes (disjunctive faceting in one request; ``filters.py`` writes each one):
- a filter on a field that is not a requested facet, and every ``AnyOf``/``Negated`` group:
  ``query.bool.filter``;
- a filter on a requested facet field: ``post_filter`` (hits and total follow it), plus the
  wrapper ``filter`` aggregation of every *other* facet; never its own facet's aggregation;
- stats of a field follow the filters as a facet on it would (with disjunctive facets a
  filter on a stats field is a ``post_filter`` clause too, left out of its own stats);
- histograms and geo clusters sit inside a wrapper holding every ``post_filter`` clause, so
  they count exactly the documents the hits come from.
An aggregation on a field inside ``nested`` objects runs in a ``nested`` wrapper and counts
root documents per bucket through a ``reverse_nested`` child named ``docs`` (a facet also picks
its top values by that count; a geo cluster takes its sample hit from there).
A ``stats`` aggregation on a nested field reads every nested object's value.
Aggregation names are positional (``facet_0``, ``stats_0``, ``histogram_0``, ``geo_grid``),
so no field name can collide with them; a wrapper's single child is always named ``inner``.
"""

from __future__ import annotations

import re
from typing import Any

from searchport.adapters.elastic.fields import FieldCatalog
from searchport.adapters.elastic.filters import all_of, filter_clause, nest
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import (
    FacetValuesQuery,
    FieldWeight,
    GeoBounds,
    GeoGridSpec,
    GeoSort,
    HistogramSpec,
    SearchQuery,
    SortClause,
    filter_field,
)

Json = dict[str, Any]

INNER = "inner"
DOCS = "docs"  # reverse_nested count of root documents under a nested facet bucket
GEO_GRID = "geo_grid"
CLUSTER_LIMIT = 1000  # most-populated tiles; a map shows a few hundred markers at most
FACET_ORDER = [{"_count": "desc"}, {"_key": "asc"}]
# A nested facet reports root documents per value, so the engine must pick its top values by
# that count: ordering by a single-bucket sub-aggregation orders by its doc_count.
NESTED_FACET_ORDER = [{DOCS: "desc"}, {"_key": "asc"}]
NON_STRING_FACET_SCAN = 1000  # values read to substring-match a numeric or boolean facet
HIGHLIGHT = {"pre_tags": ["<mark>"], "post_tags": ["</mark>"], "encoder": "html"}
MAX_SUGGESTIONS = 3


def facet_name(position: int) -> str:
    return f"facet_{position}"


def stats_name(position: int) -> str:
    return f"stats_{position}"


def histogram_name(position: int) -> str:
    return f"histogram_{position}"


# ---------------------------------------------------------------- filters (see filters.py)


def _wrap(clauses: list[Json], agg: Json) -> Json:
    """``agg`` counted over the documents matching every clause (bare when none)."""
    if not clauses:
        return agg
    return {"filter": all_of(clauses), "aggs": {INNER: agg}}


# ---------------------------------------------------------------- text


def text_query(query: SearchQuery, catalog: FieldCatalog) -> Json:
    """Any-word relevance over the searched fields; the last word also as a prefix.
    Fields inside nested objects are searched through a ``nested`` query per path. With
    ``all_words``: a ``bool`` whose ``must`` holds one such query per required word (each
    in any field; the last word of the text as a prefix), the whole text in ``should``
    for relevance. A required word the analyzer cuts in several terms (``wi-fi``,
    ``o'brien``) needs all of them in one field (``operator: and``), as the other engines
    need each part."""
    text = query.text.strip()
    if not text:
        return {"match_all": {}}
    match_type = "bool_prefix" if query.prefix_last_word else "best_fields"
    required = query.required_words()
    if required is None:
        return _any_word(text, match_type, query, catalog)
    last = text.split()[-1]
    return {"bool": {
        "must": [_any_word(word, match_type if word == last else "best_fields", query,
                           catalog, operator="and") for word in dict.fromkeys(required)],
        "should": [_any_word(text, match_type, query, catalog)]}}


def _any_word(text: str, match_type: str, query: SearchQuery, catalog: FieldCatalog,
              operator: str | None = None) -> Json:
    if not query.search_fields:
        return _multi_match(text, match_type, None, operator)
    by_path: dict[str | None, list[FieldWeight]] = {}
    for fw in query.search_fields:
        by_path.setdefault(catalog.nested_path(fw.field), []).append(fw)
    clauses = [
        _multi_match(text, match_type, fields, operator)
        if path is None
        else {"nested": {"path": path, "score_mode": "max",
                         "query": _multi_match(text, match_type, fields, operator)}}
        for path, fields in by_path.items()
    ]
    if len(clauses) == 1:
        return clauses[0]
    return {"bool": {"should": clauses, "minimum_should_match": 1}}


def _multi_match(text: str, match_type: str, fields: list[FieldWeight] | None,
                 operator: str | None = None) -> Json:
    body: Json = {"query": text, "type": match_type, "lenient": True}
    if operator is not None:
        body["operator"] = operator
    if fields is not None:
        body["fields"] = [_weighted(fw) for fw in fields]
    return {"multi_match": body}


def _weighted(fw: FieldWeight) -> str:
    if fw.weight == 1:
        return fw.field
    weight = int(fw.weight) if float(fw.weight).is_integer() else fw.weight
    return f"{fw.field}^{weight}"


# ---------------------------------------------------------------- search


def search_body(query: SearchQuery, catalog: FieldCatalog,
                ranking: tuple[SortClause, ...] = ()) -> Json:
    """``ranking``: the handle's custom ranking (``domain.ranking``): without a sort of
    the query's own, hits are sorted by ``_score`` then its fields (``sort_clauses``)."""
    main, post = filter_clauses(query, catalog)
    text = text_query(query, catalog)
    body: Json = {
        "from": query.offset,
        "size": query.limit,
        "query": {"bool": {"must": [text], "filter": main}} if main else text,
    }
    if query.exact_total:
        body["track_total_hits"] = True
    post_clauses = [c for clauses in post.values() for c in clauses]
    if post_clauses:
        body["post_filter"] = all_of(post_clauses)
    if query.sort or query.geo_sort is not None or ranking:
        body["sort"] = sort_clauses(query, catalog, ranking)
    if query.fields is not None:
        body["_source"] = list(query.fields)
    if query.highlight:
        body["highlight"] = highlight(query)
        if main:  # the highlighter would also mark the filters' terms (a keyword's value)
            body["highlight"]["highlight_query"] = text

    aggs = aggregations(query, catalog, post)
    if aggs:
        body["aggs"] = aggs
    if query.suggest_field and query.text.strip():
        body["suggest"] = suggest(query.text.strip(), query.suggest_field)
    return body


def filter_clauses(query: SearchQuery, catalog: FieldCatalog
                   ) -> tuple[list[Json], dict[str, list[Json]]]:
    """The query's filters as clauses: those of the query itself (``query.bool.filter``:
    the filters, the geo grid's bounds, ``ids``) and, by facet field, those that go to
    ``post_filter`` for disjunctive facets."""
    facet_fields = {*query.facets, *query.stats} if query.disjunctive_facets else set()
    main: list[Json] = []
    post: dict[str, list[Json]] = {}  # facet field -> its filters' clauses
    for f in query.filters:
        clause = filter_clause(f, catalog)
        field = filter_field(f)  # None: a group (AnyOf, Negated), never a facet's own
        if field is not None and field in facet_fields:
            post.setdefault(field, []).append(clause)
        else:
            main.append(clause)
    if query.geo_grid is not None and query.geo_grid.bounds is not None:
        main.append(bounds_clause(query.geo_grid.field, query.geo_grid.bounds, catalog))
    main += id_clauses(query)
    return main, post


def aggregations(query: SearchQuery, catalog: FieldCatalog,
                 post: dict[str, list[Json]]) -> Json:
    """Facets, stats, histograms and the geo grid, each under the post filters of the other
    facets (``post``: a facet field's filter clauses), so facet counts are disjunctive."""
    post_clauses = [c for clauses in post.values() for c in clauses]
    aggs: Json = {}
    for position, name in enumerate(query.facets):
        others = [c for field, clauses in post.items() if field != name for c in clauses]
        aggs[facet_name(position)] = _wrap(others, facet_agg(name, query.max_facet_values,
                                                             catalog))
    for position, name in enumerate(query.stats):
        others = [c for field, clauses in post.items() if field != name for c in clauses]
        aggs[stats_name(position)] = _wrap(others, stats_agg(name, catalog))
    for position, spec in enumerate(query.histograms):
        aggs[histogram_name(position)] = _wrap(post_clauses, histogram_agg(spec, catalog))
    if query.geo_grid is not None:
        aggs[GEO_GRID] = _wrap(post_clauses, geo_grid_agg(query.geo_grid, query.fields, catalog))
    return aggs


def id_clauses(query: SearchQuery) -> list[Json]:
    """``ids`` and ``excluded_ids`` as ``ids`` queries on the documents' ``_id``."""
    found: list[Json] = []
    if query.ids is not None:
        found.append({"ids": {"values": list(query.ids)}})
    if query.excluded_ids:
        found.append({"bool": {"must_not": [{"ids": {"values": list(query.excluded_ids)}}]}})
    return found


def facet_agg(field: str, size: int, catalog: FieldCatalog, **terms: Any) -> Json:
    """A terms aggregation on the field's exact form; inside its nested object when it has
    one, each bucket then counting, and the top values chosen by, root documents
    (``reverse_nested``), not objects."""
    path = catalog.nested_path(field)
    order = FACET_ORDER if path is None else NESTED_FACET_ORDER
    agg: Json = {"terms": {"field": catalog.exact(field), "size": size, "order": order,
                           **terms}}
    return _per_document(path, agg)


def _per_document(path: str | None, agg: Json, docs: Json | None = None) -> Json:
    """``agg`` inside its nested object, each bucket counting root documents in ``docs``
    (a ``reverse_nested`` aggregation, with ``docs`` sub-aggregations); bare when not nested."""
    if path is None:
        return agg
    back: Json = {"reverse_nested": {}}
    if docs:
        back["aggs"] = docs
    agg["aggs"] = {**agg.get("aggs", {}), DOCS: back}
    return {"nested": {"path": path}, "aggs": {INNER: agg}}


def stats_agg(field: str, catalog: FieldCatalog) -> Json:
    """min, max, avg, sum and count of a numeric field; inside its nested object when it has
    one (then over every nested object's value)."""
    path = catalog.nested_path(field)
    agg: Json = {"stats": {"field": field}}
    return agg if path is None else {"nested": {"path": path}, "aggs": {INNER: agg}}


def histogram_agg(spec: HistogramSpec, catalog: FieldCatalog) -> Json:
    agg = {"histogram": {"field": spec.field, "interval": spec.interval, "min_doc_count": 1}}
    return _per_document(catalog.nested_path(spec.field), agg)


def bounds_clause(field: str, bounds: GeoBounds, catalog: FieldCatalog) -> Json:
    return nest(catalog, field, {"geo_bounding_box": {field: _box(bounds)}})


def _box(bounds: GeoBounds) -> Json:
    return {
        "top_left": {"lat": bounds.top_left.lat, "lon": bounds.top_left.lon},
        "bottom_right": {"lat": bounds.bottom_right.lat, "lon": bounds.bottom_right.lon},
    }


def geo_grid_agg(spec: GeoGridSpec, fields: tuple[str, ...] | None,
                 catalog: FieldCatalog) -> Json:
    """Tiles with the centroid of their points and one sample document; on a field inside
    nested objects the sample is read back at the root (``top_hits`` under
    ``reverse_nested``), so it is a whole document, not one nested object."""
    grid: Json = {"field": spec.field, "precision": spec.precision, "size": CLUSTER_LIMIT}
    if spec.bounds is not None:
        grid["bounds"] = _box(spec.bounds)
    top_hits: Json = {"size": 1}
    if fields is not None:
        top_hits["_source"] = list(fields)
    sample = {"sample": {"top_hits": top_hits}}
    path = catalog.nested_path(spec.field)
    agg: Json = {
        "geotile_grid": grid,
        "aggs": {"centroid": {"geo_centroid": {"field": spec.field}},
                 **(sample if path is None else {})},
    }
    return _per_document(path, agg, docs=sample)


def sort_clauses(query: SearchQuery, catalog: FieldCatalog,
                 ranking: tuple[SortClause, ...] = ()) -> list[Json]:
    """The sort keys in priority order; a ``geo_sort`` first, then the keys or, when there
    are none, relevance (``_score``, which a sort list otherwise leaves uncomputed) and the
    custom ranking's fields after it, documents without a value last: a tie-break of
    equal scores, not a blend into them (a function score would trade relevance for the
    field's value)."""
    clauses: list[Json] = []
    if query.geo_sort is not None:
        clauses.append(geo_sort_clause(query.geo_sort, catalog))
    if not query.sort and (query.geo_sort is not None or ranking):
        clauses.append({"_score": {"order": "desc"}})
    for clause in query.sort or ranking:
        if clause.field == "_score":
            clauses.append({"_score": {"order": clause.order}})
            continue
        options: Json = {"order": clause.order}
        if not query.sort:
            options["missing"] = "_last"
        path = catalog.nested_path(clause.field)
        if path is not None:
            options["nested"] = {"path": path}
        clauses.append({catalog.exact(clause.field): options})
    return clauses


# keys of a _geo_distance sort that are options, not the field: a field so named is refused
GEO_SORT_OPTIONS = frozenset({"order", "unit", "mode", "distance_type", "nested",
                              "ignore_unmapped", "validation_method", "nested_path",
                              "nested_filter", "coerce", "ignore_malformed"})


def geo_sort_clause(geo: GeoSort, catalog: FieldCatalog) -> Json:
    """Closest first by arc (great-circle) distance in meters; of a field with several
    points, the closest one (``mode: min``); a document without the field sorts last.
    A field inside nested objects sorts by its closest nested object (``nested.path``)."""
    if geo.field in GEO_SORT_OPTIONS:
        raise InvalidRequest(f"Cannot sort by distance on a field named {geo.field!r}: "
                             "Elasticsearch reads that name as an option of _geo_distance")
    # the centre as a list of one point: OpenSearch's specification takes only a list
    # there, Elasticsearch's a point or a list (docs/engine-specifications.md)
    options: Json = {geo.field: [{"lat": geo.lat, "lon": geo.lon}], "order": "asc",
                     "unit": "m", "mode": "min", "distance_type": "arc"}
    path = catalog.nested_path(geo.field)
    if path is not None:
        options["nested"] = {"path": path}
    return {"_geo_distance": options}


def highlight(query: SearchQuery) -> Json:
    """The fields as a list of one-field objects: Elasticsearch's specification takes an
    object of one field or such a list (both engines document the list, which keeps the
    order), OpenSearch's both (docs/engine-specifications.md)."""
    names = query.highlight_fields or ("*",)
    return {**HIGHLIGHT, "fields": [{name: {}} for name in names]}


def suggest(text: str, field: str) -> Json:
    return {
        "text": text,
        "phrase_suggestion": {
            "phrase": {
                "field": field,
                "size": MAX_SUGGESTIONS,
                "direct_generator": [{"field": field, "suggest_mode": "popular"}],
            }
        },
    }


# ---------------------------------------------------------------- facet values


def facet_values_body(query: FacetValuesQuery, catalog: FieldCatalog) -> Json:
    """Values of one field containing ``text`` (any case), counted under ``filters``.
    String fields match with a regular expression built from escaped characters; other
    fields (numbers, booleans, dates) are read in full and matched by ``parse``."""
    terms: Json = {}
    size = query.limit
    if query.text:
        if catalog.is_string(query.field):
            terms["include"] = contains_pattern(query.text)
        else:
            size = NON_STRING_FACET_SCAN
    clauses = [filter_clause(f, catalog) for f in query.filters]
    return {
        "size": 0,
        "track_total_hits": False,
        "query": all_of(clauses) if clauses else {"match_all": {}},
        "aggs": {facet_name(0): facet_agg(query.field, size, catalog, **terms)},
    }


_LITERAL = re.compile(r"[0-9]")


def contains_pattern(text: str) -> str:
    """A Lucene regular expression matching any term that contains ``text``, ignoring case.
    Every character that is not a letter or digit is escaped, so no input can use an
    operator (``@``, ``&``, ``~``, ``<>``, ``#``, ...)."""
    out = []
    for char in text:
        forms = dict.fromkeys(c for c in (char, char.lower(), char.upper()) if len(c) == 1)
        if char.isalpha() and len(forms) > 1:
            out.append(f"[{''.join(forms)}]")
        elif char.isalpha() or _LITERAL.fullmatch(char):
            out.append(char)
        else:
            out.append("\\" + char)
    return f".*{''.join(out)}.*"


# ---------------------------------------------------------------- documents


def ids_body(doc_id: str) -> Json:
    return {"size": 1, "query": {"ids": {"values": [doc_id]}}}
