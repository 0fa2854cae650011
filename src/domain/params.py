"""Parsing and validation of client parameters, once, for every engine.

Each function takes what arrived on the wire (already JSON-decoded where the parameter is
JSON) and returns domain structs in real field names, or raises ``InvalidRequest`` with a
sentence naming the parameter and what is wrong.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import msgspec

from searchport.domain.errors import InvalidRequest
from searchport.domain.fields import FieldMap
from searchport.domain.query import (
    ExistsFilter,
    FieldWeight,
    Filter,
    GeoBounds,
    GeoGridSpec,
    GeoPoint,
    HistogramSpec,
    NotFilter,
    RangeFilter,
    Scalar,
    SortClause,
    TermFilter,
)

MAX_LIST_ITEMS = 100
MAX_QUERY_CHARS = 2048  # characters of a query text, on every route that takes one
MAX_GEO_PRECISION = 29
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off", ""})


def decode_json(name: str, text: str) -> Any:
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):  # RecursionError: nesting too deep
        raise InvalidRequest(f"Invalid JSON in '{name}' parameter") from None


def clamp(value: int | None, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    return max(low, min(high, value))


def parse_flag(name: str, text: str | None) -> bool | None:
    if text is None:
        return None
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InvalidRequest(f"Invalid '{name}' parameter: expected true or false, got {text!r}")


def parse_list(name: str, text: str | None) -> tuple[str, ...] | None:
    """A comma-separated list: trimmed, empty entries dropped, duplicates removed."""
    if text is None:
        return None
    items = tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))
    if len(items) > MAX_LIST_ITEMS:
        raise InvalidRequest(f"Invalid '{name}' parameter: at most {MAX_LIST_ITEMS} fields")
    return items


def _require_object(name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or not value:
        raise InvalidRequest(f"Invalid '{name}' format: expected a non-empty JSON object")
    if len(value) > MAX_LIST_ITEMS:
        raise InvalidRequest(f"Invalid '{name}' format: at most {MAX_LIST_ITEMS} fields")
    return value


def sent(value: Any) -> str:
    """A decoded JSON value as the client wrote it (a number keeps every digit sent), for
    the messages that refuse it."""
    return msgspec.json.encode(value).decode()


def _is_number(value: Any) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond the float range
        return False


def parse_sort(value: Any, fields: FieldMap) -> tuple[SortClause, ...]:
    clauses = []
    for key, order in _require_object("sort", value).items():
        if not isinstance(order, str) or order.lower() not in ("asc", "desc"):
            raise InvalidRequest(
                f"Invalid 'sort' format: the order of '{key}' must be \"asc\" or \"desc\""
            )
        clauses.append(SortClause(field=fields.real(key), order=order.lower()))  # type: ignore[arg-type]
    return tuple(clauses)


def parse_boosts(value: Any, fields: FieldMap) -> tuple[FieldWeight, ...]:
    weights = []
    for key, weight in _require_object("boosts", value).items():
        if not _is_number(weight) or weight < 0:
            raise InvalidRequest(
                f"Invalid 'boosts' format: the boost of '{key}' must be a number of 0 or more, "
                f"not {sent(weight)}"
            )
        if weight > 0:
            weights.append(FieldWeight(field=fields.real(key), weight=float(weight)))
    if not weights:
        raise InvalidRequest("Invalid 'boosts' format: at least one field needs a boost above 0")
    return tuple(weights)


def parse_histogram(value: Any, fields: FieldMap) -> tuple[HistogramSpec, ...]:
    specs = []
    for key, interval in _require_object("histogram", value).items():
        if not _is_number(interval) or interval <= 0:
            raise InvalidRequest(
                f"Invalid 'histogram' format: the interval of '{key}' must be a number above 0, "
                f"not {sent(interval)}"
            )
        specs.append(HistogramSpec(field=fields.real(key), interval=float(interval)))
    return tuple(specs)


def _lat_lon(name: str, value: Any) -> GeoPoint:
    if not isinstance(value, dict) or set(value) != {"lat", "lon"}:
        raise InvalidRequest(
            f"Invalid 'geoGrid' format: {name} must be {{\"lat\": .., \"lon\": ..}}"
        )
    lat, lon = value["lat"], value["lon"]
    if not (_is_number(lat) and -90 <= lat <= 90 and _is_number(lon) and -180 <= lon <= 180):
        raise InvalidRequest(
            f"Invalid 'geoGrid' format: {name} needs lat in [-90, 90] and lon in [-180, 180], "
            f"not {sent(value)}"
        )
    return GeoPoint(lat=float(lat), lon=float(lon))


def parse_geo_grid(value: Any, fields: FieldMap) -> GeoGridSpec:
    obj = _require_object("geoGrid", value)
    unknown = set(obj) - {"field", "precision", "bounds"}
    if unknown:
        raise InvalidRequest(f"Invalid 'geoGrid' format: unknown key '{sorted(unknown)[0]}'")
    field, precision = obj.get("field"), obj.get("precision", 5)
    if not isinstance(field, str) or not field:
        raise InvalidRequest("Invalid 'geoGrid' format: 'field' must be a field name")
    if not isinstance(precision, int) or isinstance(precision, bool) or not (
        0 <= precision <= MAX_GEO_PRECISION
    ):
        raise InvalidRequest(
            "Invalid 'geoGrid' format: 'precision' must be an integer from 0 to "
            f"{MAX_GEO_PRECISION}, not {sent(precision)}"
        )
    bounds = None
    if "bounds" in obj:
        raw = obj["bounds"]
        if not isinstance(raw, dict) or set(raw) != {"top_left", "bottom_right"}:
            raise InvalidRequest(
                "Invalid 'geoGrid' format: 'bounds' must have 'top_left' and 'bottom_right'"
            )
        top_left = _lat_lon("bounds.top_left", raw["top_left"])
        bottom_right = _lat_lon("bounds.bottom_right", raw["bottom_right"])
        if top_left.lat < bottom_right.lat:
            raise InvalidRequest(
                "Invalid 'geoGrid' format: bounds.top_left.lat must not be below bottom_right.lat"
            )
        bounds = GeoBounds(top_left=top_left, bottom_right=bottom_right)
    return GeoGridSpec(field=fields.real(field), precision=precision, bounds=bounds)


def _scalars(param: str, key: str, value: Any) -> tuple[Scalar, ...]:
    items = value if isinstance(value, list) else [value]
    if not items or len(items) > MAX_LIST_ITEMS:
        raise InvalidRequest(
            f"Invalid '{param}' format: the list for '{key}' needs 1 to {MAX_LIST_ITEMS} values"
        )
    for item in items:
        if not (isinstance(item, str | bool) or _is_number(item)):
            raise InvalidRequest(
                f"Invalid '{param}' format: '{key}' takes strings, numbers or booleans"
            )
    return tuple(items)


def _instant(text: str) -> datetime:
    """An ISO-8601 date or date-time as an aware instant (no zone: UTC)."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _bound(param: str, key: str, value: Any) -> float | str | None:
    if value is None or _is_number(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, str):
        try:
            _instant(value)
        except ValueError:
            pass
        else:
            return value
    raise InvalidRequest(
        f"Invalid '{param}' format: the bounds of '{key}' must be numbers or ISO-8601 dates"
    )


def _filter(param: str, key: str, field: str, value: Any) -> Filter:
    if not isinstance(value, dict):
        return TermFilter(field=field, values=_scalars(param, key, value))
    keys = set(value)
    if keys and keys <= {"min", "max"}:
        low, high = _bound(param, key, value.get("min")), _bound(param, key, value.get("max"))
        if low is None and high is None:
            raise InvalidRequest(f"Invalid '{param}' format: the range of '{key}' has no bound")
        if low is not None and high is not None:
            if _is_number(low) != _is_number(high):
                raise InvalidRequest(
                    f"Invalid '{param}' format: the range of '{key}' mixes a number and a date"
                )
            if (
                _instant(low) > _instant(high)
                if isinstance(low, str) and isinstance(high, str)
                else low > high  # type: ignore[operator]
            ):
                raise InvalidRequest(
                    f"Invalid '{param}' format: the range of '{key}' has min > max"
                )
        return RangeFilter(field=field, min=low, max=high)
    if keys == {"not"}:
        return NotFilter(field=field, values=_scalars(param, key, value["not"]))
    if keys == {"exists"} and isinstance(value["exists"], bool):
        return ExistsFilter(field=field, exists=value["exists"])
    raise InvalidRequest(
        f"Invalid '{param}' format: '{key}' must be a value, a list of values, "
        '{"min": .., "max": ..}, {"not": ..} or {"exists": true|false}'
    )


def parse_filters(value: Any, fields: FieldMap, param: str = "filters") -> tuple[Filter, ...]:
    if isinstance(value, dict) and not value:
        return ()
    return tuple(
        _filter(param, key, fields.real(key), raw)
        for key, raw in _require_object(param, value).items()
    )
