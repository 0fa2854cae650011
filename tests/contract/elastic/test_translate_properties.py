"""Properties of the Elasticsearch/OpenSearch translator (``translate.py``) over generated
queries and field catalogs.

Each case first draws a *model* of the handle's fields (a type, a keyword sub-field and a
nested path per field), then writes it out the two ways the adapter learns it: configured
``nestedPath``s and a ``GET /_mapping`` answer of one or two indices read by
``read_mapping``, as the engine reads it. Expectations come from the model and from a walk of the
generated body that knows which DSL keys name fields and which open a nested scope, never
from ``FieldCatalog``. Where a check compares with another function of ``translate`` (a
filter's clause, a facet's aggregation), that function is checked against the model too.

Facets, histograms and geo clusters are drawn on any field, nested ones included: on those,
the aggregation must run inside its ``nested`` object and count root documents.

Strategies are explicit (``from_type`` ignores msgspec ``Meta`` bounds).
"""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import msgspec
from hypothesis import event, given, settings
from hypothesis import strategies as st

from searchport.adapters.elastic import parse, translate
from searchport.adapters.elastic.engine import CAPABILITIES
from searchport.adapters.elastic.fields import FieldCatalog, read_mapping
from searchport.adapters.elastic.filters import filter_clause
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import DefaultsConfig, FieldConfig, IndexConfig
from searchport.domain.fields import METADATA_KEYS, FieldMap
from searchport.domain.query import (
    AllOf,
    AnyOf,
    ExistsFilter,
    FacetValuesQuery,
    FieldWeight,
    Filter,
    GeoBounds,
    GeoGridSpec,
    GeoPoint,
    GeoRadiusFilter,
    HistogramSpec,
    Negated,
    NotFilter,
    RangeFilter,
    Scalar,
    SearchQuery,
    SortClause,
    TermFilter,
)
from searchport.domain.results import EngineResult, FacetValue, Hit
from searchport.domain.search_request import SearchRequest
from searchport.domain.usecases.facet_search import FacetSearch, FacetSearchRequest
from searchport.domain.usecases.search import Search
from tests.specs.checker import check as check_spec

Json = dict[str, Any]

# 4,500 cases together: about 20 s of CPU (hypothesis pays per drawn choice, so a case with
# a whole request costs a few milliseconds to draw; the checks themselves are cheap).
BODIES = settings(max_examples=1000, deadline=None)  # each case checks (a) to (f)
PATTERNS = settings(max_examples=1000, deadline=None)  # no catalog to draw
MANY = settings(max_examples=500, deadline=None)
SOME = settings(max_examples=300, deadline=None)

# --- the field model ----------------------------------------------------------------------

PARENTS = ("variants", "reviews", "reviews.user", "meta")
LEAVES = (
    "title", "author", "genre", "tags", "year", "price", "available", "published", "location",
    "variants.color", "variants.size", "reviews.stars", "reviews.user.name",
    "reviews.user.country", "meta.source", "über", 'say "hi"', "back\\slash",
)
UNMAPPED = ("misc", "x.y")  # never in a mapping; only a configured nestedPath may name them
POOL = (*LEAVES, *UNMAPPED)

ANALYSED = ("text", "match_only_text", "search_as_you_type")  # no exact terms, no doc values
EXACT_STRINGS = ("keyword", "constant_keyword", "wildcard")
OTHERS = ("integer", "long", "float", "double", "boolean", "date", "ip", "geo_point")
STRINGS = frozenset((*ANALYSED, *EXACT_STRINGS))
SUB_FIELDS = ("keyword", "raw", "exact", "english", "num")
SUB_TYPES = ("keyword", "keyword", "text", "integer")
PATHS = (*PARENTS, "custom", "a.b")  # configured nestedPaths (they need not match a mapping)


@dataclass(frozen=True)
class Spec:
    """What the model says about one field."""

    name: str
    type: str | None  # None: no index of the mapping has it
    keyword: str | None  # the exact sub-field to filter, facet and sort on, if any
    nested: str | None  # the nested path every clause on it must sit in

    @property
    def exact(self) -> str:
        """Filters, facets and sort of an analysed text field use its keyword sub-field;
        every other field (numbers, dates, keywords...) is exact already."""
        return self.keyword if self.type in ANALYSED and self.keyword else self.name

    @property
    def is_string(self) -> bool:
        return self.type is None or self.type in STRINGS


@dataclass(frozen=True)
class Layout:
    """One index of the mapping answer: the kind of each parent object and its leaves."""

    kinds: Mapping[str, str]  # parent -> "object" | "nested"
    leaves: Mapping[str, tuple[str, Mapping[str, str]]]  # leaf -> (type, sub-fields)
    typed_objects: bool  # write "type": "object" on plain objects (it is optional)

    def nested_path(self, name: str) -> str | None:
        parts = name.split(".")
        found = None
        for end in range(1, len(parts)):
            prefix = ".".join(parts[:end])
            if self.kinds.get(prefix) == "nested":
                found = prefix
        return found

    def properties(self) -> Json:
        root: Json = {}
        for name, (kind, subs) in self.leaves.items():
            parts, node = name.split("."), root
            for end in range(1, len(parts)):
                prefix = ".".join(parts[:end])
                parent = node.setdefault(parts[end - 1], {})
                if self.kinds[prefix] == "nested" or self.typed_objects:
                    parent["type"] = self.kinds[prefix]
                node = parent.setdefault("properties", {})
            leaf: Json = {"type": kind}
            if subs:
                leaf["fields"] = {sub: {"type": t} for sub, t in subs.items()}
            node[parts[-1]] = leaf
        return root


@dataclass(frozen=True)
class Model:
    """The specs of ``POOL``, the catalog built from them, and what it was built from (so a
    falsifying example shows the mapping and the configured nestedPaths)."""

    specs: Mapping[str, Spec]
    catalog: FieldCatalog
    mapping: Json | None = None
    configured: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Spec:
        return self.specs[name]

    def by_reference(self) -> dict[str, Spec]:
        """Each name a body may use (a field or its exact sub-field) to the field's spec."""
        found: dict[str, Spec] = {}
        for spec in self.specs.values():
            found[spec.name] = spec
            found.setdefault(spec.exact, spec)
        return found


def keyword_of(name: str, subs: Mapping[str, str]) -> str | None:
    exact = [sub for sub, kind in subs.items() if kind == "keyword"]
    if not exact:
        return None
    return f"{name}.{'keyword' if 'keyword' in exact else exact[0]}"


LEAF_TYPES = (*ANALYSED, *ANALYSED, *EXACT_STRINGS, *OTHERS)  # text twice as often
SEEDS = st.integers(0, 2**32 - 1)


def random_layout(rng: random.Random) -> Layout:
    leaves = {}
    for name in rng.sample(LEAVES, rng.randint(0, len(LEAVES))):
        subs = {rng.choice(SUB_FIELDS): rng.choice(SUB_TYPES)
                for _ in range(rng.choice((0, 1, 1, 2, 3)))}
        leaves[name] = (rng.choice(LEAF_TYPES), subs)
    return Layout(kinds={p: rng.choice(("object", "nested")) for p in PARENTS}, leaves=leaves,
                  typed_objects=rng.random() < 0.5)


def draw_model(draw: st.DrawFn, configured: Mapping[str, str] | None = None) -> Model:
    """Field specs for ``POOL`` with the catalog the adapter would build for them.

    The layout comes from one drawn seed: hypothesis pays per choice, and a model drawn
    choice by choice would cost more than everything checked on it (the falsifying example
    prints the whole model, so a failure reads plainly all the same)."""
    rng = random.Random(draw(SEEDS))
    if configured is None:
        configured = {rng.choice(POOL): rng.choice(PATHS)
                      for _ in range(rng.choice((0, 0, 1, 2, 4)))}
    indices = [random_layout(rng) for _ in range(rng.choice((0, 1, 1, 2)))]
    mapping = None
    catalog = FieldCatalog(configured_nested=configured)
    if indices:
        mapping = {f"books-{i}": {"mappings": {"properties": layout.properties()}}
                   for i, layout in enumerate(indices)}
        if rng.random() < 0.2:  # an index without properties (a fresh, empty one)
            mapping = {"empty": {"mappings": {}}, **mapping}
        catalog = FieldCatalog(mapped=read_mapping(mapping), configured_nested=configured)
    specs = {}
    for name in POOL:
        first = next((layout for layout in indices if name in layout.leaves), None)
        kind, subs = first.leaves[name] if first is not None else (None, {})
        nested = first.nested_path(name) if first is not None else None
        specs[name] = Spec(name=name, type=kind, keyword=keyword_of(name, subs),
                           nested=configured.get(name, nested))
    return Model(specs=specs, catalog=catalog, mapping=mapping, configured=configured)


models = st.composite(draw_model)()


# --- values and queries ---------------------------------------------------------------------

AWKWARD = (
    '"', "\\", '\\"', "*", "?", "a AND b", "(x)", "[1 TO 2]", "~", "@", "&", "#", "<>", ".*",
    "é", "日本", "\x00", "\n", "' OR 1=1 --", '{"a": 1}', "💥", "", " ", "title:x", "/re/",
)
texts = st.text(max_size=12) | st.sampled_from(AWKWARD)
numbers = (
    st.integers(-(10**6), 10**6)
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, -0.0, 5e-324, 1e-300, 1e308, -1e308, 2**63, 10**300, -(10**300)])
)
dates = st.dates().map(str) | st.datetimes(timezones=st.none() | st.just(UTC)).map(
    datetime.isoformat
)
scalars: st.SearchStrategy[Scalar] = texts | numbers | st.booleans() | dates
values = st.lists(scalars, min_size=1, max_size=4).map(tuple)
names = st.sampled_from(POOL)


def _range(name: str, bounds: list[Any], keep: str,
           strict: tuple[bool, bool] = (False, False)) -> RangeFilter:
    low, high = bounds if isinstance(bounds[0], str) else sorted(bounds)
    numeric = not isinstance(low, str)
    return RangeFilter(field=name, min=None if keep == "max" else low,
                       max=None if keep == "min" else high,
                       min_exclusive=numeric and keep != "max" and strict[0],
                       max_exclusive=numeric and keep != "min" and strict[1])


field_filters: st.SearchStrategy[Filter] = st.one_of(
    st.builds(TermFilter, field=names, values=values),
    st.builds(_range, names,
              st.lists(numbers, min_size=2, max_size=2) | st.lists(dates, min_size=2,
                                                                   max_size=2),
              st.sampled_from(("both", "min", "max")),
              st.tuples(st.booleans(), st.booleans())),
    st.builds(NotFilter, field=names, values=values),
    st.builds(ExistsFilter, field=names, exists=st.booleans()),
)


def groups(inner: st.SearchStrategy[Filter]) -> st.SearchStrategy[Filter]:
    return st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda fs: AnyOf(filters=tuple(fs))),
        inner.map(lambda f: Negated(filter=f)),
        st.lists(inner, min_size=1, max_size=3).map(lambda fs: AllOf(filters=tuple(fs))),
    )


# filters on one field, and AnyOf/Negated/AllOf groups of filters or groups (on any fields)
filters = st.one_of(field_filters, groups(st.recursive(field_filters, groups, max_leaves=3)))


def field_of(f: Filter) -> str | None:
    """The field of a filter on one field; ``None`` for a group, never a facet's own."""
    return None if isinstance(f, AnyOf | Negated | AllOf) else f.field


def leaves(f: Filter) -> Iterator[Filter]:
    """The filters on one field inside ``f``."""
    if isinstance(f, AnyOf | AllOf):
        for member in f.filters:
            yield from leaves(member)
    elif isinstance(f, Negated):
        yield from leaves(f.filter)
    else:
        yield f


orders = st.sampled_from(("asc", "desc"))
weights = st.floats(min_value=0.01, max_value=1000, allow_nan=False) | st.sampled_from(
    [1.0, 2.0, 0.5, 3.0]
)
points = st.builds(GeoPoint, lat=st.floats(-90, 90), lon=st.floats(-180, 180))


def bounds_of(a: GeoPoint, b: GeoPoint) -> GeoBounds:
    return GeoBounds(top_left=GeoPoint(lat=max(a.lat, b.lat), lon=a.lon),
                     bottom_right=GeoPoint(lat=min(a.lat, b.lat), lon=b.lon))


FILTER_LISTS = st.lists(filters, max_size=6)
NAME_SETS = st.lists(names, max_size=4, unique=True)
SORTS = st.lists(st.builds(SortClause, field=names | st.just("_score"), order=orders),
                 max_size=3).map(tuple)
CHOSEN = st.none() | st.lists(names, min_size=1, max_size=4, unique=True).map(tuple)
SEARCHED = st.lists(st.builds(FieldWeight, field=names, weight=weights), max_size=4,
                    unique_by=lambda fw: fw.field).map(tuple)
HISTOGRAMS = st.lists(st.builds(HistogramSpec, field=names, interval=st.floats(1e-6, 1e9)),
                      max_size=3)
GRIDS = st.none() | st.builds(GeoGridSpec, field=names, precision=st.integers(0, 29),
                              bounds=st.none() | st.builds(bounds_of, points, points))


def draw_query(draw: st.DrawFn, model: Model) -> SearchQuery:
    found = draw(FILTER_LISTS)
    facets = draw(NAME_SETS)
    if found and draw(st.booleans()):  # facets on filtered fields: disjunctive counts
        facets += [name for f in found if (name := field_of(f)) and draw(st.booleans())]
    grid = draw(GRIDS)
    return SearchQuery(
        text=draw(texts),
        offset=draw(st.integers(0, 10_000)),
        limit=draw(st.integers(1, 100)),
        filters=tuple(found),
        facets=tuple(dict.fromkeys(facets)),
        max_facet_values=draw(st.integers(1, 100)),
        sort=draw(SORTS),
        highlight=draw(st.booleans()),
        highlight_fields=tuple(draw(NAME_SETS)),
        fields=draw(CHOSEN),
        search_fields=draw(SEARCHED),
        prefix_last_word=draw(st.booleans()),
        suggest_field=draw(st.none() | names),
        histograms=tuple(draw(HISTOGRAMS)),
        geo_grid=grid,
        exact_total=draw(st.booleans()),
    )


@st.composite
def cases(draw: st.DrawFn) -> tuple[Model, SearchQuery]:
    model = draw_model(draw)
    return model, draw_query(draw, model)


# --- reading a body -------------------------------------------------------------------------

def key(clause: Any) -> bytes:
    return msgspec.json.encode(clause, order="sorted")


def bag(clauses: list[Any]) -> Counter[bytes]:
    return Counter(key(c) for c in clauses)


def subtrees(node: Any) -> Iterator[Any]:
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        yield from subtrees(child)


@dataclass(frozen=True)
class Ref:
    """A field named somewhere in a body, with the nested scope it is read in."""

    name: str
    kind: str  # the DSL key naming it: term, terms, range, exists, multi_match, sort, ...
    scope: str | None
    negated_in_scope: bool = False  # a must_not between the scope's start and the name


LEAF_QUERIES = ("term", "terms", "range", "geo_bounding_box")


def query_refs(clause: Json, scope: str | None = None, negated: bool = False) -> list[Ref]:
    (kind, spec), = clause.items()
    if kind == "bool":
        return [ref for occur in ("must", "filter", "should", "must_not")
                for child in spec.get(occur, [])
                for ref in query_refs(child, scope, negated or occur == "must_not")]
    if kind == "nested":
        assert set(spec) <= {"path", "query", "score_mode"}, spec
        return query_refs(spec["query"], spec["path"], False)
    if kind in LEAF_QUERIES:
        (name,) = spec
        return [Ref(name, kind, scope, negated)]
    if kind == "exists":
        return [Ref(spec["field"], kind, scope, negated)]
    if kind == "multi_match":
        return [Ref(re.sub(r"\^[0-9.e+-]+$", "", name), kind, scope, negated)
                for name in spec.get("fields", [])]
    assert kind in ("match_all", "ids"), f"unexpected query clause {kind}"
    return []


def agg_refs(aggs: Json, scope: str | None = None) -> list[Ref]:
    refs: list[Ref] = []
    for node in aggs.values():
        inner_scope = scope
        if "filter" in node:
            refs += query_refs(node["filter"], scope)
        if "nested" in node:
            inner_scope = node["nested"]["path"]
        if "reverse_nested" in node:
            inner_scope = node["reverse_nested"].get("path")
        for kind in ("terms", "histogram", "geotile_grid", "geo_centroid"):
            if kind in node:
                refs.append(Ref(node[kind]["field"], kind, scope))
        if "terms" in node:  # a nested facet counts root documents, not nested objects
            docs = {translate.DOCS: {"reverse_nested": {}}}
            assert node.get("aggs") == (docs if scope is not None else None), node
        refs += agg_refs(node.get("aggs", {}), inner_scope)
    return refs


def sort_refs(body: Json) -> list[Ref]:
    refs = []
    for entry in body.get("sort", []):
        ((name, options),) = entry.items()
        if name != "_score":
            refs.append(Ref(name, "sort", options.get("nested", {}).get("path")))
    return refs


def body_refs(body: Json) -> list[Ref]:
    refs = query_refs(body["query"]) + sort_refs(body) + agg_refs(body.get("aggs", {}))
    if "post_filter" in body:
        refs += query_refs(body["post_filter"])
    return refs


EXACT_KINDS = {"term", "terms", "range", "sort"}  # "terms": also a facet's aggregation


def check_refs(refs: list[Ref], model: Model) -> None:
    """(e) every name is read in its nested scope, negations outside the scope; (f) exact
    reads (filters, facets, sort) use a text field's keyword sub-field."""
    known = model.by_reference()
    for ref in refs:
        assert ref.name in known, f"{ref} names no known field"
        spec = known[ref.name]
        assert ref.scope == spec.nested, f"{ref} should be read under nested {spec.nested!r}"
        assert not (ref.negated_in_scope and spec.nested), f"{ref}: must_not inside nested"
        wanted = spec.exact if ref.kind in EXACT_KINDS else spec.name
        assert ref.name == wanted, f"{ref} should read {wanted!r}"


def split_query(body: Json, query: SearchQuery, catalog: FieldCatalog) -> list[Json]:
    """The ``query.bool.filter`` clauses, after checking the text query sits in ``must``."""
    text = translate.text_query(query, catalog)
    if body["query"] == text:
        return []
    assert body["query"] == {"bool": {"must": [text], "filter": body["query"]["bool"]["filter"]}}
    main: list[Json] = body["query"]["bool"]["filter"]
    assert main
    return main


def post_clauses(body: Json) -> list[Json]:
    if "post_filter" not in body:
        return []
    assert set(body["post_filter"]) == {"bool"} and set(body["post_filter"]["bool"]) == {"filter"}
    clauses: list[Json] = body["post_filter"]["bool"]["filter"]
    assert clauses
    return clauses


def unwrap(node: Json, clauses: list[Json]) -> Json:
    """The aggregation inside a wrapper holding exactly ``clauses`` (bare when none)."""
    if not clauses:
        assert "filter" not in node, node
        return node
    assert set(node) == {"filter", "aggs"} and set(node["aggs"]) == {translate.INNER}, node
    assert set(node["filter"]) == {"bool"} and set(node["filter"]["bool"]) == {"filter"}
    assert bag(node["filter"]["bool"]["filter"]) == bag(clauses)
    inner: Json = node["aggs"][translate.INNER]
    return inner


def placed(query: SearchQuery, catalog: FieldCatalog) -> tuple[list[Json], list[Json]]:
    """The clauses each filter should give in ``query`` and in ``post_filter``."""
    facets = set(query.facets)
    main = [filter_clause(f, catalog) for f in query.filters
            if field_of(f) not in facets]
    post = [filter_clause(f, catalog) for f in query.filters if field_of(f) in facets]
    if query.geo_grid is not None and query.geo_grid.bounds is not None:
        main.append(translate.bounds_clause(query.geo_grid.field, query.geo_grid.bounds,
                                            catalog))
    return main, post


# --- (a-f) the search body ---------------------------------------------------------------------

def check_json(body: Json, query: SearchQuery) -> None:
    """(a) The body is JSON and reads back as itself."""
    encoded = msgspec.json.encode(body)
    assert msgspec.json.decode(encoded) == body
    assert msgspec.json.encode(msgspec.json.decode(encoded)) == encoded
    assert body["from"] == query.offset and body["size"] == query.limit
    assert ("track_total_hits" in body) == query.exact_total


def check_placement(body: Json, query: SearchQuery, catalog: FieldCatalog) -> None:
    """(b) Each filter's clause is in ``post_filter`` iff its field is a requested facet,
    else in ``query``; never both, never twice (a filter given twice is there twice)."""
    main, post = placed(query, catalog)
    assert bag(split_query(body, query, catalog)) == bag(main)
    assert bag(post_clauses(body)) == bag(post)
    assert ("post_filter" in body) == any(field_of(f) in query.facets for f in query.filters)


def check_facets(body: Json, query: SearchQuery, catalog: FieldCatalog) -> None:
    """(c) Each facet counts under the other facets' filters, never under its own."""
    aggs = body.get("aggs", {})
    for position, name in enumerate(query.facets):
        node = aggs[translate.facet_name(position)]
        others = [filter_clause(f, catalog) for f in query.filters
                  if field_of(f) in query.facets and field_of(f) != name]
        inner = unwrap(node, others)
        assert inner == translate.facet_agg(name, query.max_facet_values, catalog)
        terms = (inner["aggs"][translate.INNER] if "nested" in inner else inner)["terms"]
        assert terms["size"] == query.max_facet_values
        # a nested facet picks its top values by root documents, the count it reports
        by = translate.DOCS if "nested" in inner else "_count"
        assert terms["order"] == [{by: "desc"}, {"_key": "asc"}]
        every_part = {key(part) for part in subtrees(node) if isinstance(part, dict)}
        for own in (f for f in query.filters if field_of(f) == name):
            assert key(filter_clause(own, catalog)) not in every_part
    facet_aggs = {n for n in aggs if n.startswith("facet_")}
    assert facet_aggs == {translate.facet_name(i) for i in range(len(query.facets))}


def in_nested(node: Json, path: str | None) -> tuple[Json, Json | None]:
    """The aggregation inside the ``nested`` wrapper of ``path`` and its ``reverse_nested``
    child counting root documents (``None`` outside nested objects, with no wrapper)."""
    if path is None:
        assert "nested" not in node and translate.DOCS not in node.get("aggs", {}), node
        return node, None
    assert set(node) == {"nested", "aggs"} and node["nested"] == {"path": path}, node
    assert set(node["aggs"]) == {translate.INNER}, node
    inner: Json = node["aggs"][translate.INNER]
    docs: Json = inner["aggs"][translate.DOCS]
    assert docs["reverse_nested"] == {}, docs
    return inner, docs


def mentions(clause: Json, key: str) -> bool:
    return any(key in part for part in subtrees(clause) if isinstance(part, dict))


def check_histograms_and_geo(body: Json, query: SearchQuery, model: Model) -> None:
    """(d) Histograms and geo clusters sit in a wrapper of exactly the ``post_filter``
    clauses, so they count the documents the hits come from; on a field inside nested
    objects they run in its ``nested`` object and count root documents; geo bounds limit
    the query."""
    catalog = model.catalog
    post = post_clauses(body)
    main = split_query(body, query, catalog)
    aggs = body.get("aggs", {})
    for position, spec in enumerate(query.histograms):
        node = unwrap(aggs[translate.histogram_name(position)], post)
        inner, docs = in_nested(node, model[spec.field].nested)
        assert inner["histogram"] == {"field": spec.field, "interval": spec.interval,
                                      "min_doc_count": 1}
        assert inner.get("aggs") == (None if docs is None else {translate.DOCS: docs})
        assert docs in (None, {"reverse_nested": {}})
    grid = query.geo_grid
    assert (translate.GEO_GRID in aggs) == (grid is not None)
    assert not any(mentions(c, "geo_bounding_box") for c in post)
    if grid is None:
        return
    path = model[grid.field].nested
    inner, docs = in_nested(unwrap(aggs[translate.GEO_GRID], post), path)
    tile = inner["geotile_grid"]
    assert tile["field"] == grid.field and tile["precision"] == grid.precision
    if grid.bounds is None:
        assert "bounds" not in tile
        assert not any(mentions(c, "geo_bounding_box") for c in main)
    else:
        box = {"top_left": {"lat": grid.bounds.top_left.lat, "lon": grid.bounds.top_left.lon},
               "bottom_right": {"lat": grid.bounds.bottom_right.lat,
                                "lon": grid.bounds.bottom_right.lon}}
        assert tile["bounds"] == box
        clause = {"geo_bounding_box": {grid.field: box}}
        if path is not None:
            clause = {"nested": {"path": path, "query": clause}}
        assert [c for c in main if mentions(c, "geo_bounding_box")] == [clause]
    assert inner["aggs"]["centroid"] == {"geo_centroid": {"field": grid.field}}
    # the sample is a root document: read under reverse_nested when the field is nested
    holder = inner if docs is None else docs
    assert set(holder["aggs"]) >= {"sample"} and (docs is None or "sample" not in inner["aggs"])
    sample = holder["aggs"]["sample"]["top_hits"]
    assert sample.get("_source") == (list(query.fields) if query.fields is not None else None)


def check_fields(body: Json, query: SearchQuery, model: Model) -> None:
    """(e, f) Every field is read in its nested scope with negations outside it, and in its
    exact form; and the walk found every filter, facet, sort key and searched field."""
    refs = body_refs(body)
    check_refs(refs, model)
    known = model.by_reference()
    named = {(r.kind, known[r.name].name) for r in refs}
    for f in (leaf for flt in query.filters for leaf in leaves(flt)):
        kind = {TermFilter: "term", RangeFilter: "range", NotFilter: "term",
                ExistsFilter: "exists"}[type(f)]
        multi = isinstance(f, TermFilter | NotFilter) and len(f.values) > 1
        assert ("terms" if multi else kind, f.field) in named
    assert {name for kind, name in named if kind == "terms"} >= set(query.facets)
    assert {name for kind, name in named if kind == "sort"} == {
        c.field for c in query.sort if c.field != "_score"}
    assert {name for kind, name in named if kind == "multi_match"} == (
        {fw.field for fw in query.search_fields} if query.text.strip() else set())


@BODIES
@given(cases())
def test_search_body(case: tuple[Model, SearchQuery]) -> None:
    model, query = case
    body = translate.search_body(query, model.catalog)
    for engine in ("elasticsearch", "opensearch"):  # fits both published specifications
        check_spec(engine, "search.request", body)
    check_json(body, query)
    check_placement(body, query, model.catalog)
    check_facets(body, query, model.catalog)
    check_histograms_and_geo(body, query, model)
    check_fields(body, query, model)
    refs = body_refs(body)
    negations = [f for f in query.filters
                 if isinstance(f, NotFilter) or (isinstance(f, ExistsFilter) and not f.exists)]
    event(f"post_filter: {'post_filter' in body}")
    event(f"groups: {any(isinstance(f, AnyOf | Negated | AllOf) for f in query.filters)}")
    event(f"clauses under nested: {any(r.scope for r in refs)}")
    sub_fields = any(r.name not in model.specs for r in refs)
    event(f"keyword sub-field read: {sub_fields}")
    event(f"negated nested field: {any(model[f.field].nested for f in negations)}")
    event(f"geo bounds: {query.geo_grid is not None and query.geo_grid.bounds is not None}")
    grid = [query.geo_grid.field] if query.geo_grid is not None else []
    event("histogram or grid on a nested field: "
          f"{any(model[n].nested for n in [*grid, *(h.field for h in query.histograms)])}")


def test_a_filter_given_twice_is_there_twice() -> None:
    twice = (TermFilter(field="genre", values=("a",)), TermFilter(field="genre", values=("a",)))
    body = translate.search_body(SearchQuery(filters=twice, facets=("genre",)), FieldCatalog())
    assert body["post_filter"] == {"bool": {"filter": [{"term": {"genre": "a"}}] * 2}}
    assert body["query"] == {"match_all": {}}


@MANY
@given(models, st.data())
def test_each_filter_clause_has_its_exact_shape(model: Model, data: st.DataObject) -> None:
    """Negations stay outside the nested wrapper ("no object matches"), never inside it
    ("some object does not match"); ``exists`` reads the field itself, whose sub-field may
    skip long values (``ignore_above``)."""
    f = data.draw(filters)
    clause = filter_clause(f, model.catalog)
    assert clause == expected_clause(f, model)
    event(type(f).__name__)


def expected_clause(f: Filter, model: Model) -> Json:
    """``AnyOf``: ``bool.should`` (at least one); ``AllOf``: ``bool.filter`` (every one);
    ``Negated``: ``bool.must_not``; each member on one field in its own nested wrapper."""
    match f:
        case AnyOf(filters=members):
            return {"bool": {"should": [expected_clause(m, model) for m in members],
                             "minimum_should_match": 1}}
        case AllOf(filters=members):
            return {"bool": {"filter": [expected_clause(m, model) for m in members]}}
        case Negated(filter=inner):
            return {"bool": {"must_not": [expected_clause(inner, model)]}}
        case GeoRadiusFilter(lat=lat, lon=lon, radius_m=meters):
            distance = f"{int(meters)}m" if float(meters).is_integer() else f"{meters}m"
            return nest_in(model[f.field], {"geo_distance": {
                "distance": distance, f.field: {"lat": lat, "lon": lon}}})
        case TermFilter(values=found):
            return nest_in(model[f.field], terms_of(model[f.field], found))
        case NotFilter(values=found):
            return {"bool": {"must_not": [nest_in(model[f.field],
                                                  terms_of(model[f.field], found))]}}
        case RangeFilter(min=low, max=high, min_exclusive=strict_low, max_exclusive=strict_high):
            bounds: Json = {}
            if low is not None:
                bounds["gt" if strict_low else "gte"] = low
            if high is not None:
                bounds["lt" if strict_high else "lte"] = high
            return nest_in(model[f.field], {"range": {model[f.field].exact: bounds}})
        case ExistsFilter(exists=True):
            return nest_in(model[f.field], {"exists": {"field": f.field}})
        case ExistsFilter():
            return {"bool": {"must_not": [nest_in(model[f.field],
                                                  {"exists": {"field": f.field}})]}}
    raise AssertionError(f"no expected clause for {f!r}")  # a new kind needs its shape here


def nest_in(spec: Spec, inner: Json) -> Json:
    return inner if spec.nested is None else {"nested": {"path": spec.nested, "query": inner}}


def terms_of(spec: Spec, values: tuple[Scalar, ...]) -> Json:
    if len(values) == 1:
        return {"term": {spec.exact: values[0]}}
    return {"terms": {spec.exact: list(values)}}


@SOME
@given(models)
def test_the_catalog_reads_what_the_mapping_says(model: Model) -> None:
    for spec in model.specs.values():
        assert model.catalog.nested_path(spec.name) == spec.nested, spec
        assert model.catalog.exact(spec.name) == spec.exact, spec
        assert model.catalog.is_string(spec.name) == spec.is_string, spec


# --- (g) facet value search -----------------------------------------------------------------

class LuceneSyntax(AssertionError):
    pass


def lucene_tokens(pattern: str) -> list[tuple[str, str]]:
    """A Lucene ``RegExp`` (all flags, as Elasticsearch's ``include`` reads it) split into
    ``(kind, text)`` tokens, for the subset a safe pattern may use: ``.``, ``*`` after it,
    ``[...]`` classes of plain characters, ``\\c`` literals and characters that are no
    operator. Anything else raises ``LuceneSyntax``."""
    operators = set('.?+*|{}[]()"\\#@&<>~^')
    tokens, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 == len(pattern):
                raise LuceneSyntax("a trailing backslash")
            escaped = pattern[i + 1]
            if escaped in "dDsSwW":  # Lucene 9 reads these as character classes
                raise LuceneSyntax(f"\\{escaped} is a character class, not a literal")
            tokens.append(("literal", escaped))
            i += 2
        elif char == "[":
            end = pattern.index("]", i + 1)
            members = pattern[i + 1:end]
            if not members or members[0] == "^" or set(members) & set("-\\[&~"):
                raise LuceneSyntax(f"class {members!r} is not a plain set")
            tokens.append(("class", members))
            i = end + 1
        elif char == "." and pattern[i + 1:i + 2] == "*":
            tokens.append(("any", ".*"))
            i += 2
        elif char in operators:
            raise LuceneSyntax(f"unescaped operator {char!r} at {i} in {pattern!r}")
        else:
            tokens.append(("literal", char))
            i += 1
    return tokens


def python_regex(pattern: str) -> re.Pattern[str]:
    """The same language as a Python regular expression (Lucene matches whole terms)."""
    parts = []
    for kind, text in lucene_tokens(pattern):
        if kind == "any":
            parts.append(".*")
        elif kind == "class":
            parts.append("[" + "".join(re.escape(c) for c in text) + "]")
        else:
            parts.append(re.escape(text))
    return re.compile("".join(parts), re.DOTALL)


# Latin-1 without the letters whose case is not one character each way (ß -> SS; the micro
# sign upper-cases and case-folds to Greek letters): there "contains, ignoring case" is not
# a per-letter rule.
latin = st.characters(max_codepoint=0xFF, exclude_characters="ßµ", exclude_categories=["Cs"])
needles = st.text(latin, min_size=1, max_size=8) | st.sampled_from(
    ["Sc@t", ".*", "a|b", "x~y", "<1-9>", "#", '"q"', "\\", "[a]", "(x)", "Zürich", "ÿ", "&&"]
)


def case_mix(text: str, flips: list[bool]) -> str:
    flips = (flips + [False] * len(text))[: len(text)]
    return "".join(c.swapcase() if flip else c for c, flip in zip(text, flips, strict=True))


@PATTERNS
@given(st.text(max_size=20) | needles)
def test_contains_pattern_escapes_every_operator(text: str) -> None:
    """Each character of the text is one token: a case class for a cased letter, the bare
    letter or ASCII digit, an escaped literal for everything else."""
    tokens = lucene_tokens(translate.contains_pattern(text))
    assert tokens[0] == ("any", ".*") and tokens[-1] == ("any", ".*")
    body = tokens[1:-1]
    assert len(body) == len(text)
    for char, (kind, token) in zip(text, body, strict=True):
        cased = {c for c in (char.lower(), char.upper()) if len(c) == 1} - {char}
        if char.isalpha() and cased:
            assert kind == "class" and set(token) == {char, *cased}
        else:
            assert kind == "literal" and token == char
            escaped = not (char.isalpha() or char in "0123456789")
            assert ("\\" + char in translate.contains_pattern(text)) or not escaped


@PATTERNS
@given(needles, st.text(latin, max_size=6), st.text(latin, max_size=6),
       st.lists(st.booleans(), max_size=8), st.text(latin, max_size=10))
def test_contains_pattern_matches_exactly_the_terms_containing_the_text(
        text: str, before: str, after: str, flips: list[bool], other: str) -> None:
    regex = python_regex(translate.contains_pattern(text))
    containing = before + case_mix(text, flips) + after
    assert regex.fullmatch(containing)
    for term in (other, before + after, containing[1:], containing[:-1]):
        assert bool(regex.fullmatch(term)) == (text.casefold() in term.casefold()), term


@SOME
@given(models, st.data())
def test_facet_value_search_body(model: Model, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(POOL))
    query = FacetValuesQuery(field=name, text=data.draw(st.just("") | needles),
                             limit=data.draw(st.integers(1, 100)),
                             filters=tuple(data.draw(st.lists(filters, max_size=4))))
    body = translate.facet_values_body(query, model.catalog)
    for engine in ("elasticsearch", "opensearch"):
        check_spec(engine, "search.request", body)
    assert msgspec.json.decode(msgspec.json.encode(body)) == body
    assert body["size"] == 0 and body["track_total_hits"] is False
    clauses = [filter_clause(f, model.catalog) for f in query.filters]
    if clauses:
        assert set(body["query"]["bool"]) == {"filter"}
        assert bag(body["query"]["bool"]["filter"]) == bag(clauses)
    else:
        assert body["query"] == {"match_all": {}}
    check_refs(query_refs(body["query"]) + agg_refs(body["aggs"]), model)
    assert set(body["aggs"]) == {translate.facet_name(0)}
    node = body["aggs"][translate.facet_name(0)]
    terms = (node["aggs"][translate.INNER] if "nested" in node else node)["terms"]
    spec = model[name]
    assert terms["field"] == spec.exact
    if query.text and spec.is_string:
        assert terms["include"] == translate.contains_pattern(query.text)
        assert terms["size"] == query.limit
    else:
        assert "include" not in terms
        assert terms["size"] == (translate.NON_STRING_FACET_SCAN if query.text else query.limit)


# --- (h) aliases both ways, through the domain --------------------------------------------------

ALIASES = ("pub_title", "Writer", "Größe", "colour", "stars", "x y", "who.name", "preis")
assert not set(ALIASES) & set(POOL)


@dataclass
class TranslatingEngine:
    """An ``ElasticCompatEngine`` without HTTP: translates each query with the catalog the
    real adapter builds (configured nestedPaths + mapping), records the body, and answers
    with an engine answer in real names synthesised from that body, read by ``parse``."""

    catalog: FieldCatalog
    sources: Json
    bodies: list[Json] = field(default_factory=list)
    name: str = "elasticsearch"
    capabilities = CAPABILITIES

    async def search(self, query: SearchQuery) -> EngineResult:
        body = translate.search_body(query, self.catalog)
        self.bodies.append(body)
        answer = answer_for(body, self.sources)
        for engine in ("elasticsearch", "opensearch"):  # the body fits both
            check_spec(engine, "search.request", body)
        return parse.search_result(answer, query)

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        body = translate.facet_values_body(query, self.catalog)
        self.bodies.append(body)
        answer = {"took": 1, "timed_out": False,
                  "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
                  "hits": {"total": {"value": 2, "relation": "eq"}, "max_score": None,
                           "hits": []},
                  "aggregations": {name: agg_answer(node, self.sources)
                                   for name, node in body["aggs"].items()}}
        for engine in ("elasticsearch", "opensearch"):
            check_spec(engine, "search.request", body)
        return parse.facet_values(answer, query,
                                  match_here=not self.catalog.is_string(query.field))

    async def get_document(self, doc_id: str) -> Hit | None:
        raise NotImplementedError

    async def get_mapping(self) -> Json:
        raise NotImplementedError

    async def raw_query(self, body: Json) -> bytes:
        raise NotImplementedError

    async def start(self) -> None:
        return None

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        return None


def raw_hit(n: int, sources: Json) -> Json:
    return {"_id": f"d{n}", "_index": "books-0", "_score": 1.5, "_source": sources,
            "highlight": {name: [f"<mark>{n}</mark>"] for name in sources}}


def agg_answer(node: Json, sources: Json) -> Json:
    """What Elasticsearch answers for one aggregation of ours (shape only)."""
    if "filter" in node or "nested" in node:
        return {"doc_count": 7, translate.INNER: agg_answer(node["aggs"][translate.INNER],
                                                            sources)}
    if "terms" in node:
        docs = {translate.DOCS: {"doc_count": 2}} if "aggs" in node else {}
        return {"buckets": [{"key": "v", "doc_count": 3, **docs},
                            {"key": 12, "doc_count": 1, **docs}]}
    nested = translate.DOCS in node.get("aggs", {})
    if "histogram" in node:
        step = node["histogram"]["interval"]
        docs = {translate.DOCS: {"doc_count": 1}} if nested else {}
        return {"buckets": [{"key": 0.0, "doc_count": 1, **docs},
                            {"key": 2 * step, "doc_count": 4, **docs}]}
    grid = node["geotile_grid"]
    sample = {"sample": {"hits": {"total": {"value": 2, "relation": "eq"},
                                  "hits": [raw_hit(99, sources)]}}}
    return {"buckets": [{
        "key": f"{grid['precision']}/0/0", "doc_count": 2,
        "centroid": {"location": {"lat": 10.5, "lon": -3.25}, "count": 2},
        **({translate.DOCS: {"doc_count": 1, **sample}} if nested else sample),
    }]}


def answer_for(body: Json, sources: Json) -> Json:
    answer: Json = {
        "took": 1, "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {"total": {"value": 2, "relation": "eq"}, "max_score": 1.0,
                 "hits": [raw_hit(0, sources), raw_hit(1, sources)]},
    }
    if "aggs" in body:
        answer["aggregations"] = {name: agg_answer(node, sources)
                                  for name, node in body["aggs"].items()}
    if "suggest" in body:
        answer["suggest"] = {"phrase_suggestion": [
            {"text": body["suggest"]["text"], "offset": 0, "length": 1,
             "options": [{"text": "fixed", "score": 0.5}]}]}
    return answer


OPTIONAL_WEIGHTS = st.none() | weights
OPTIONAL_PATHS = st.none() | st.sampled_from(PATHS)
ALIASED = st.lists(st.sampled_from(POOL), unique=True, max_size=len(ALIASES))
PLAIN = st.lists(names, unique=True, max_size=3)


def draw_alias_config(draw: st.DrawFn) -> dict[str, FieldConfig]:
    reals = draw(ALIASED)
    aliases = draw(st.permutations(ALIASES))[: len(reals)]
    config: dict[str, FieldConfig] = {}
    for alias, real in zip(aliases, reals, strict=False):
        config[alias] = FieldConfig(field=real, weight=draw(OPTIONAL_WEIGHTS),
                                    searchable=draw(st.booleans()),
                                    nested_path=draw(OPTIONAL_PATHS))
    for real in draw(PLAIN):
        if real not in reals:
            config[real] = FieldConfig(weight=draw(OPTIONAL_WEIGHTS),
                                       nested_path=draw(OPTIONAL_PATHS))
    return config


def json_param(value: Any) -> str:
    return msgspec.json.encode(value).decode()


plain_values = st.text(max_size=8) | st.sampled_from(AWKWARD) | st.booleans() | st.integers(
    -(10**9), 10**9) | st.floats(allow_nan=False, allow_infinity=False)
json_ranges = st.lists(st.integers(-1000, 1000), min_size=2, max_size=2).map(sorted).flatmap(
    lambda b: st.sampled_from([{"min": b[0]}, {"max": b[1]}, {"min": b[0], "max": b[1]},
                               {"min": "1990-01-01", "max": "2000-12-31T23:59:59Z"}]))
filter_values = st.one_of(
    plain_values,
    st.lists(plain_values, min_size=1, max_size=4),
    json_ranges,
    st.builds(lambda v: {"not": v}, plain_values | st.lists(plain_values, min_size=1,
                                                            max_size=3)),
    st.builds(lambda b: {"exists": b}, st.booleans()),
)
PICKS = st.lists(st.integers(0, 2**16), min_size=1, max_size=4)  # indexes into public names
HIGHLIGHT_FLAGS = st.sampled_from(["true", "false", "*", "1", "0"])
GRID_PRECISION = st.integers(0, 29)


@st.composite
def alias_cases(draw: st.DrawFn) -> tuple[dict[str, FieldConfig], Model, SearchRequest]:
    """A config with aliases, the model of its real fields (configured nestedPaths as the
    engine builds them, plus a mapping in real names), and a request in public names:
    aliases and unaliased real names, also real names that have an alias."""
    config = draw_alias_config(draw)
    fields = FieldMap(config)
    model = draw_model(draw, configured=fields.nested_paths)

    aliases = [a for a, fc in config.items() if fc.field]
    public = [*aliases, *aliases, *POOL]  # aliases, unaliased names, real names with an alias

    def spoken(count: int = 4) -> list[str]:
        return [public[i % len(public)] for i in draw(PICKS)][:count]

    def maybe() -> bool:
        return draw(st.booleans())

    filtered = spoken() if maybe() else []
    histogram = spoken(2)
    grid = spoken(1)
    req = SearchRequest(
        handle="books",
        q=draw(texts),
        page=draw(st.integers(1, 5)),
        per_page=draw(st.integers(1, 100)),
        sort=json_param({n: draw(orders) for n in spoken(2) + ["_score"] * maybe()})
        if maybe() else None,
        facets=",".join(spoken() + [n for n in filtered if maybe()]) if maybe() else None,
        filters=json_param({n: draw(filter_values) for n in filtered}) if filtered else None,
        highlight=(draw(HIGHLIGHT_FLAGS) if maybe() else ",".join(spoken(3))) if maybe()
        else None,
        fields=",".join(spoken()) if maybe() else None,
        suggest=draw(st.sampled_from(["true", "false"])) if maybe() else None,
        boosts=json_param({n: draw(weights) for n in spoken(3)}) if maybe() else None,
        histogram=json_param({n: draw(st.sampled_from([1, 2.5, 10, 100])) for n in histogram})
        if histogram and maybe() else None,
        geo_grid=json_param({
            "field": grid[0], "precision": draw(GRID_PRECISION),
            "bounds": {"top_left": {"lat": 50, "lon": -10},
                       "bottom_right": {"lat": 40, "lon": 10}}}) if grid and maybe() else None,
    )
    return config, model, req


def entry_for(config: dict[str, FieldConfig], engine: TranslatingEngine) -> IndexEntry:
    suggest = next(iter(config), "title")
    index = IndexConfig(engine="elasticsearch", host="http://es.invalid:9200",
                        index_name="books", fields=config,
                        defaults=DefaultsConfig(suggest_field=suggest))
    return IndexEntry("books", index, engine)


def response_of(outcome: Any) -> Json:
    body = getattr(outcome, "body", None)  # an encoded answer, or the response struct itself
    decoded: Json = msgspec.json.decode(body) if body is not None else msgspec.to_builtins(
        outcome)
    return decoded


@SOME
@given(alias_cases())
def test_aliases_translate_both_ways(
        case: tuple[dict[str, FieldConfig], Model, SearchRequest]) -> None:
    config, model, request = case
    fields = FieldMap(config)
    renamed = {fc.field for fc in config.values() if fc.field}  # reals with a public alias
    sources = {name: f"value of {name}" for name in POOL}
    engine = TranslatingEngine(catalog=model.catalog, sources=sources)
    entry = entry_for(config, engine)
    response = response_of(asyncio.run(Search(catalog=Catalog({"books": entry}))(request)))
    (body,) = engine.bodies
    asked = msgspec.json.decode(request.filters) if request.filters else {}
    event(f"aliased filter: {any(name in config for name in asked)}")
    event(f"nested scope: {any(r.scope for r in body_refs(body))}")
    event(f"histogram: {bool(request.histogram)}, geo: {bool(request.geo_grid)}")
    event(f"facets: {bool(request.facets)}, post_filter: {'post_filter' in body}")

    # inbound: the engine reads real names only, each in its nested scope and exact form
    refs = body_refs(body)
    check_refs(refs, model)
    named = {r.name for r in refs} | set(body.get("_source", [])) | set(
        name for one in body.get("highlight", {}).get("fields", []) for name in one) - {"*"}
    if "suggest" in body:
        named |= {body["suggest"]["phrase_suggestion"]["phrase"]["field"]}
    assert not named & set(ALIASES), named & set(ALIASES)
    filtered = {model.by_reference()[r.name].name
                for r in query_refs(body["query"]) + query_refs(body.get("post_filter",
                                                                         {"match_all": {}}))
                if r.kind not in ("geo_bounding_box", "multi_match")}
    assert filtered == {fields.real(name) for name in asked}

    # outbound: facets, histograms, hits, highlights and cluster samples in public names
    if request.facets:
        assert set(response["facets"]) == {
            fields.public(fields.real(n)) for n in request.facets.split(",")}
    else:
        assert response["facets"] == {}
    if request.histogram:
        assert set(response["histograms"]) == {
            fields.public(fields.real(n)) for n in msgspec.json.decode(request.histogram)}
    samples = [c["hit"] for c in response.get("geoClusters", []) if c["hit"]]
    assert len(samples) == (1 if request.geo_grid else 0)
    stored = {fields.public(n) for n in POOL}
    for hit in [*response["hits"], *samples]:
        assert set(hit) == set(METADATA_KEYS) | stored
        assert set(hit["_highlights"]) == stored
    public_names = [*response["facets"], *response.get("histograms", {}), *stored]
    assert not set(public_names) & renamed, set(public_names) & renamed

    # the facet values route: the field and the filters in, the field's name as asked out
    asked_field = (request.facets or "genre").split(",")[0]
    values = response_of(asyncio.run(FacetSearch(catalog=Catalog({"books": entry}))(
        FacetSearchRequest(handle="books", field=asked_field, q="v", filters=request.filters))))
    assert values["field"] == asked_field
    facet_body = engine.bodies[-1]
    refs = query_refs(facet_body["query"]) + agg_refs(facet_body["aggs"])
    check_refs(refs, model)
    assert not {r.name for r in refs} & set(ALIASES)
    assert {model.by_reference()[r.name].name for r in refs if r.kind == "terms"
            and r.scope == model[fields.real(asked_field)].nested} >= {fields.real(asked_field)}


# --- a few named cases, so a regression reads plainly -----------------------------------------

TEXT_WITH_KEYWORD = {"books": {"mappings": {"properties": {
    "title": {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}},
    "year": {"type": "integer", "fields": {"keyword": {"type": "keyword"}}},
    "variants": {"type": "nested", "properties": {
        "color": {"type": "text", "fields": {"raw": {"type": "keyword"}}}}},
}}}}


def test_text_fields_use_their_keyword_sub_field_and_numbers_stay_numeric() -> None:
    catalog = FieldCatalog(mapped=read_mapping(TEXT_WITH_KEYWORD))
    query = SearchQuery(
        filters=(RangeFilter(field="title", min="a"), RangeFilter(field="year", min=1900),
                 TermFilter(field="variants.color", values=("red",))),
        facets=("title", "year", "variants.color"),
        sort=(SortClause(field="year", order="desc"), SortClause(field="title", order="asc"),
              SortClause(field="variants.color", order="asc")),
    )
    body = translate.search_body(query, catalog)
    assert body["sort"] == [
        {"year": {"order": "desc"}},  # numerically, not as the text of a keyword sub-field
        {"title.keyword": {"order": "asc"}},
        {"variants.color.raw": {"order": "asc", "nested": {"path": "variants"}}},
    ]
    assert {"range": {"year": {"gte": 1900}}} in body["post_filter"]["bool"]["filter"]
    assert {"range": {"title.keyword": {"gte": "a"}}} in body["post_filter"]["bool"]["filter"]
    assert translate.facet_agg("year", 10, catalog)["terms"]["field"] == "year"

