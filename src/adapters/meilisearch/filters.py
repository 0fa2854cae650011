"""Filters and sort as Meilisearch expressions, built so that no value or field name can
change the shape of the expression.

- A string value is always written in double quotes with ``\\`` and ``"`` escaped by a
  backslash. Meilisearch (1.4 and later) reads a quoted value up to the first unescaped
  quote, turns ``\\"`` into ``"`` and then ``\\\\`` into ``\\``, so the value it compares with
  is exactly the one given, whatever it contains (quotes, brackets, ``AND``/``OR``/``TO``...).
- Numbers and booleans are bare words (``12``, ``-0.5``, ``1e16``, ``true``): characters the
  filter grammar reads as one word.
- Attribute names cannot be escaped in Meilisearch's grammar, so only names made of
  letters, digits, ``_``, ``-`` and ``.`` are accepted (anything else is a 400); a name that
  is one of the grammar's keywords is written in quotes.

One ``Filter`` becomes one expression; the search sends them as a list (ANDed by
Meilisearch), so an ``OR`` inside one expression never reaches another. ``AnyOf`` is its
members' expressions in parentheses joined by ``OR`` (``AllOf``: by ``AND``); ``Negated``
is ``NOT (...)``, which Meilisearch reads as the complement (documents without the
attribute included, as its ``!=`` and ``NOT IN``).

A range with both bounds is ``f low TO high``: Meilisearch reads it as one range over the
field's values ("some value in [low, high]", both bounds included), as searchport means it
for a field with several values. ``f >= low AND f <= high`` would be two conditions, each
held by some value (``[1, 50]`` is in neither ``[10, 20]`` nor its ``TO``, but it is in that
``AND``). ``TO`` has no strict form; Meilisearch compares numbers as doubles, so a strict
bound is written as the next double inward (``> 10`` is ``>= 10.000000000000002``), which
selects exactly the same values; past the largest double there is none, and such a range is
refused. A range with one bound stays one comparison (``>``, ``>=``, ``<``, ``<=``), exact
as it is.

Meilisearch has no date type: dates are stored as Unix timestamps (seconds) and compared as
numbers. On a field the config types ``date``, a written date in a filter is turned into
the seconds it covers, as on the other engines (a date its whole day, a date-time its
second): equality is ``f start TO <the double before end>``, ``max`` is ``f < end``, ``not``
is ``NOT`` of the equality. On any other field a date range is refused (its values may be
strings).
"""

from __future__ import annotations

import contextlib
import math
import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from fractions import Fraction

from searchport.domain.errors import InvalidRequest, UnsupportedFeature
from searchport.domain.query import (
    AllOf,
    AnyOf,
    ExistsFilter,
    Filter,
    GeoBoxFilter,
    GeoPolygonFilter,
    GeoRadiusFilter,
    GeoSort,
    Negated,
    NotFilter,
    RangeFilter,
    Scalar,
    SortClause,
    TermFilter,
)

ENGINE = "meilisearch"
GEO_FIELD = "_geo"  # the one geo field: {"lat", "lng"}; _geoRadius and _geoBoundingBox read it
KEYWORDS = frozenset({
    "AND", "OR", "IN", "NOT", "TO", "EXISTS", "IS", "NULL", "EMPTY", "CONTAINS", "STARTS",
    "WITH", "_geoRadius", "_geoBoundingBox", "_geoPolygon",
})
_NAME_PUNCTUATION = frozenset("_-.")


def _name_char(char: str) -> bool:
    """Letters (any script), decimal digits, ``_``, ``-`` and ``.``: characters Meilisearch
    reads as part of one word (its ``is_alphanumeric`` holds for every letter and digit)."""
    if char in _NAME_PUNCTUATION:
        return True
    category = unicodedata.category(char)
    return category.startswith("L") or category == "Nd"


def safe_name(name: str) -> bool:
    return bool(name) and all(_name_char(c) for c in name)


def attribute(name: str, purpose: str = "filter") -> str:
    """A field name as a filter attribute; a 400 for a name the grammar cannot express."""
    if not safe_name(name):
        raise InvalidRequest(
            f"The field {name!r} cannot be used in a {ENGINE} {purpose}: field names there "
            "may only contain letters, digits, '_', '-' and '.'"
        )
    return f'"{name}"' if name in KEYWORDS else name


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def number(value: int | float) -> str:
    """A number as one bare word (``1e+16`` has a ``+``, which ends a word: ``1e16``)."""
    text = str(value) if isinstance(value, int) else repr(value)
    return text.replace("e+", "e")


def literal(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number(value)
    return quote(value)


def _values(values: Iterable[Scalar]) -> str:
    return "[" + ", ".join(literal(v) for v in values) + "]"


def _bound(field: str, value: float | str) -> str:
    if isinstance(value, str):
        raise InvalidRequest(
            f"A date range (on {field!r}) is not supported by the {ENGINE} engine: it compares "
            "numbers only; store dates as Unix timestamps, give the field 'type: date' in the "
            "config (or filter with numbers)"
        )
    return number(value)


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def span(text: str) -> tuple[int, int] | None:
    """The Unix seconds ``[start, end)`` a written date covers (no zone: UTC); ``None`` when
    ``text`` is no ISO-8601 date."""
    text = text.strip()
    with contextlib.suppress(ValueError, OverflowError):
        if _DAY.fullmatch(text):
            start = datetime.combine(date.fromisoformat(text), time(), tzinfo=UTC)
            return _seconds(start), _seconds(start + timedelta(days=1))
        moment = datetime.fromisoformat(text)
        second = _seconds(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
        return second, second + 1
    return None


def _seconds(moment: datetime) -> int:
    return math.floor(moment.timestamp())


def _date_equality(name: str, values: Iterable[Scalar]) -> str:
    """Any of ``values`` on a date field: numbers as they are, written dates as spans."""
    exact: list[Scalar] = []
    parts: list[str] = []
    for value in values:
        found = span(value) if isinstance(value, str) else None
        if found is None:
            exact.append(value)
        else:
            end = _inward(name, found[1], upper=True)
            parts.append(f"{name} {found[0]} TO {end}")
    if exact:
        parts.insert(0, f"{name} IN {_values(exact)}")
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def _date_bound(field: str, value: float | str, upper: bool, strict: bool = False) -> str:
    if not isinstance(value, str):
        return f"{'<' if upper else '>'}{'' if strict else '='} {number(value)}"
    found = span(value)
    if found is None:
        raise InvalidRequest(f"The bounds of {field!r} must be numbers or ISO-8601 dates")
    return f"< {found[1]}" if upper else f">= {found[0]}"


def _inward(field: str, value: float, upper: bool) -> str:
    """The double next to ``value`` inside a range it bounds strictly: the largest double
    below it (``upper``) or the smallest above it, compared exactly (an integer past the
    doubles' precision or range included)."""
    exact = Fraction(value)
    try:
        near = float(value)
    except OverflowError:
        near = math.inf if exact > 0 else -math.inf
    inward = -math.inf if upper else math.inf
    if math.isinf(near) and (near > 0) == upper:  # past the largest double: it is inside
        near = math.nextafter(near, inward)
    while math.isfinite(near) and (Fraction(near) >= exact if upper else Fraction(near) <= exact):
        near = math.nextafter(near, inward)
    if not math.isfinite(near):
        raise UnsupportedFeature(
            f"A range on {field!r} strictly {'below' if upper else 'above'} {number(value)} "
            "(no number lies beyond it)", ENGINE)
    return number(near)


def _inclusive(field: str, value: float | str, strict: bool, dated: bool, upper: bool) -> str:
    """A bound of ``f low TO high``, where both bounds are included."""
    if isinstance(value, str):
        if not dated:
            return _bound(field, value)  # a 400
        found = span(value)
        if found is None:
            raise InvalidRequest(f"The bounds of {field!r} must be numbers or ISO-8601 dates")
        return _inward(field, found[1], upper=True) if upper else str(found[0])
    if strict:
        return _inward(field, value, upper)
    return number(value)


def _range(name: str, f: RangeFilter, dated: bool) -> str:
    field, low, high = f.field, f.min, f.max
    if low is not None and high is not None:
        return (f"{name} {_inclusive(field, low, f.min_exclusive, dated, upper=False)} TO "
                f"{_inclusive(field, high, f.max_exclusive, dated, upper=True)}")
    if low is not None:
        if dated:
            return f"{name} {_date_bound(field, low, False, f.min_exclusive)}"
        return f"{name} {'>' if f.min_exclusive else '>='} {_bound(field, low)}"
    if high is not None:
        if dated:
            return f"{name} {_date_bound(field, high, True, f.max_exclusive)}"
        return f"{name} {'<' if f.max_exclusive else '<='} {_bound(field, high)}"
    raise InvalidRequest(f"A range on {field!r} needs a bound")


def expression(f: Filter, dates: frozenset[str] = frozenset()) -> str:
    """One filter as one Meilisearch filter expression; ``dates``: the fields the config
    types ``date`` (stored as Unix seconds)."""
    match f:
        case AllOf(filters=members):
            return " AND ".join(f"({expression(m, dates)})" for m in members)
        case AnyOf(filters=members):
            return " OR ".join(f"({expression(m, dates)})" for m in members)
        case Negated(filter=inner):
            return f"NOT ({expression(inner, dates)})"
        case TermFilter() | RangeFilter() | NotFilter() | ExistsFilter() | GeoRadiusFilter():
            return _on_field(f, dates)
        case GeoBoxFilter() | GeoPolygonFilter():
            return _area(f)
    raise TypeError(f"unknown filter {f!r}")


def _area(f: GeoBoxFilter | GeoPolygonFilter) -> str:
    """``_geoBoundingBox([north, east], [south, west])`` (its top-right corner, then its
    bottom-left one) or ``_geoPolygon([lat, lng], ...)`` (Meilisearch 1.22 and later); both
    read the reserved ``_geo`` field only."""
    if f.field != GEO_FIELD:
        raise UnsupportedFeature(f"An area filter on {f.field!r} (only on the {GEO_FIELD} "
                                 "field)", ENGINE)
    if isinstance(f, GeoBoxFilter):
        return (f"_geoBoundingBox([{number(f.north)}, {number(f.east)}], "
                f"[{number(f.south)}, {number(f.west)}])")
    return "_geoPolygon(" + ", ".join(f"[{number(p.lat)}, {number(p.lon)}]"
                                      for p in f.points) + ")"


def _on_field(f: TermFilter | RangeFilter | NotFilter | ExistsFilter | GeoRadiusFilter,
              dates: frozenset[str]) -> str:
    name = attribute(f.field)
    dated = f.field in dates
    match f:
        case TermFilter(values=values) if dated and any(isinstance(v, str) for v in values):
            return _date_equality(name, values)
        case TermFilter(values=(value,)):
            return f"{name} = {literal(value)}"
        case TermFilter(values=values):
            return f"{name} IN {_values(values)}"
        case RangeFilter():
            return _range(name, f, dated)
        case NotFilter(values=values) if dated and any(isinstance(v, str) for v in values):
            return f"NOT {_date_equality(name, values)}"
        case NotFilter(values=values):
            return f"{name} NOT IN {_values(values)}"
        case ExistsFilter(exists=True):  # Meilisearch counts a null value as existing
            return f"{name} EXISTS AND {name} IS NOT NULL"
        case ExistsFilter():
            return f"{name} NOT EXISTS OR {name} IS NULL"
        case GeoRadiusFilter(field=field, lat=lat, lon=lon, radius_m=meters):
            if field != GEO_FIELD:  # _geoRadius reads the reserved _geo field only
                raise UnsupportedFeature(
                    f"A geo radius on {field!r} (only on the {GEO_FIELD} field)", ENGINE)
            radius = int(meters) if float(meters).is_integer() else meters
            return f"_geoRadius({number(lat)}, {number(lon)}, {number(radius)})"
    raise TypeError(f"unknown filter {f!r}")


def sort_rules(clauses: Iterable[SortClause], geo: GeoSort | None = None) -> list[str]:
    """``field:asc`` rules. Relevance is always part of Meilisearch's ranking (where the
    index's ``rankingRules`` put it), so ``_score`` descending needs no rule; ascending
    relevance cannot be asked for. A ``geo`` sort comes first: ``_geoPoint(lat,lng):asc``,
    which reads the ``_geo`` field only (documents without it last); like every sort rule
    it orders hits where the ``sort`` ranking rule sits (docs/engines.md)."""
    rules = []
    if geo is not None:
        if geo.field != GEO_FIELD:
            raise UnsupportedFeature(
                f"A distance sort on {geo.field!r} (only on the {GEO_FIELD} field)", ENGINE)
        rules.append(f"_geoPoint({number(geo.lat)},{number(geo.lon)}):asc")
    for clause in clauses:
        if clause.field == "_score":
            if clause.order == "asc":
                raise UnsupportedFeature("Sorting by _score ascending", ENGINE)
            continue
        attribute(clause.field, "sort")  # validated; sort rules are never quoted
        rules.append(f"{clause.field}:{clause.order}")
    return rules
