"""What the daily build adds up beyond the blocks of days (docs/analytics.md, "Storage"):

- **running totals** per query (``analytics_query_totals``: ``schema.TOTAL_COUNTERS``)
  and per object (``analytics_object_totals``: its count), from the first day of the day's
  chain of ``CHAIN`` days to that day: the days from ``a`` to ``b`` of a chain are its
  totals at ``b`` less those at ``a - 1``. ``analytics_totals_built`` lists the days added
  up with their rows of totals and of days, so that a read takes the totals only where
  they are fewer rows (``plan_totals``). A chain holding a day not kept is never added up.
- **each query's objects per day** (``analytics_query_hit_days``), for ``/2/hits`` with
  ``search``, a day in ``HIT_PARTS`` short transactions, so that the writes never wait
  long; ``analytics_query_hits_built`` lists the days added up.

A write to a day added up forgets it (``invalidate``: its totals and those after it in its
chain). Each statement of the build checks that what it adds on is still added up, so a
build planned before a write cannot add up on what that write forgot.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from searchport.adapters.analytics.dialect import Dialect, adding
from searchport.adapters.analytics.schema import HIT_COUNTERS, TOTAL_COUNTERS, block_start

Statement = tuple[str, list[Any]]
CHAIN = 32  # days per chain of running totals
TOTALS_BUILT = "analytics_totals_built"
HIT_DAYS = "analytics_query_hit_days"
HITS_BUILT = "analytics_query_hits_built"
# per table of days: its running totals, their kind (in TOTALS_BUILT), key and counters
KINDS = {"analytics_query_days": ("analytics_query_totals", "query", "query",
                                  TOTAL_COUNTERS),
         "analytics_object_days": ("analytics_object_totals", "object", "hit", ("count",))}
HIT_FIGURES = HIT_COUNTERS[2:]  # what the events did to the objects shown
DAYS_OF_TOTALS = f"SELECT kind, day FROM {TOTALS_BUILT}"
# a kind's days added up in a period, with their rows: ``kind``, first day, last day
DAYS_BETWEEN = (f"SELECT day, total_rows, day_rows FROM {TOTALS_BUILT} "
                "WHERE kind = ? AND day BETWEEN ? AND ?")
DAYS_OF_HITS = f"SELECT day FROM {HITS_BUILT} WHERE building IS NULL"
# the handles with searches on a day: what lets a day's rows be found by the indexes,
# which begin with the handle
_HANDLES = "(SELECT DISTINCT handle FROM analytics_days WHERE day = ?)"


def chain_start(day: date) -> date:
    return block_start(day, CHAIN)


def _day_totals(d: Dialect, days: str, day: date) -> list[Statement]:
    """The statements adding up the running totals of the table ``days`` on ``day``: the
    day's rows plus the totals of the day before in its chain (only if those are added
    up)."""
    totals, kind, key, counters = KINDS[days]
    columns = ", ".join(counters)
    on = [d.day(day)]
    source = (f"SELECT q.handle, q.{key}, q.tags, {columns} FROM {days} q "
              f"WHERE q.handle IN {_HANDLES} AND q.day = ?")
    params = [*on, *on]
    guard, guard_params = "true", []
    if day != chain_start(day):
        before = [d.day(day - timedelta(days=1))]
        source += (f" UNION ALL SELECT t.handle, t.{key}, t.tags, {columns} FROM {totals} t "
                   "WHERE t.day = ?")
        params += before
        guard = f"EXISTS (SELECT 1 FROM {TOTALS_BUILT} WHERE kind = ? AND day = ?)"
        guard_params = [kind, *before]
    sums = ", ".join(f"sum(r.{c})" for c in counters)
    day_rows = (f"(SELECT count(*) FROM {days} q WHERE q.handle IN {_HANDLES} "
                "AND q.day = ?)")
    return [
        (f"DELETE FROM {totals} WHERE day = ?", on),
        (f"INSERT INTO {totals} (day, handle, {key}, tags, {columns}) "
         f"SELECT ?, r.handle, r.{key}, r.tags, {sums} FROM ({source}) r WHERE {guard} "
         f"GROUP BY r.handle, r.{key}, r.tags", [*on, *params, *guard_params]),
        (f"INSERT INTO {TOTALS_BUILT} (kind, day, total_rows, day_rows) "
         f"SELECT ?, ?, (SELECT count(*) FROM {totals} WHERE day = ?), {day_rows} "
         f"WHERE {guard} ON CONFLICT (kind, day) DO UPDATE SET "
         "total_rows = excluded.total_rows, day_rows = excluded.day_rows",
         [kind, *on, *on, *on, *on, *guard_params]),
    ]


HIT_PARTS = 6  # transactions a day's objects per query are added up in (parts of the day)
KEYS = ("handle", "query", "day", "hit", "tags")  # of HIT_DAYS


def _day_hits(d: Dialect, day: date, token: str) -> list[list[Statement]]:
    """The transactions adding up each query's objects of ``day`` from the log, a part of
    the day each: the searches with the same objects counted together first (a query asked
    again shows the same page), then each object of each list; then what the events did to
    each object (``analytics_hit_events``). The first marks the day as being built under
    ``token``; each adds only while that mark stands (a write to the day deletes it,
    another build replaces it); the last marks the day built."""
    on = [d.day(day)]
    keys = ", ".join(KEYS)
    figures = ", ".join(f"sum(CASE WHEN e.{n} > 0 THEN 1 ELSE 0 END), sum(e.{n})"
                        for n in ("clicks", "conversions", "carts", "purchases"))
    mine = f"EXISTS (SELECT 1 FROM {HITS_BUILT} WHERE day = ? AND building = ?)"
    midnight = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
    found: list[list[Statement]] = []
    for part in range(HIT_PARTS):
        at = [midnight + 86400 * part / HIT_PARTS, midnight + 86400 * (part + 1) / HIT_PARTS]
        searches = (f"s.handle IN {_HANDLES} AND s.at >= ? AND s.at < ? AND {mine}")
        params = [*on, *at, *on, token]
        found.append([
            (f"INSERT INTO {HIT_DAYS} ({keys}, count, tracked) "
             "SELECT g.handle, g.query, g.day, h.value, g.tags, sum(g.n), sum(g.t) "
             "FROM (SELECT s.handle, s.query, s.day, s.tags, s.hits, count(*) AS n, "
             f"count(s.query_id) AS t FROM analytics_searches s WHERE {searches} "
             "GROUP BY s.handle, s.query, s.day, s.tags, s.hits) g, "
             f"{d.elements('g.hits', 'h')} WHERE true "
             "GROUP BY g.handle, g.query, g.day, h.value, g.tags "
             f"{adding(HIT_DAYS, KEYS, ('count', 'tracked'))}", params),
            # the part's tracked searches taken first (by the index on time), then their
            # objects' events: not the searches in the order the grouping would like
            (f"WITH s AS MATERIALIZED (SELECT s.handle, s.query, s.day, s.tags, s.query_id "
             f"FROM analytics_searches s WHERE {searches} AND s.query_id IS NOT NULL) "
             f"INSERT INTO {HIT_DAYS} ({keys}, {', '.join(HIT_FIGURES)}) "
             f"SELECT s.handle, s.query, s.day, e.hit, s.tags, {figures} "
             "FROM s JOIN analytics_hit_events e ON e.query_id = s.query_id WHERE true "
             "GROUP BY s.handle, s.query, s.day, e.hit, s.tags "
             f"{adding(HIT_DAYS, KEYS, HIT_FIGURES)}", params),
        ])
    found[0][:0] = [
        (f"DELETE FROM {HIT_DAYS} WHERE day = ?", on),
        (f"INSERT INTO {HITS_BUILT} (day, building) VALUES (?, ?) "
         "ON CONFLICT (day) DO UPDATE SET building = excluded.building", [*on, token])]
    found[-1].append((f"UPDATE {HITS_BUILT} SET building = NULL "
                      "WHERE day = ? AND building = ?", [*on, token]))
    return found


def build(d: Dialect, kept: Sequence[Any], last: date,
          totals_built: Iterable[Sequence[Any]], hits_built: Iterable[Any]
          ) -> list[list[Statement]]:
    """The transactions adding up the running totals and objects per query of the days
    ``kept`` (the first and last with rows) up to ``last`` not yet added up
    (``totals_built``: the kinds and days that are; ``hits_built``: the days)."""
    if kept[0] is None:
        return []
    first, newest = (d.read_day(day) for day in kept)
    end = min(newest, last)
    totals = {(kind, d.read_day(day)) for kind, day in totals_built}
    hits = {d.read_day(day) for day in hits_built}
    token = secrets.token_hex(8)  # this build's, marking the days it is adding up
    found = []
    day = first
    while day <= end:
        if day not in hits:
            found += _day_hits(d, day, token)
        day += timedelta(days=1)
    chain = chain_start(first)
    if chain < first:  # it holds days forgotten or never written: never added up
        chain += timedelta(days=CHAIN)
    day = chain
    while day <= end:
        for days, (_, kind, _, _) in KINDS.items():
            if (kind, day) not in totals:
                found.append(_day_totals(d, days, day))
        day += timedelta(days=1)
    return found


def invalidate(d: Dialect, days: Iterable[date]) -> list[Statement]:
    """The statements forgetting that ``days`` (written to now) were added up: their objects
    per query, and the running totals from each to its chain's end."""
    old = sorted(set(days))
    firsts: dict[date, date] = {}
    for day in old:
        firsts.setdefault(chain_start(day), day)
    return [
        *((f"DELETE FROM {HITS_BUILT} WHERE day = ?", [d.day(day)]) for day in old),
        *((f"DELETE FROM {TOTALS_BUILT} WHERE day BETWEEN ? AND ?",
           [d.day(day), d.day(chain + timedelta(days=CHAIN - 1))])
          for chain, day in sorted(firsts.items())),
    ]


def purge(d: Dialect, before: date) -> list[Statement]:
    """The statements forgetting the days before ``before``: their objects per query, and
    every chain of running totals holding one of them."""
    forgotten = [d.day(before)]
    chains = [d.day(chain_start(before - timedelta(days=1)) + timedelta(days=CHAIN))]
    return [(f"DELETE FROM {HIT_DAYS} WHERE day < ?", forgotten),
            (f"DELETE FROM {HITS_BUILT} WHERE day < ?", forgotten),
            *((f"DELETE FROM {totals} WHERE day < ?", chains) for totals, *_ in KINDS.values()),
            (f"DELETE FROM {TOTALS_BUILT} WHERE day < ?", chains)]


def plan_totals(start: date, end: date, built: dict[date, tuple[int, int]]
                ) -> tuple[list[tuple[date, int]], list[tuple[date, date]]]:
    """How to read the days from ``start`` to ``end`` with the running totals ``built``
    (day: its totals' rows, the day's own rows): the totals to add (``1``) and subtract
    (``-1``), where they read fewer rows than the days, and the ranges of days left."""
    pieces: list[tuple[date, int]] = []
    left: list[tuple[date, date]] = []
    chain = chain_start(start)
    one = timedelta(days=1)
    while chain <= end:
        first, last = max(start, chain), min(end, chain + timedelta(days=CHAIN - 1))
        top = chain - one  # the chain's days added up, from its first
        while top < last and top + one in built:
            top += one
        if top >= first:
            cost = built[top][0] + (built[first - one][0] if first > chain else 0)
            saved = sum(built[first + timedelta(days=n)][1]
                        for n in range((top - first).days + 1))
            if cost < saved:
                pieces.append((top, 1))
                if first > chain:
                    pieces.append((first - one, -1))
                first = top + one
        if first <= last:
            if left and left[-1][1] + one == first:
                left[-1] = (left[-1][0], last)
            else:
                left.append((first, last))
        chain += timedelta(days=CHAIN)
    return pieces, left


def runs(start: date, end: date, built: set[date]) -> list[tuple[date, date, bool]]:
    """The days from ``start`` to ``end`` as runs of days ``built`` or not: ``(first,
    last, built)``."""
    found: list[tuple[date, date, bool]] = []
    day = start
    while day <= end:
        yes = day in built
        if found and found[-1][2] == yes:
            found[-1] = (found[-1][0], day, yes)
        else:
            found.append((day, day, yes))
        day += timedelta(days=1)
    return found
