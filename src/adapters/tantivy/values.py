"""Coercion of source cells and request values to the configured field types.

The builder and the filter translator share these functions, so a value that indexes is a
value that filters, and the two can never disagree about what "1990" or "2020-05" means.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import tantivy

from searchport.domain.shaping import format_number

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_YEAR = re.compile(r"^(\d{4})$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SECOND = timedelta(seconds=1)


class BadValue(ValueError):
    """A value that does not fit its field's type; the message says what was expected."""


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise BadValue("expects text")


def as_keyword(value: Any) -> str:
    # A keyword is an exact string, but ids and codes often arrive as numbers.
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format_number(value)
    raise BadValue("expects a string")


def as_integer(value: Any) -> int:
    number: int
    if isinstance(value, bool):
        raise BadValue("expects an integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            raise BadValue("expects an integer") from None
    else:
        raise BadValue("expects an integer")
    if not _I64_MIN <= number <= _I64_MAX:
        raise BadValue("expects an integer within 64 bits")
    return number


def as_float(value: Any) -> float:
    number: float
    if isinstance(value, bool):
        raise BadValue("expects a number")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise BadValue("expects a number") from None
    else:
        raise BadValue("expects a number")
    if not math.isfinite(number):
        raise BadValue("expects a finite number")
    return number


def as_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise BadValue("expects true or false")


def date_span(value: Any) -> tuple[datetime, datetime]:
    """The instants a written date covers, ``[start, end)``: "2020" is the whole year,
    "2020-05-01" the whole day, a date-time one second (the index's precision)."""
    if not isinstance(value, str):
        raise BadValue("expects an ISO-8601 date")
    text = value.strip()
    try:
        if match := _YEAR.match(text):
            start = datetime(int(match[1]), 1, 1, tzinfo=UTC)
            end = start.replace(year=start.year + 1)
        elif match := _MONTH.match(text):
            start = datetime(int(match[1]), int(match[2]), 1, tzinfo=UTC)
            end = (start + timedelta(days=32)).replace(day=1)
        elif _DAY.match(text):
            start = datetime.fromisoformat(text).replace(tzinfo=UTC)
            end = start + timedelta(days=1)
        else:
            parsed = datetime.fromisoformat(text)
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            start = parsed.astimezone(UTC).replace(microsecond=0)
            end = start + _SECOND
    except (ValueError, OverflowError):
        raise BadValue("expects an ISO-8601 date") from None
    if start < tantivy.MIN_DATETIME or start >= tantivy.MAX_DATETIME:
        raise BadValue("expects a date between 1677 and 2262")
    return start, min(end, tantivy.MAX_DATETIME)


def as_date(value: Any) -> datetime:
    return date_span(value)[0]


def as_geo_point(value: Any) -> tuple[float, float]:
    """``(lat, lon)`` from ``{"lat": .., "lon": ..}`` or ``"lat,lon"``."""
    lat: Any
    lon: Any
    if isinstance(value, dict):
        lat, lon = value.get("lat"), value.get("lon")
    elif isinstance(value, str) and value.count(",") == 1:
        lat, lon = value.split(",")
    else:
        raise BadValue('expects {"lat": .., "lon": ..} or "lat,lon"')
    try:
        point = as_float(lat), as_float(lon)
    except BadValue:
        raise BadValue('expects {"lat": .., "lon": ..} or "lat,lon"') from None
    if not (-90.0 <= point[0] <= 90.0 and -180.0 <= point[1] <= 180.0):
        raise BadValue("expects a latitude in [-90, 90] and a longitude in [-180, 180]")
    return point


def describe(value: Any) -> str:
    """A short rendering of a user value for an error message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
