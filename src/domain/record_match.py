"""Does one stored document satisfy a key's forced filters? (``GET .../documents/:id``)

A document fetched by id does not go through the engine's filters, so its record is checked
here. The answer is three-valued: ``True`` (it holds), ``False`` (it does not) and ``None``
(the engine might decide either way: a text field the engine analyses, a string that might
be coerced to a number, a date near a bound, a point near the radius). Only ``True`` lets
the document through, and the logic is Kleene's (``not None`` is ``None``), so a doubtful
case is never turned into a yes by a negation: a document is shown only when it certainly
matches.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from searchport.domain.geo_shapes import in_box, in_polygon
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

Verdict = bool | None
EARTH_RADIUS_M = 6_371_008.8
DAY_SECONDS = 86_400.0


def holds(filters: tuple[Filter, ...], source: dict[str, Any]) -> bool:
    """Every filter certainly holds for the document ``source`` (real field names)."""
    return _all(verdict(f, source) for f in filters) is True


def verdict(f: Filter, source: dict[str, Any]) -> Verdict:
    match f:
        case AllOf(filters=members):
            return _all(verdict(m, source) for m in members)
        case AnyOf(filters=members):
            return _any(verdict(m, source) for m in members)
        case Negated(filter=inner):
            return _not(verdict(inner, source))
        case TermFilter(field=field, values=wanted):
            return _any(_equal(w, v) for w in wanted for v in _values(source, field))
        case NotFilter(field=field, values=wanted):
            return _not(_any(_equal(w, v) for w in wanted for v in _values(source, field)))
        case ExistsFilter(field=field, exists=exists):
            present = _present(source, field)
            return present if exists or present is None else not present
        case RangeFilter(field=field):
            return _any(_in_range(f, v) for v in _values(source, field))
        case GeoRadiusFilter(field=field):
            return _any(_near(f, v) for v in _values(source, field))
        case GeoBoxFilter(field=field):
            return _any(_inside(f, v) for v in _values(source, field))
        case GeoPolygonFilter(field=field):
            return _any(_inside(f, v) for v in _values(source, field))
    return None


def _all(verdicts: Any) -> Verdict:
    result: Verdict = True
    for v in verdicts:
        if v is False:
            return False
        if v is None:
            result = None
    return result


def _any(verdicts: Any) -> Verdict:
    result: Verdict = False
    for v in verdicts:
        if v is True:
            return True
        if v is None:
            result = None
    return result


def _not(v: Verdict) -> Verdict:
    return None if v is None else not v


def _values(source: Any, path: str) -> list[Any]:
    """Every value at the dotted ``path`` (lists flattened; objects in lists followed)."""
    found: list[Any] = []
    nodes = [source]
    for part in path.split("."):
        nodes = [n.get(part) for n in _flat(nodes) if isinstance(n, dict) and part in n]
    found.extend(v for v in _flat(nodes) if v is not None)
    return found


def _flat(nodes: list[Any]) -> list[Any]:
    out: list[Any] = []
    for node in nodes:
        out.extend(_flat(node) if isinstance(node, list) else [node])
    return out


def _present(source: Any, path: str) -> Verdict:
    if _values(source, path):
        return True
    node: Any = source
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return None  # present but null or empty: engines differ


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _equal(wanted: Scalar, value: Any) -> Verdict:
    if isinstance(wanted, bool) or isinstance(value, bool):
        if isinstance(wanted, bool) and isinstance(value, bool):
            return wanted == value
        if isinstance(value, bool) and isinstance(wanted, str):  # "true" on a boolean field
            return wanted.strip().lower() == str(value).lower()
        return None if str(wanted).lower() == str(value).lower() else False
    number, got = _number(wanted), _number(value)
    if number is not None and got is not None:
        return number == got
    if isinstance(wanted, str) and isinstance(value, str):
        if wanted == value:
            return True
        low_w, low_v = wanted.casefold(), value.casefold()
        if low_w in low_v or low_v in low_w:
            return None  # an analysed text field, or a case-insensitive keyword
        a, b = _instant(wanted), _instant(value)
        if a is not None and b is not None and abs((a - b).total_seconds()) < DAY_SECONDS:
            return None  # one day may cover the other
        return False
    try:  # a number against a string: an engine may coerce one to the other
        return None if float(str(wanted)) == float(str(value)) else False
    except ValueError:
        return False


def _in_range(f: RangeFilter, value: Any) -> Verdict:
    got = _number(value)
    if isinstance(f.min, str) or isinstance(f.max, str):
        moment = _instant(value)
        if moment is None:
            return None if got is not None else False  # dates stored as numbers
        at = moment.timestamp()
        bounds = [b for b in (f.min, f.max) if b is not None]
        edges = [_instant(b) for b in bounds]
        if any(e is None or abs(e.timestamp() - at) < DAY_SECONDS for e in edges):
            return None
        low, high = (_instant(f.min) if f.min is not None else None,
                     _instant(f.max) if f.max is not None else None)
        return (low is None or at > low.timestamp()) and (high is None or at < high.timestamp())
    if got is None:
        return None if isinstance(value, str) else False
    if f.min is not None and (got < f.min or (f.min_exclusive and got == f.min)):
        return False
    return not (f.max is not None and (got > f.max or (f.max_exclusive and got == f.max)))


def _near(f: GeoRadiusFilter, value: Any) -> Verdict:
    point = _point(value)
    if point is None:
        return None
    lat, lon = point
    p1, p2 = math.radians(f.lat), math.radians(lat)
    dp, dl = p2 - p1, math.radians(lon - f.lon)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    distance = 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(a)))
    if abs(distance - f.radius_m) <= max(1.0, f.radius_m * 0.01):
        return None
    return distance < f.radius_m


def _inside(f: GeoBoxFilter | GeoPolygonFilter, value: Any) -> Verdict:
    point = _point(value)
    if point is None:
        return None
    lat, lon = point
    return in_box(lat, lon, f) if isinstance(f, GeoBoxFilter) else in_polygon(lat, lon,
                                                                              f.points)


def _point(value: Any) -> tuple[float, float] | None:
    if isinstance(value, dict):
        lat, lon = value.get("lat"), value.get("lon", value.get("lng"))
    elif isinstance(value, str) and value.count(",") == 1:
        lat, lon = value.split(",")
    else:
        return None
    try:
        return float(lat), float(lon)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
