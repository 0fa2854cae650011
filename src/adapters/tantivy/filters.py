"""Filters as tantivy queries, built object by object: no value is ever parsed as syntax."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import tantivy

from searchport.adapters.tantivy import values
from searchport.adapters.tantivy.schema import (
    ID_FIELD,
    PRESENT_FIELD,
    SEQ_FIELD,
    FieldSpec,
    IndexLayout,
    lat_field,
    lon_field,
    text_analyzer,
)
from searchport.domain.errors import InvalidRequest, UnsupportedFeature
from searchport.domain.geo_shapes import in_polygon, polygon_box
from searchport.domain.query import (
    AllOf,
    AnyOf,
    ExistsFilter,
    Filter,
    GeoBoxFilter,
    GeoPolygonFilter,
    GeoRadiusFilter,
    Negated,
    NotFilter,
    RangeFilter,
    Scalar,
    TermFilter,
)
from searchport.domain.shaping import format_number

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_TERM_COERCERS: dict[str, Callable[[Any], Any]] = {
    "keyword": values.as_keyword,
    "integer": values.as_integer,
    "float": values.as_float,
    "boolean": values.as_boolean,
}
_RANGE_TYPES = {"integer": tantivy.FieldType.Integer, "float": tantivy.FieldType.Float}
_FEW_DOCUMENTS = 64  # below this, a disjunction of terms beats a term set
# the documents a query matches, with the point of a geo_point field: (seq, lat, lon)
PointsIn = Callable[[tantivy.Query, str], list[tuple[int, float, float]]]


def field_spec(layout: IndexLayout, name: str, action: str) -> FieldSpec:
    """The spec of a typed field, or a 400 naming it (``action``: "filter on", "sort by"...)."""
    spec = layout.spec(name)
    if spec is None:
        raise InvalidRequest(f'Cannot {action} "{name}": it is not a typed field of this index')
    return spec


def must(queries: Sequence[tantivy.Query]) -> tantivy.Query:
    if not queries:
        return tantivy.Query.all_query()
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in queries])


def any_of(queries: Sequence[tantivy.Query]) -> tantivy.Query:
    if not queries:
        return tantivy.Query.empty_query()
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])


def exclude(query: tantivy.Query) -> tantivy.Query:
    # A boolean query with only MustNot matches nothing: exclusion needs a positive side.
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, tantivy.Query.all_query()), (tantivy.Occur.MustNot, query)]
    )


def id_queries(schema: tantivy.Schema, ids: Sequence[str] | None,
               excluded: Sequence[str]) -> list[tantivy.Query]:
    """``SearchQuery.ids`` and ``excluded_ids`` as queries on the stored document id."""
    found = []
    if ids is not None:
        found.append(tantivy.Query.term_set_query(schema, ID_FIELD, list(ids)))
    if excluded:
        found.append(exclude(tantivy.Query.term_set_query(schema, ID_FIELD, list(excluded))))
    return found


def unscored(query: tantivy.Query) -> tantivy.Query:
    """A filter narrows the matches without moving their relevance."""
    return tantivy.Query.const_score_query(query, 0.0)


def box_query(schema: tantivy.Schema, box: GeoBoxFilter) -> tantivy.Query:
    """Points inside the box; a box whose west edge is east of its east edge crosses the
    antimeridian."""
    lat = _between(schema, lat_field(box.field), box.south, box.north)
    lon = lon_field(box.field)
    if box.west <= box.east:
        return must([lat, _between(schema, lon, box.west, box.east)])
    return must([lat, any_of([_between(schema, lon, box.west, 180.0),
                              _between(schema, lon, -180.0, box.east)])])


def _between(schema: tantivy.Schema, field: str, low: float, high: float) -> tantivy.Query:
    return tantivy.Query.range_query(schema, field, tantivy.FieldType.Float, low, high)


class FilterTranslator:
    def __init__(self, layout: IndexLayout, schema: tantivy.Schema,
                 points_in: PointsIn | None = None) -> None:
        self._layout = layout
        self._schema = schema
        self._analyzer = text_analyzer()
        self._points_in = points_in

    def translate(self, flt: Filter) -> tantivy.Query:
        match flt:
            case AllOf(filters=members):  # Must clauses: every one must match
                return tantivy.Query.boolean_query(
                    [(tantivy.Occur.Must, self.translate(member)) for member in members])
            case AnyOf(filters=members):  # Should clauses only: at least one must match
                return any_of([self.translate(member) for member in members])
            case Negated(filter=inner):  # every document the inner query leaves out
                return exclude(self.translate(inner))
            case GeoRadiusFilter():  # no exact distance query in tantivy-py
                raise UnsupportedFeature("aroundRadius", "tantivy")
            case GeoBoxFilter(field=field):
                self._geo_spec(field)
                return box_query(self._schema, flt)
            case GeoPolygonFilter():
                return self._polygon(flt)
            case ExistsFilter(field=field, exists=exists):
                field_spec(self._layout, field, "filter on")
                present = tantivy.Query.term_query(self._schema, PRESENT_FIELD, field)
                return present if exists else exclude(present)
            case RangeFilter(field=field):
                spec = field_spec(self._layout, field, "filter on")
                return self._range(spec, flt.min, flt.max, flt.min_exclusive,
                                   flt.max_exclusive)
            case TermFilter(field=field, values=wanted):
                return self.equals_any(field_spec(self._layout, field, "filter on"), wanted)
            case NotFilter(field=field, values=wanted):
                return exclude(self.equals_any(field_spec(self._layout, field, "filter on"),
                                               wanted))
        raise TypeError(f"unknown filter {flt!r}")

    def _geo_spec(self, name: str) -> None:
        if field_spec(self._layout, name, "filter on").type != "geo_point":
            raise InvalidRequest(f'Cannot filter "{name}" by area: it is not a geo_point field')

    def _polygon(self, polygon: GeoPolygonFilter) -> tantivy.Query:
        """tantivy has no polygon query: the points inside the polygon's box are read from
        their columns and tested here, and the documents inside are named."""
        self._geo_spec(polygon.field)
        if self._points_in is None:
            raise UnsupportedFeature("insidePolygon without an open index", "tantivy")
        candidates = self._points_in(box_query(self._schema, polygon_box(polygon)),
                                     polygon.field)
        inside = [seq for seq, lat, lon in candidates if in_polygon(lat, lon, polygon.points)]
        if len(inside) < _FEW_DOCUMENTS:
            return any_of([tantivy.Query.term_query(self._schema, SEQ_FIELD, seq)
                           for seq in inside])
        return tantivy.Query.term_set_query(self._schema, SEQ_FIELD, inside)

    def equals_any(self, spec: FieldSpec, wanted: Sequence[Scalar]) -> tantivy.Query:
        if spec.type == "text":
            return any_of([self._text_phrase(spec.name, value) for value in wanted])
        if spec.type == "date":
            return any_of([self._date_range(spec, value, value) for value in wanted])
        coerce = _TERM_COERCERS.get(spec.type)
        if coerce is None:
            raise InvalidRequest(
                f'Cannot filter on "{spec.name}" by value: a {spec.type} field is filtered '
                f"with geoGrid bounds"
            )
        terms = list(dict.fromkeys(_checked(spec, coerce, value) for value in wanted))
        if len(terms) == 1:
            return tantivy.Query.term_query(self._schema, spec.name, terms[0])
        return tantivy.Query.term_set_query(self._schema, spec.name, terms)

    def _text_phrase(self, name: str, value: Scalar) -> tantivy.Query:
        tokens = self._analyzer.analyze(_checked_text(name, value))
        if not tokens:
            return tantivy.Query.empty_query()
        if len(tokens) == 1:
            return tantivy.Query.term_query(self._schema, name, tokens[0])
        return tantivy.Query.phrase_query(self._schema, name, list(tokens))

    def _range(self, spec: FieldSpec, low: float | str | None, high: float | str | None,
               low_exclusive: bool = False, high_exclusive: bool = False) -> tantivy.Query:
        if low is None and high is None:
            return tantivy.Query.term_query(self._schema, PRESENT_FIELD, spec.name)
        if spec.type == "date":
            return self._date_range(spec, low, high)
        field_type = _RANGE_TYPES.get(spec.type)
        if field_type is None:
            raise InvalidRequest(
                f'Cannot filter "{spec.name}" by range: it is a {spec.type} field, ranges '
                f"need a number or date field"
            )
        lower = None if low is None else _checked(spec, values.as_float, low)
        upper = None if high is None else _checked(spec, values.as_float, high)
        bounds: tuple[Any, Any] = (lower, upper)
        include = (not low_exclusive, not high_exclusive)
        if spec.type == "integer":  # inclusive integer bounds inside the float ones
            first = None if lower is None else _integer_above(lower, low_exclusive)
            last = None if upper is None else _integer_below(upper, high_exclusive)
            if (first is not None and first > _I64_MAX) or (last is not None and last < _I64_MIN):
                return tantivy.Query.empty_query()  # beyond what a 64-bit field can hold
            bounds = (None if first is None else max(_I64_MIN, first),
                      None if last is None else min(_I64_MAX, last))
            include = (True, True)
        if None not in bounds and (bounds[0] > bounds[1] or (
                bounds[0] == bounds[1] and not all(include))):
            return tantivy.Query.empty_query()
        return tantivy.Query.range_query(self._schema, spec.name, field_type,
                                         bounds[0], bounds[1],
                                         include_lower=include[0], include_upper=include[1])

    def _date_range(self, spec: FieldSpec, low: Any, high: Any) -> tantivy.Query:
        # A written date covers a span: "max: 2020-12-31" includes that whole day.
        start = None if low is None else _checked(spec, values.date_span, low)[0]
        end = None if high is None else _checked(spec, values.date_span, high)[1]
        if start is not None and end is not None and start >= end:
            return tantivy.Query.empty_query()
        return tantivy.Query.range_query(self._schema, spec.name, tantivy.FieldType.Date,
                                         start, end, include_upper=end is None)


def _integer_above(bound: float, exclusive: bool) -> int:
    """The least integer above (``exclusive``) or at ``bound``."""
    return math.floor(bound) + 1 if exclusive else math.ceil(bound)


def _integer_below(bound: float, exclusive: bool) -> int:
    """The greatest integer below (``exclusive``) or at ``bound``."""
    return math.ceil(bound) - 1 if exclusive else math.floor(bound)


def _checked(spec: FieldSpec, coerce: Callable[[Any], Any], value: Any) -> Any:
    try:
        return coerce(value)
    except values.BadValue as exc:
        raise InvalidRequest(
            f'Filter "{spec.name}" {exc}, got {values.describe(value)}'
        ) from None


def _checked_text(name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InvalidRequest(f'Filter "{name}" expects text, got {values.describe(value)}')
    return value if isinstance(value, str) else format_number(value)

