"""Domain filters as one Typesense ``filter_by`` expression.

What Typesense 0.24.1 does, verified against the real server (see
``tests/integration/test_typesense_filters.py``), and what follows from it:

- A string value is written between backticks; inside them ``&&``, ``||``, commas, brackets,
  parentheses and quotes are plain text. There is no escape for a backtick itself: a
  backslash is not honoured (``x\\` || n:>0`` still ends the value there and injects a
  clause), except that in a list a backslash before the closing backtick swallows the rest
  of the list. So backticks and backslashes are taken out of the value. That matches the
  same documents, because string filters compare tokens and the tokeniser drops every
  symbol the schema does not list in ``symbols_to_index``. One of the two listed in
  ``token_separators`` becomes a space; one listed in ``symbols_to_index`` cannot be
  expressed (400).
- String equality is therefore Typesense's: token by token, case-insensitive, symbols
  ignored (``tom & JERRY`` equals ``Tom & Jerry``; a value without any letter or digit
  matches nothing).
- An empty value in a list is left out (it equals nothing): 0.24.1 misreads a list of three
  or more values that starts with one.
- ``id`` compares whole strings. An empty id value crashes the 0.24.1 server, so empty ids
  are dropped (no id is empty) and a backtick or a backslash in an id is refused.
- ``!=`` does not exist for numbers: a not filter on a number is written as ranges
  (``(f:<v || f:>v)``), which also leaves out documents without the field, so it is used only
  when the schema says the field is not optional; otherwise it is refused.
- ``exists``: a field that is not optional and not an array (and ``id``) is in every
  document: ``exists: true`` is no clause, ``exists: false`` the clause ``NEVER``, which
  holds for no document. Otherwise a number is present when ``f:>=<the type's minimum>``,
  a boolean when ``f:=[true,false]`` and missing when ``f:!=true && f:!=false``. Anything
  else is refused (0.24.1 has no comparison that holds for a missing string or number).
- An ISO-8601 date on a numeric field is Unix seconds, and covers a span as on the other
  engines: a date (``2020-05-10``) its whole day, a date-time its second. Equality is
  ``f:>=start && f:<end``, a ``max`` bound ``f:<end`` (so ``max: 2020-05-10`` includes that
  day's evening), a ``min`` bound ``f:>=start``.
- ``||`` and parentheses group across fields (``(genre:=`a` || year:>2000)``). ``AnyOf`` is
  its members in parentheses joined by ``||`` (no clause when one member holds for every
  document); ``AllOf`` its members joined by ``&&``. ``Negated`` is pushed down to the
  filters (De Morgan): the complement of an equality is the not filter above, of a not
  filter the equality, of ``exists`` the other ``exists``; a string's or a boolean's ``!=``
  keeps the documents without the field, as a complement must. The complement of a range is
  the complementary comparisons (``(f:<lo || f:>hi)``), exact only on a number field every
  document holds once: on an optional or array field it is refused (no comparison selects a
  document without the number, and "some value outside" is not "no value inside"), as is a
  negated geo radius.
- Field names come from the schema (``Schema.get``), never from the request as such.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from searchport.adapters.typesense.schema import ENGINE, ID_FIELD, FieldInfo, Schema
from searchport.domain.errors import InvalidRequest, UnsupportedFeature
from searchport.domain.geo_shapes import box_corners, counter_clockwise, straight_edges
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

BACKTICK = "`"
UNQUOTABLE = (BACKTICK, "\\")
EMPTY = BACKTICK * 2
# Holds for no document: ids compare whole strings and a document has one id. It needs no
# field of the schema (an unindexed field cannot be filtered on) and no empty id (which
# crashes 0.24.1).
NEVER = "(id:=`0` && id:=`1`)"
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
MINIMUM = {
    "int32": "-2147483648",
    "int64": "-9223372036854775808",
    "float": "-3.4028234663852886e38",
}


def filter_by(filters: Iterable[Filter], schema: Schema) -> str:
    """Every filter ANDed; an empty string when nothing narrows the search."""
    clauses = [c for f in filters if (c := clause(f, schema))]
    return " && ".join(clauses)


def clause(f: Filter, schema: Schema, negate: bool = False) -> str:
    """One filter, or its complement when ``negate``; an empty string when it holds for
    every document."""
    match f:
        case AllOf(filters=members):
            parts = [clause(m, schema, negate) for m in members]
            if negate:  # some member fails: any member's complement
                return "" if "" in parts else _group(parts, " || ")
            return _group([p for p in parts if p], " && ")
        case AnyOf(filters=members):
            parts = [clause(m, schema, negate) for m in members]
            if negate:  # none of them holds: every member's complement
                return _group([p for p in parts if p], " && ")
            return "" if "" in parts else _group(parts, " || ")
        case Negated(filter=inner):
            return clause(inner, schema, not negate)
        case TermFilter() | RangeFilter() | NotFilter() | ExistsFilter() | GeoRadiusFilter():
            return _on_field(f, schema, negate)
        case GeoBoxFilter() | GeoPolygonFilter():
            return _area(f, schema, negate)
    raise TypeError(f"unknown filter {f!r}")


EDGE_STEP = 0.5  # degrees between the points of a polygon edge (an arc strays < 50 m)


def _area(f: GeoBoxFilter | GeoPolygonFilter, schema: Schema, negate: bool) -> str:
    """A box or polygon as Typesense's polygon filter ``field:(lat1, lng1, lat2, lng2,
    lat3, lng3, ...)``, vertices counter-clockwise; a box across the antimeridian is two
    polygons, either of which holds. Typesense draws an edge as a great-circle arc, so
    points are added along each edge to keep it on the straight line the filter means."""
    info = schema.get(f.field, "filter")
    if info.type != "geopoint":
        raise InvalidRequest(f"An area filter needs a geopoint field; '{f.field}' is "
                             f"{info.type}")
    if negate:
        raise UnsupportedFeature(f"A negated area filter on '{f.field}'", ENGINE)
    polygons = box_corners(f) if isinstance(f, GeoBoxFilter) else [f.points]
    parts = [info.name + ":(" + ", ".join(
        f"{coordinate(p.lat)}, {coordinate(p.lon)}"
        for p in straight_edges(counter_clockwise(points), EDGE_STEP)) + ")"
        for points in polygons]
    return _group(parts, " || ")


def _group(parts: list[str], operator: str) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return "(" + operator.join(f"({p})" for p in parts) + ")"


def _on_field(f: TermFilter | RangeFilter | NotFilter | ExistsFilter | GeoRadiusFilter,
              schema: Schema, negate: bool) -> str:
    info = schema.get(f.field, "filter")
    if isinstance(f, GeoRadiusFilter):
        if info.type != "geopoint":
            raise InvalidRequest(f"A geo radius needs a geopoint field; '{f.field}' is "
                                 f"{info.type}")
        if negate:
            raise UnsupportedFeature(f"A negated geo radius on '{f.field}'", ENGINE)
        return f"{info.name}:({coordinate(f.lat)}, {coordinate(f.lon)}, {_km(f.radius_m)} km)"
    if info.type == "geopoint":
        raise UnsupportedFeature(f"A filter on the geopoint field '{f.field}'", ENGINE)
    if negate:  # the complement of "some value is one of" is "no value is one of"
        match f:
            case TermFilter(field=field, values=values):
                f = NotFilter(field=field, values=values)
            case NotFilter(field=field, values=values):
                f = TermFilter(field=field, values=values)
            case ExistsFilter(field=field, exists=exists):
                f = ExistsFilter(field=field, exists=not exists)
    match f:
        case TermFilter(values=values) if info.is_number:
            return _numbers_equal(info, values)
        case TermFilter(values=values):
            return f"{info.name}:={_list(info, values, schema)}"
        case NotFilter(values=values):
            return _not(info, values, schema)
        case RangeFilter(min=low, max=high, min_exclusive=strict_low,
                         max_exclusive=strict_high):
            return _range(info, low, high, strict_low, strict_high, negate)
        case ExistsFilter(exists=exists):
            return _exists(info, exists)
    raise TypeError(f"unknown filter {f!r}")


def coordinate(value: float) -> str:
    """A latitude or longitude in plain decimals, as Typesense reads it."""
    return format(Decimal(repr(float(value))), "f")  # never an exponent


def _km(meters: float) -> str:
    """Meters as kilometres, exact: 0.24.1 takes a radius in ``km`` or ``mi`` only."""
    km = Decimal(repr(float(meters))) / 1000
    return format(km.normalize(), "f")


def _list(info: FieldInfo, values: Iterable[Scalar], schema: Schema) -> str:
    written = list(dict.fromkeys(_value(info, v, schema) for v in values))
    # An empty value equals nothing, and 0.24.1 misreads a list that starts with one.
    filled = [w for w in written if w != EMPTY]
    if not filled and info is ID_FIELD:
        raise InvalidRequest("Cannot filter on 'id' with an empty value: no id is empty")
    written = filled or [EMPTY]
    return written[0] if len(written) == 1 else f"[{','.join(written)}]"


def _not(info: FieldInfo, values: Iterable[Scalar], schema: Schema) -> str:
    name = info.name
    if info is ID_FIELD:
        raise UnsupportedFeature("A not filter on 'id'", ENGINE)
    if info.is_string:
        return f"{name}:!={_list(info, values, schema)}"
    if info.is_bool:  # 0.24.1 reads a list after != on booleans as "any differs"
        written = list(dict.fromkeys(_value(info, v, schema) for v in values))
        return " && ".join(f"{name}:!={w}" for w in written)
    if info.optional or info.is_array:
        raise UnsupportedFeature(
            f"A not filter on the optional {info.type} field '{name}'", ENGINE
        )
    exact, spans = _numbers(info, values)
    return " && ".join([*(f"({name}:<{w} || {name}:>{w})" for w in exact),
                        *(f"({name}:<{start} || {name}:>={end})" for start, end in spans)])


def _numbers_equal(info: FieldInfo, values: Iterable[Scalar]) -> str:
    name = info.name
    exact, spans = _numbers(info, values)
    parts = [f"({name}:>={start} && {name}:<{end})" for start, end in spans]
    if exact:
        parts.insert(0, f"{name}:={exact[0] if len(exact) == 1 else '[' + ','.join(exact) + ']'}")
    return parts[0] if len(parts) == 1 else f"({' || '.join(parts)})"


def _numbers(info: FieldInfo, values: Iterable[Scalar]) -> tuple[list[str], list[tuple[str, str]]]:
    """The numbers among ``values``, and the spans of Unix seconds of the dates."""
    exact: dict[str, None] = {}
    spans: dict[tuple[str, str], None] = {}
    for value in values:
        found = _as_number_or_span(info, value)
        if isinstance(found, tuple):
            spans[(number(found[0]), number(found[1]))] = None
        else:
            exact[number(found)] = None
    return list(exact), list(spans)


_COMPLEMENT = {">=": "<", ">": "<=", "<=": ">", "<": ">="}


def _range(info: FieldInfo, low: float | str | None, high: float | str | None,
           strict_low: bool = False, strict_high: bool = False, negate: bool = False) -> str:
    """Some value in the range; with ``negate`` no value in it, written as the complementary
    comparisons, which is exact only when every document holds exactly one value."""
    name = info.name
    if not info.is_number:
        raise UnsupportedFeature(f"A range filter on the {info.type} field '{name}'", ENGINE)
    bounds = _bounds(info, low, high, strict_low, strict_high)
    if not negate:
        return " && ".join(f"{name}:{op}{value}" for op, value in bounds)
    if info.optional or info.is_array:  # 0.24.1 cannot select a document without a number
        what = "optional " if info.optional else ""
        raise UnsupportedFeature(
            f"A negated range filter on the {what}{info.type} field '{name}'", ENGINE)
    if not bounds:
        return NEVER  # the range holds every value, and every document has one
    return _group([f"{name}:{_COMPLEMENT[op]}{value}" for op, value in bounds], " || ")


def _bounds(info: FieldInfo, low: float | str | None, high: float | str | None,
            strict_low: bool, strict_high: bool) -> list[tuple[str, str]]:
    """The comparisons (operator, number) that together say "in the range"."""
    parts = []
    if isinstance(low, str):
        parts.append((">=", number(_span(low)[0])))
    elif low is not None and strict_low and info.is_integer:
        parts.append((">=", str(math.floor(low) + 1)))  # the least integer above
    elif low is not None and strict_low:
        parts.append((">", number(low)))
    elif low is not None:
        parts.append((">=", _bound(info, low, math.ceil)))
    if isinstance(high, str):
        parts.append(("<", number(_span(high)[1])))
    elif high is not None and strict_high and info.is_integer:
        parts.append(("<=", str(math.ceil(high) - 1)))  # the greatest integer below
    elif high is not None and strict_high:
        parts.append(("<", number(high)))
    elif high is not None:
        parts.append(("<=", _bound(info, high, math.floor)))
    return parts


def _exists(info: FieldInfo, exists: bool) -> str:
    name = info.name
    if info is ID_FIELD or not (info.optional or info.is_array):
        return "" if exists else NEVER  # every document has the field
    if info.is_bool and not info.is_array:
        return f"{name}:=[true,false]" if exists else f"{name}:!=true && {name}:!=false"
    if exists and info.is_number and not info.is_array:
        return f"{name}:>={MINIMUM[info.type]}"
    raise UnsupportedFeature(f"An exists filter on the {info.type} field '{name}'", ENGINE)


def _value(info: FieldInfo, value: Scalar, schema: Schema) -> str:
    if info.is_bool:
        return "true" if _as_bool(info, value) else "false"
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        text = format_number(value)
    else:
        text = value
    return literal(text, schema, exact=info is ID_FIELD)


def literal(text: str, schema: Schema, *, exact: bool = False) -> str:
    """A string between backticks, without backticks or backslashes inside (see the module
    docstring); ``exact`` (ids): refused when it holds one."""
    for char in UNQUOTABLE:
        if char not in text:
            continue
        if exact or char in schema.symbols_to_index:
            raise InvalidRequest(
                f"A filter value cannot contain {char!r} for this typesense collection"
            )
        text = text.replace(char, " " if char in schema.token_separators else "")
    return f"{BACKTICK}{text}{BACKTICK}"


def number(value: int | float) -> str:
    """Plain positional notation (Typesense reads ``1e-07`` as no number)."""
    if isinstance(value, int):
        return str(value)
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def _as_number_or_span(info: FieldInfo, value: Scalar) -> int | float | tuple[int, int]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        for kind in (int, float):
            try:
                parsed = kind(value.strip())
            except ValueError:
                continue
            if math.isfinite(parsed):
                return parsed
        with contextlib.suppress(ValueError, OverflowError):
            return _span(value)
    raise InvalidRequest(
        f"Cannot filter '{info.name}' on {value!r}: the field holds numbers (dates as Unix "
        "seconds)"
    )


def _span(text: str) -> tuple[int, int]:
    """The Unix seconds ``[start, end)`` an ISO-8601 date covers: a date its whole day, a
    date-time its second (no zone: UTC)."""
    text = text.strip()
    if _DAY.fullmatch(text):
        start = datetime.combine(date.fromisoformat(text), time(), tzinfo=UTC)
        return _seconds(start), _seconds(start + timedelta(days=1))
    moment = datetime.fromisoformat(text)
    second = _seconds(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    return second, second + 1


def _seconds(moment: datetime) -> int:
    return math.floor(moment.timestamp())


def _as_bool(info: FieldInfo, value: Scalar) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise InvalidRequest(f"Cannot filter '{info.name}' on {value!r}: the field holds booleans")


def _bound(info: FieldInfo, bound: float, rounding: Callable[[float], int]) -> str:
    if info.is_integer and not float(bound).is_integer():
        return str(rounding(bound))
    return number(bound)
