"""The parameters of the Analytics API (v2) routes, read as Algolia's specification says
(days are UTC days; by default the last eight, today included)."""

from __future__ import annotations

import re
from datetime import date, timedelta

import msgspec

from searchport.domain.analytics.segments import EVERY_SEARCH, Segment, read_segment
from searchport.domain.errors import InvalidRequest

DEFAULT_DAYS = 8
MAX_DAYS = 400  # searchport's own bound on one period (a daily breakdown stays small)
MAX_LIMIT = 1000
# past any row a store can hold: a larger offset reads as this one (an empty page), and
# stays within a 64-bit SQL integer
MAX_OFFSET = 2**62
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


class AnalyticsRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A read of the analytics, as its query string gave it."""

    index: str | None = None
    start_date: str | None = None
    end_date: str | None = None
    limit: int = 10
    offset: int = 0
    tags: str | None = None
    click_analytics: bool = False
    revenue_analytics: bool = False
    order_by: str | None = None
    direction: str | None = None
    search: str | None = None  # one query (/2/hits, /2/filters...)
    attribute: str | None = None  # /2/filters/{attribute}


class Period(msgspec.Struct, frozen=True):
    """What a read covers: one handle, the days from ``start`` to ``end`` (both included)."""

    handle: str
    start: date
    end: date
    limit: int
    offset: int
    segment: Segment = EVERY_SEARCH

    def days(self) -> list[date]:
        return [self.start + timedelta(days=n) for n in range((self.end - self.start).days + 1)]


def _day(value: str, name: str) -> date:
    try:
        if _DAY.fullmatch(value):
            return date.fromisoformat(value)
    except ValueError:
        pass
    raise InvalidRequest(f"{name} must be a date as YYYY-MM-DD (got {value[:20]!r})")


def read_period(request: AnalyticsRequest, today: date) -> Period:
    """The period a request asks for, checked (400 naming the parameter)."""
    if not request.index:
        raise InvalidRequest("index is required: the handle whose analytics to read")
    segment = read_segment(request.tags)
    end = _day(request.end_date, "endDate") if request.end_date else None
    start = _day(request.start_date, "startDate") if request.start_date else None
    if end is None:
        end = today if start is None or start <= today else start
    if start is None:
        start = end - timedelta(days=DEFAULT_DAYS - 1)
    if start > end:
        raise InvalidRequest("startDate must not be after endDate")
    if (end - start).days >= MAX_DAYS:
        raise InvalidRequest(f"the period from startDate to endDate is at most {MAX_DAYS} days")
    if not 1 <= request.limit <= MAX_LIMIT:
        raise InvalidRequest(f"limit must be between 1 and {MAX_LIMIT}")
    if request.offset < 0:
        raise InvalidRequest("offset must be 0 or more")
    return Period(request.index, start, end, request.limit, min(request.offset, MAX_OFFSET),
                  segment)
