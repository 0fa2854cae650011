"""The Analytics API (v2) use cases over a fake store: periods, figures computed here from
the rows, and every answer held against Algolia's Analytics specification
(``tests/specs/analytics.json``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import msgspec
import pytest

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.period import MAX_OFFSET, AnalyticsRequest, read_period
from searchport.domain.analytics.records import Refinement, SearchRecord
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import IndexConfig
from searchport.domain.errors import Forbidden, IndexNotFound, InvalidRequest
from searchport.domain.usecases.analytics import (
    AnalyticsStatus,
    AverageClickPosition,
    ClickPositions,
    ClickThroughRate,
    ConversionRate,
    NoClickRate,
    NoResultsRate,
    SearchesCount,
    SearchesNoClicks,
    SearchesNoResults,
    UsersCount,
)
from tests.fakes import FakeAnalyticsStore, FakeEngine
from tests.specs.checker import check

pytestmark = pytest.mark.anyio

TODAY = date(2026, 3, 10)
NOW = datetime(2026, 3, 10, 15, tzinfo=UTC).timestamp()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def catalog() -> Catalog:
    config = IndexConfig(engine="tantivy", path="idx")
    return Catalog({h: IndexEntry(h, config, FakeEngine()) for h in ("books", "films")})


def at(day: date, hour: int = 12) -> float:
    return datetime(day.year, day.month, day.day, hour, tzinfo=UTC).timestamp()


def search(day: date, query: str, hits: int, *, handle: str = "books", qid: str | None = None,
           filtered: bool = False) -> SearchRecord:
    return SearchRecord(at=at(day), handle=handle, query=query, nb_hits=hits, page=0,
                        refinements=(Refinement("genre", ":", "sf"),) if filtered else (), tags=(),
                        user_token="u", latency_ms=1.0, query_id=qid)


def click(qid: str, position: int = 1, when: float = NOW) -> InsightsEvent:
    return InsightsEvent(at=when, handle="books", type="click", subtype=None, name="c",
                         user_token="u", object_ids=("o",), positions=(position,),
                         query_id=qid)


def conversion(qid: str = "", objects: tuple[str, ...] = ()) -> InsightsEvent:
    return InsightsEvent(at=NOW, handle="books", type="conversion", subtype=None, name="c",
                         user_token="u", object_ids=("o",) * max(1, len(objects)),
                         query_id=qid or None, object_query_ids=objects)


def store_with(searches: Sequence[SearchRecord], events: Sequence[InsightsEvent] = ()
               ) -> FakeAnalyticsStore:
    store = FakeAnalyticsStore()
    store.searches = list(searches)
    store.events = list(events)
    return store


def builtins(answer: object) -> Any:
    return msgspec.to_builtins(answer)


# -- the period ----------------------------------------------------------------------------


def test_the_default_period_is_the_last_eight_days() -> None:
    period = read_period(AnalyticsRequest(index="books"), TODAY)
    assert (period.start, period.end, period.limit, period.offset) == (
        date(2026, 3, 3), TODAY, 10, 0)
    assert len(period.days()) == 8
    only_start = read_period(AnalyticsRequest(index="b", start_date="2026-03-08"), TODAY)
    assert (only_start.start, only_start.end) == (date(2026, 3, 8), TODAY)
    only_end = read_period(AnalyticsRequest(index="b", end_date="2026-02-01"), TODAY)
    assert (only_end.start, only_end.end) == (date(2026, 1, 25), date(2026, 2, 1))


@pytest.mark.parametrize(("request_", "message"), [
    (AnalyticsRequest(), "index is required"),
    (AnalyticsRequest(index="b", start_date="2026-3-1"), "startDate must be a date as "
     "YYYY-MM-DD"),
    (AnalyticsRequest(index="b", end_date="2026-02-30"), "endDate must be a date"),
    (AnalyticsRequest(index="b", start_date="2026-03-09", end_date="2026-03-08"),
     "startDate must not be after endDate"),
    (AnalyticsRequest(index="b", start_date="2024-01-01", end_date="2026-01-01"),
     "the period from startDate to endDate is at most 400 days"),
    (AnalyticsRequest(index="b", limit=1001), "limit must be between 1 and 1000"),
    (AnalyticsRequest(index="b", limit=0), "limit must be between 1 and 1000"),
    (AnalyticsRequest(index="b", offset=-1), "offset must be 0 or more"),
    (AnalyticsRequest(index="b", tags="device:mobile AND"), "tags: the expression ends"),
    (AnalyticsRequest(index="b", tags="(a OR b"), "tags: a parenthesis is not closed"),
    (AnalyticsRequest(index="b", tags="a b)"), "tags: unexpected"),
])
def test_a_bad_period_is_a_400_naming_the_parameter(request_: AnalyticsRequest,
                                                    message: str) -> None:
    with pytest.raises(InvalidRequest, match="^" + message):
        read_period(request_, TODAY)


REPORTS = (SearchesCount, SearchesNoResults, ClickThroughRate, AnalyticsStatus,
           NoResultsRate, UsersCount, ConversionRate, NoClickRate, AverageClickPosition,
           ClickPositions, SearchesNoClicks)


@pytest.mark.parametrize("report", REPORTS)
async def test_who_may_read_which_analytics(report: type[Any]) -> None:
    use_case = report(catalog=catalog(), store=store_with(ROWS), clock=lambda: NOW)
    with pytest.raises(IndexNotFound):  # unknown
        await use_case(AnalyticsRequest(index="nope"))
    films_only = Access(handles=("films",))
    with pytest.raises(IndexNotFound):  # not this key's: as unknown
        await use_case(AnalyticsRequest(index="books"), films_only)
    await use_case(AnalyticsRequest(index="films"), films_only)
    for refused in (Access(analytics=False), Access().within(Access()),
                    Access(handles=("films",)).within(FULL_ACCESS)):
        with pytest.raises(Forbidden, match="may not read analytics"):
            await use_case(AnalyticsRequest(index="films"), refused)


# -- the reports ---------------------------------------------------------------------------

ROWS = [
    search(date(2026, 3, 2), "dune", 3),  # before the default period
    search(date(2026, 3, 3), "dune", 3), search(date(2026, 3, 3), "dune", 0),
    search(date(2026, 3, 5), "zzz", 0, filtered=True), search(date(2026, 3, 5), "zzz", 0),
    search(date(2026, 3, 5), "qqq", 0), search(date(2026, 3, 10), "zzz", 0),
    search(date(2026, 3, 10), "dune", 7, handle="films"),
]


async def test_searches_count_gives_every_day() -> None:
    answer = await SearchesCount(catalog=catalog(), store=store_with(ROWS), clock=lambda: NOW)(
        AnalyticsRequest(index="books"))
    check("analytics", "searches.count.response", builtins(answer))
    days = [date(2026, 3, 3) + timedelta(days=n) for n in range(8)]
    expected = [sum(1 for r in ROWS if r.handle == "books" and r.day == d) for d in days]
    assert builtins(answer) == {
        "count": sum(expected),
        "dates": [{"date": d.isoformat(), "count": n} for d, n in zip(days, expected,
                                                                      strict=True)]}
    assert answer.count == 6


async def test_searches_without_results_most_first() -> None:
    answer = await SearchesNoResults(catalog=catalog(), store=store_with(ROWS),
                                     clock=lambda: NOW)(AnalyticsRequest(index="books"))
    check("analytics", "searches.noResults.response", builtins(answer))
    assert builtins(answer) == {"searches": [
        {"search": "zzz", "count": 3, "withFilterCount": 1},
        {"search": "dune", "count": 1, "withFilterCount": 0},
        {"search": "qqq", "count": 1, "withFilterCount": 0},
    ]}
    second = await SearchesNoResults(catalog=catalog(), store=store_with(ROWS),
                                     clock=lambda: NOW)(
        AnalyticsRequest(index="books", limit=1, offset=1))
    assert [s.search for s in second.searches] == ["dune"]


async def test_click_through_rate_per_day_and_null_without_tracked_searches() -> None:
    tracked = [search(date(2026, 3, 4), "a", 1, qid="1" * 32),
               search(date(2026, 3, 4), "b", 1, qid="2" * 32),
               search(date(2026, 3, 4), "c", 1, qid="3" * 32),
               search(date(2026, 3, 6), "d", 1, qid="4" * 32),
               search(date(2026, 3, 6), "e", 1)]  # not tracked
    events = [click("1" * 32), click("1" * 32), click("2" * 32)]
    answer = await ClickThroughRate(catalog=catalog(), store=store_with(tracked, events),
                                    clock=lambda: NOW)(AnalyticsRequest(index="books"))
    body = builtins(answer)
    check("analytics", "clicks.clickThroughRate.response", body)
    assert (body["rate"], body["clickCount"], body["trackedSearchCount"]) == (2 / 4, 3, 4)
    by_day = {d["date"]: (d["rate"], d["clickCount"], d["trackedSearchCount"])
              for d in body["dates"]}
    assert by_day["2026-03-04"] == (2 / 3, 3, 3)
    assert by_day["2026-03-06"] == (0.0, 0, 1)
    assert by_day["2026-03-05"] == (None, 0, 0)
    assert len(by_day) == 8
    empty = await ClickThroughRate(catalog=catalog(), store=FakeAnalyticsStore(),
                                   clock=lambda: NOW)(AnalyticsRequest(index="books"))
    check("analytics", "clicks.clickThroughRate.response", builtins(empty))
    assert (empty.rate, empty.tracked_search_count) == (None, 0)


async def test_status_is_the_last_search_in_rfc_3339() -> None:
    use_case = AnalyticsStatus(catalog=catalog(), store=store_with(ROWS), clock=lambda: NOW)
    answer = await use_case(AnalyticsRequest(index="books"))
    check("analytics", "status.response", builtins(answer))
    assert builtins(answer) == {"updatedAt": "2026-03-10T12:00:00Z"}
    none = await AnalyticsStatus(catalog=catalog(), store=FakeAnalyticsStore())(
        AnalyticsRequest(index="books"))
    check("analytics", "status.response", builtins(none))
    assert builtins(none) == {"updatedAt": None}


async def test_no_results_rate_per_day_and_0_without_searches() -> None:
    answer = await NoResultsRate(catalog=catalog(), store=store_with(ROWS), clock=lambda: NOW)(
        AnalyticsRequest(index="books"))
    body = builtins(answer)
    check("analytics", "searches.noResultRate.response", body)
    mine = [r for r in ROWS if r.handle == "books" and r.day >= date(2026, 3, 3)]
    none = sum(1 for r in mine if r.nb_hits == 0)
    assert (body["count"], body["noResultCount"], body["rate"]) == (len(mine), none,
                                                                    none / len(mine))
    by_day = {d["date"]: (d["count"], d["noResultCount"], d["rate"]) for d in body["dates"]}
    assert by_day["2026-03-03"] == (2, 1, 0.5)
    assert by_day["2026-03-05"] == (3, 3, 1.0)
    assert by_day["2026-03-04"] == (0, 0, 0.0)
    assert len(by_day) == 8


async def test_users_are_counted_once_over_the_period() -> None:
    rows = [msgspec.structs.replace(r, user_token=token) for r, token in zip(
        ROWS, ["a", "a", "b", "a", "c", "b", "a", "z"], strict=True)]
    answer = await UsersCount(catalog=catalog(), store=store_with(rows), clock=lambda: NOW)(
        AnalyticsRequest(index="books"))
    body = builtins(answer)
    check("analytics", "users.count.response", body)
    assert body["count"] == 3  # a, b, c from the 3rd on (the 2nd is outside, z is a film's)
    by_day = {d["date"]: d["count"] for d in body["dates"]}
    assert (by_day["2026-03-03"], by_day["2026-03-05"], by_day["2026-03-10"],
            by_day["2026-03-04"]) == (2, 3, 1, 0)


TRACKED = [search(date(2026, 3, 4), "a", 1, qid="1" * 32),
           search(date(2026, 3, 4), "b", 1, qid="2" * 32),
           search(date(2026, 3, 4), "c", 1, qid="3" * 32),
           search(date(2026, 3, 6), "d", 1, qid="4" * 32),
           search(date(2026, 3, 6), "e", 1)]


async def test_conversion_rate_by_query_id_or_per_object() -> None:
    events = [conversion("1" * 32), conversion("1" * 32),
              conversion(objects=("4" * 32, "4" * 32, "")), click("2" * 32)]
    answer = await ConversionRate(catalog=catalog(), store=store_with(TRACKED, events),
                                  clock=lambda: NOW)(AnalyticsRequest(index="books"))
    body = builtins(answer)
    check("analytics", "conversions.conversionRate.response", body)
    assert (body["rate"], body["conversionCount"], body["trackedSearchCount"]) == (
        2 / 4, 3, 4)
    by_day = {d["date"]: (d["rate"], d["conversionCount"], d["trackedSearchCount"])
              for d in body["dates"]}
    assert by_day["2026-03-04"] == (1 / 3, 2, 3)
    assert by_day["2026-03-06"] == (1.0, 1, 1)
    assert by_day["2026-03-05"] == (None, 0, 0)


async def test_no_click_rate_counts_tracked_searches_without_clicks() -> None:
    events = [click("1" * 32), click("1" * 32), click("2" * 32)]
    answer = await NoClickRate(catalog=catalog(), store=store_with(TRACKED, events),
                               clock=lambda: NOW)(AnalyticsRequest(index="books"))
    body = builtins(answer)
    check("analytics", "searches.noClickRate.response", body)
    assert (body["rate"], body["count"], body["noClickCount"]) == (2 / 4, 4, 2)
    by_day = {d["date"]: (d["rate"], d["count"], d["noClickCount"]) for d in body["dates"]}
    assert by_day["2026-03-04"] == (1 / 3, 3, 1)
    assert by_day["2026-03-06"] == (1.0, 1, 1)
    assert by_day["2026-03-05"] == (0.0, 0, 0)


CLICKS = [click("1" * 32, p, at(date(2026, 3, 4))) for p in (1, 1, 2, 7, 15, 40)] + [
    click("2" * 32, 3, at(date(2026, 3, 6))), click("2" * 32, 10, at(date(2026, 3, 1)))]


async def test_average_click_position_per_day() -> None:
    answer = await AverageClickPosition(catalog=catalog(), store=store_with([], CLICKS),
                                        clock=lambda: NOW)(AnalyticsRequest(index="books"))
    body = builtins(answer)
    check("analytics", "clicks.averageClickPosition.response", body)
    kept = [1, 1, 2, 7, 15, 40, 3]  # the click of the 1st is outside the period
    assert (body["average"], body["clickCount"]) == (sum(kept) / len(kept), len(kept))
    by_day = {d["date"]: (d["average"], d["clickCount"]) for d in body["dates"]}
    assert by_day["2026-03-04"] == (66 / 6, 6)
    assert by_day["2026-03-06"] == (3.0, 1)
    assert by_day["2026-03-05"] == (None, 0)


async def test_click_positions_in_algolias_twelve_ranges() -> None:
    answer = await ClickPositions(catalog=catalog(), store=store_with([], CLICKS),
                                  clock=lambda: NOW)(AnalyticsRequest(index="books"))
    body = builtins(answer)
    check("analytics", "clicks.positions.response", body)
    expected = {1: 2, 2: 1, 3: 1, 7: 1}
    assert body["positions"] == (
        [{"position": [p, p], "clickCount": expected.get(p, 0)} for p in range(1, 11)]
        + [{"position": [11, 20], "clickCount": 1}, {"position": [21, -1], "clickCount": 1}])


async def test_searches_without_clicks() -> None:
    rows = [*TRACKED, search(date(2026, 3, 5), "a", 3, qid="5" * 32),
            search(date(2026, 3, 5), "a", 0, qid="6" * 32)]
    events = [click("1" * 32), click("2" * 32)]
    answer = await SearchesNoClicks(catalog=catalog(), store=store_with(rows, events),
                                    clock=lambda: NOW)(AnalyticsRequest(index="books"))
    body = builtins(answer)
    check("analytics", "searches.noClicks.response", body)
    assert body == {"searches": [{"search": "a", "count": 2, "nbHits": 2},
                                 {"search": "c", "count": 1, "nbHits": 1},
                                 {"search": "d", "count": 1, "nbHits": 1}]}


def test_an_offset_beyond_any_store_reads_as_the_largest_one() -> None:
    huge = 15896023332937070152777728
    period = read_period(AnalyticsRequest(index="b", offset=huge), date(2026, 5, 1))
    assert period.offset == MAX_OFFSET < huge
    assert read_period(AnalyticsRequest(index="b", offset=7), date(2026, 5, 1)).offset == 7
