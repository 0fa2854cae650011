"""How a period is read from the running totals (``totals.plan_totals``): which totals are
added and subtracted, which days are left to the days and blocks, and when the totals are
not worth reading."""

from __future__ import annotations

from datetime import date, timedelta

from searchport.adapters.analytics.totals import CHAIN, chain_start, plan_totals, runs

FIRST = chain_start(date(2026, 5, 1))  # the first day of a chain
ONE = timedelta(days=1)


def day(n: int) -> date:
    return FIRST + timedelta(days=n)


def built(first: int, last: int, rows: int = 100, own: int = 60) -> dict[date, tuple[int, int]]:
    """Days ``first`` to ``last`` (from ``FIRST``) added up: ``rows`` rows of totals each,
    ``own`` rows of their own day."""
    return {day(n): (rows, own) for n in range(first, last + 1)}


def days_read(pieces: list[tuple[date, int]], left: list[tuple[date, date]],
              start: date, end: date) -> dict[date, int]:
    """How many times each day of ``start`` to ``end`` is counted: each totals piece counts
    the days of its chain up to it (negated: taken away), each range left its days."""
    counted: dict[date, int] = {}
    for last, sign in pieces:
        d = chain_start(last)
        while d <= last:
            counted[d] = counted.get(d, 0) + sign
            d += ONE
    for first, last in left:
        d = first
        while d <= last:
            counted[d] = counted.get(d, 0) + 1
            d += ONE
    return {d: n for d, n in counted.items() if n}


def test_every_day_of_a_period_is_counted_once_whatever_is_built() -> None:
    for done in (built(0, CHAIN * 2 - 1), built(0, CHAIN + 5), built(0, 10), {},
                 {**built(0, 3), **built(CHAIN, CHAIN + 20)}):
        for start in (0, 1, 7, CHAIN - 1, CHAIN, CHAIN + 3):
            for length in (1, 2, 5, CHAIN, CHAIN + 9, CHAIN * 2):
                pieces, left = plan_totals(day(start), day(start + length - 1), done)
                expected = {day(start + n): 1 for n in range(length)}
                assert days_read(pieces, left, day(start),
                                 day(start + length - 1)) == expected, (start, length)


def test_a_month_within_two_chains_is_three_totals_and_the_days_not_yet_built() -> None:
    pieces, left = plan_totals(day(10), day(CHAIN + 19), built(0, CHAIN + 17))
    assert pieces == [(day(CHAIN - 1), 1), (day(9), -1), (day(CHAIN + 17), 1)]
    assert left == [(day(CHAIN + 18), day(CHAIN + 19))]


def test_totals_larger_than_the_days_they_stand_for_are_not_read() -> None:
    # a long tail: the totals of a day hold far more rows than the few days they replace
    pieces, left = plan_totals(day(20), day(23), built(0, 30, rows=10_000, own=50))
    assert pieces == [] and left == [(day(20), day(23))]
    # from the chain's first day, the totals at the period's end alone are read
    pieces, left = plan_totals(day(0), day(23), built(0, 30, rows=1_000, own=50))
    assert pieces == [(day(23), 1)] and left == []


def test_a_chain_added_up_only_from_a_later_day_is_read_as_days() -> None:
    # the chain's first days are not added up (forgotten: a late write): no totals of it
    pieces, left = plan_totals(day(2), day(20), built(5, 25))
    assert pieces == [] and left == [(day(2), day(20))]


def test_runs_split_the_days_added_up_from_the_others() -> None:
    done = {day(1), day(2), day(5)}
    assert runs(day(0), day(6), done) == [
        (day(0), day(0), False), (day(1), day(2), True), (day(3), day(4), False),
        (day(5), day(5), True), (day(6), day(6), False)]
