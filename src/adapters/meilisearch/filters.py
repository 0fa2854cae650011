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
members' expressions in parentheses joined by ``OR``; ``Negated`` is ``NOT (...)``, which
Meilisearch reads as the complement (documents without the attribute included, as its
``!=`` and ``NOT IN``).

Meilisearch has no date type: dates are stored as Unix timestamps (seconds) and compared as
numbers. On a field the config types ``date``, a written date in a filter is turned into
the seconds it covers, as on the other engines (a date its whole day, a date-time its
second): equality is ``f >= start AND f < end``, ``max`` is ``f < end``, ``not`` is ``NOT``
of the equality. On any other field a date range is refused (its values may be strings).
"""

from __future__ import annotations

import contextlib
import math
import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from searchport.domain.errors import InvalidRequest, UnsupportedFeature
from searchport.domain.query import (
    AnyOf,
    ExistsFilter,
    Filter,
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
    "WITH", "_geoRadius", "_geoBoundingBox",
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
            parts.append(f"({name} >= {found[0]} AND {name} < {found[1]})")
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


def expression(f: Filter, dates: frozenset[str] = frozenset()) -> str:
    """One filter as one Meilisearch filter expression; ``dates``: the fields the config
    types ``date`` (stored as Unix seconds)."""
    match f:
        case AnyOf(filters=members):
            return " OR ".join(f"({expression(m, dates)})" for m in members)
        case Negated(filter=inner):
            return f"NOT ({expression(inner, dates)})"
        case TermFilter() | RangeFilter() | NotFilter() | ExistsFilter() | GeoRadiusFilter():
            return _on_field(f, dates)
    raise TypeError(f"unknown filter {f!r}")


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
        case RangeFilter(field=field, min=low, max=high) if dated:
            parts = []
            if low is not None:
                parts.append(f"{name} {_date_bound(field, low, False, f.min_exclusive)}")
            if high is not None:
                parts.append(f"{name} {_date_bound(field, high, True, f.max_exclusive)}")
            return " AND ".join(parts)
        case RangeFilter(field=field, min=low, max=high):
            parts = []
            if low is not None:
                parts.append(f"{name} {'>' if f.min_exclusive else '>='} {_bound(field, low)}")
            if high is not None:
                parts.append(f"{name} {'<' if f.max_exclusive else '<='} {_bound(field, high)}")
            return " AND ".join(parts)
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


def expressions(filters: Iterable[Filter], dates: frozenset[str] = frozenset()) -> list[str]:
    return [expression(f, dates) for f in filters]


def sort_rules(clauses: Iterable[SortClause], geo: GeoSort | None = None) -> list[str]:
    """``field:asc`` rules. Relevance is always part of Meilisearch's ranking (where the
    index's ``rankingRules`` put it), so ``_score`` descending needs no rule; ascending
    relevance cannot be asked for. A ``geo`` sort comes first: ``_geoPoint(lat,lng):asc``,
    which reads the ``_geo`` field only (documents without it last); like every sort rule
    it orders hits where the ``sort`` ranking rule sits (README)."""
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
