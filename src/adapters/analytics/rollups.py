"""The daily rollups of the query log and their blocks of days (docs/analytics.md,
"Storage"): the statements adding each batch of searches to them, and those of the daily
build adding up the blocks that ended (the events' part is planned in ``events.py``, the
running totals in ``totals.py``, the users' rollups in ``users.py``).

A later write to a day of a block added up forgets that it was (``invalidate``), and the
reads take its days again until the next build. On PostgreSQL, a build and such writes
take turns on a transaction-scoped advisory lock, so that no write falls between a build's
reading of the days and its record.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from typing import Any

from searchport.adapters.analytics import schema, totals, users
from searchport.adapters.analytics.dialect import Dialect, adding, first_columns, insert
from searchport.adapters.analytics.schema import block_start
from searchport.domain.analytics.records import SearchRecord, utc_day

DAILY = schema.DAILY
JSON_KEYS = {"tags", "refinements"}
# blocks of days (counted from 1970-01-01) the queries' and objects' rows are also kept
# for, ``day`` their first: a period reads whole blocks where it can, days at its edges
SPANS = (4, 16)
SPANNED = {"analytics_query_days": "analytics_query_spans",
           "analytics_object_days": "analytics_object_spans"}
SPAN_TABLES = {  # a table of blocks of days: its table of days, its keys
    SPANNED[days]: (days, (*DAILY[days][0][:1], "span", *DAILY[days][0][1:]))
    for days in SPANNED}
UPSERTS = {table: f"{insert(table, (*keys, *counters))} {adding(table, keys, counters)}"
           for table, (keys, counters) in DAILY.items()}
PURGE = tuple(f"DELETE FROM {table} WHERE day < ?" for table in
              (*DAILY, "analytics_hit_events", "analytics_early_events"))


# -- the searches of a batch ----------------------------------------------------------------

SEARCH_COLUMNS = ("at", "day", "handle", "query", "nb_hits", "page", "refinements", "tags",
                  "user_token", "latency_ms", "query_id", "hits")
BATCH = "analytics_batch"  # a connection's own table: the searches of the batch it writes
_BATCH_TYPES = {"at": "real", "day": "day", "nb_hits": "bigint", "page": "bigint",
                "latency_ms": "real", "refinements": "json", "tags": "json", "hits": "json"}
_COLUMNS = ", ".join(SEARCH_COLUMNS)
CLEAR_BATCH = f"DELETE FROM {BATCH}"
INSERT_BATCH = insert(BATCH, SEARCH_COLUMNS)
KEEP_BATCH = f"INSERT INTO analytics_searches ({_COLUMNS}) SELECT {_COLUMNS} FROM {BATCH}"


def create_batch(d: Dialect) -> str:
    """The statement creating ``BATCH`` for this connection (its columns: the log's)."""
    types = schema.TYPES[d.name]
    columns = ", ".join(f"{c} {types[_BATCH_TYPES[c]] if c in _BATCH_TYPES else 'TEXT'}"
                        for c in SEARCH_COLUMNS)
    return f"CREATE TEMPORARY TABLE IF NOT EXISTS {BATCH} ({columns}){d.batch_suffix}"



def search_rows(d: Dialect, records: Iterable[SearchRecord]) -> Iterable[tuple[Any, ...]]:
    """The rows of ``records`` for ``INSERT_BATCH`` (each objectID once per search, as the
    rollups count it)."""
    return ((r.at, d.day_at(r.at), r.handle, r.query, r.nb_hits, r.page,
             d.json(r.refinements), d.json(r.tags), r.user_token, r.latency_ms, r.query_id,
             d.json(tuple(dict.fromkeys(r.hits)))) for r in records)


def _add(d: Dialect, table: str, columns: Sequence[str], select: str) -> str:
    """The counters of the rows ``select`` (its key columns, then ``columns``' counts) added
    to ``table``'s. On a database that several writers share, in key order: they lock the
    rows they add to in the same order, so that two of them never wait for each other."""
    keys = DAILY[table][0]
    if d.upserts_once:
        select += f" ORDER BY {first_columns(len(keys))}"
    return (f"INSERT INTO {table} ({', '.join((*keys, *columns))}) {select} "
            f"{adding(table, keys, columns)}")


def rollup_searches(d: Dialect, source: str) -> list[str]:
    """The statements adding the searches of the table ``source`` to the daily rollups
    (``WHERE`` before each ``GROUP BY``: SQLite reads an ``ON`` after a bare ``FROM`` as a
    join's)."""
    empty = "CASE WHEN s.nb_hits = 0 THEN 1 ELSE 0 END"
    refined = f"{d.array_length('s.refinements')} > 0"
    tracked_hits = "CASE WHEN s.query_id IS NULL THEN 0 ELSE s.nb_hits END"
    tracked = "CASE WHEN s.query_id IS NULL THEN 0 ELSE 1 END"
    refinement = "r.value ->> 0, r.value ->> 1, r.value ->> 2"
    return [
        _add(d, "analytics_days", ("searches", "no_results", "tracked"),
             f"SELECT s.handle, s.day, s.tags, count(*), sum({empty}), count(s.query_id) "
             f"FROM {source} s WHERE true GROUP BY s.handle, s.day, s.tags"),
        _add(d, "analytics_query_days",
             ("searches", "no_results", "no_results_filtered", "filtered", "hits_sum",
              "tracked", "unclicked", "unclicked_hits_sum"),
             "SELECT s.handle, s.day, s.query, s.tags, count(*), " + ", ".join(
                 f"sum({counter})" for counter in (
                     empty, f"CASE WHEN s.nb_hits = 0 AND {refined} THEN 1 ELSE 0 END",
                     f"CASE WHEN {refined} THEN 1 ELSE 0 END", "s.nb_hits", tracked, tracked,
                     tracked_hits))
             + f" FROM {source} s WHERE true GROUP BY s.handle, s.day, s.query, s.tags"),
        # the searches with the same objects counted together first (a query asked again
        # shows the same page), then each object of each list added
        _add(d, "analytics_object_days", ("count", "tracked"),
             "SELECT g.handle, g.day, h.value, g.tags, sum(g.n), sum(g.t) "
             "FROM (SELECT s.handle, s.day, s.tags, s.hits, count(*) AS n, "
             f"count(s.query_id) AS t FROM {source} s GROUP BY s.handle, s.day, s.tags, "
             f"s.hits) g, {d.elements('g.hits', 'h')} WHERE true "
             "GROUP BY g.handle, g.day, h.value, g.tags"),
        _add(d, "analytics_filter_days", ("count",),
             f"SELECT s.handle, s.day, s.query, {refinement}, s.tags, count(*) "
             f"FROM {source} s, {d.objects('s.refinements', 'r')} WHERE true "
             "GROUP BY 1, 2, 3, 4, 5, 6, 7"),
        _add(d, "analytics_refinement_days", ("count",),
             f"SELECT s.handle, s.day, {refinement}, s.tags, count(*) "
             f"FROM {source} s, {d.objects('s.refinements', 'r')} WHERE true "
             "GROUP BY 1, 2, 3, 4, 5, 6"),
        _add(d, "analytics_no_result_days", ("count",),
             f"SELECT s.handle, s.day, s.query, s.refinements, s.tags, count(*) "
             f"FROM {source} s WHERE s.nb_hits = 0 AND {refined} "
             "GROUP BY s.handle, s.day, s.query, s.refinements, s.tags"),
    ]


def batch_rollups(d: Dialect) -> list[str]:
    """The statements adding ``BATCH`` to the rollups, the users' (and their lock) first."""
    return [*users.rollup(d, BATCH), *rollup_searches(d, BATCH)]


# -- blocks of days -------------------------------------------------------------------------

def _sums_of_days(d: Dialect, spans: str, span: int, where: str,
                  source: str | None = None) -> str:
    """The blocks of ``span`` days added up into ``spans`` from the rows of days (or of
    ``source``) that ``where`` (alias ``r``) selects."""
    days, keys = SPAN_TABLES[spans]
    counters = DAILY[days][1]
    own = keys[3]  # query or hit
    return (f"INSERT INTO {spans} ({', '.join((*keys, *counters))}) "
            f"SELECT r.handle, {span}, {d.span_day('r.day', span)}, r.{own}, r.tags, "
            + ", ".join(f"sum(r.{c})" for c in counters)
            + f" FROM {source or days} r WHERE {where} GROUP BY 1, 3, 4, 5")


SPANS_LOCK = 0x7370616E73  # pg_advisory_xact_lock key of the blocks' building
BUILT_AFTER = 2  # days after its last day before a block is added up
BLOCKS = "analytics_span_blocks"  # the blocks added up: (span, day), day its first


def purge_spans(d: Dialect, before: date) -> list[tuple[str, list[Any]]]:
    """The statements forgetting the blocks holding a day before ``before`` (the one that
    also holds later days is added up again by the next build)."""
    found: list[tuple[str, list[Any]]] = []
    for span in SPANS:
        last = d.day(block_start(before - timedelta(days=1), span))
        found += [(f"DELETE FROM {table} WHERE span = ? AND day <= ?", [span, last])
                  for table in (*SPAN_TABLES, BLOCKS)]
    return [*found, *totals.purge(d, before)]


def closed(today: date) -> date:
    """The last day of the blocks that may be added up on ``today``: a block's days are
    left a day more than the last one's to take late events and searches."""
    return today - timedelta(days=BUILT_AFTER)


def build_spans(d: Dialect, kept: Sequence[Any], today: date,
                built: Iterable[tuple[int, Any]]) -> list[list[tuple[str, list[Any]]]]:
    """The statements of each block of the days ``kept`` (the first and last with rows)
    that ended by ``closed(today)`` and is not ``built`` yet: a transaction each."""
    if kept[0] is None:
        return []
    first, last = (d.read_day(day) for day in kept)
    done = {(int(span), d.read_day(day)) for span, day in built}
    found = []
    for span in SPANS:
        day = block_start(first, span)
        while day <= last and day + timedelta(days=span - 1) <= closed(today):
            if (span, day) not in done:
                params = [span, d.day(day)]
                days = [d.day(day), d.day(day + timedelta(days=span - 1))]
                statements = [(f"DELETE FROM {spans} WHERE span = ? AND day = ?", params)
                              for spans in SPAN_TABLES]
                smaller = [n for n in SPANS if n < span and span % n == 0]
                if smaller:  # from the smaller blocks when each was added up, else days
                    n = max(smaller)
                    whole = (f"(SELECT count(*) FROM {BLOCKS} "
                             "WHERE span = ? AND day BETWEEN ? AND ?)")
                    check = [n, *days, span // n]
                    for spans in SPAN_TABLES:
                        statements += [
                            (_sums_of_days(d, spans, span,
                                           f"r.span = ? AND r.day BETWEEN ? AND ? "
                                           f"AND {whole} = ?", spans),
                             [n, *days, *check]),
                            (_sums_of_days(d, spans, span,
                                           f"r.day BETWEEN ? AND ? AND {whole} < ?"),
                             [*days, *check])]
                else:
                    statements += [(_sums_of_days(d, spans, span, "r.day BETWEEN ? AND ?"),
                                    days) for spans in SPAN_TABLES]
                found.append([*statements, (f"INSERT INTO {BLOCKS} (span, day) VALUES (?, ?) "
                                            "ON CONFLICT (span, day) DO NOTHING", params)])
            day += timedelta(days=span)
    return found


def cover(start: date, end: date, built: set[tuple[int, date]]
          ) -> list[tuple[int, date, date]]:
    """The days from ``start`` to ``end`` as the largest blocks ``built`` where they fit,
    days elsewhere: ``(span, first, last)``, the blocks of ``span`` days (1: days) whose
    first day is from ``first`` to ``last``."""
    found: list[tuple[int, date, date]] = []
    day = start
    while day <= end:
        span = next(n for n in (*sorted(SPANS, reverse=True), 1)
                    if n == 1 or ((n, day) in built and day + timedelta(days=n - 1) <= end))
        if found and found[-1][0] == span:
            found[-1] = (span, found[-1][1], day)
        else:
            found.append((span, day, day))
        day += timedelta(days=span)
    return found


DAYS_KEPT = "SELECT min(day), max(day) FROM analytics_query_days"
BUILT = f"SELECT span, day FROM {BLOCKS}"
# what the daily build reads first: the days kept, and what is added up of them
BUILD_READS = (DAYS_KEPT, BUILT, totals.DAYS_OF_TOTALS, totals.DAYS_OF_HITS)


def builds(d: Dialect, found: Sequence[Sequence[Any]], today: date
           ) -> list[list[tuple[str, list[Any]]]]:
    """Given the rows of ``BUILD_READS``, the daily build's transactions: the blocks of
    days, then the running totals and objects per query (``totals.build``)."""
    kept, built, totals_built, hits_built = found
    kept = kept[0] if kept else (None, None)
    return [*build_spans(d, kept, today, built),
            *totals.build(d, kept, closed(today), totals_built,
                          [row[0] for row in hits_built])]


def lock_spans(d: Dialect) -> list[tuple[str, list[Any]]]:
    """The lock a block's building and the writes to its days take turns on (PostgreSQL)."""
    return [(f"SELECT pg_advisory_xact_lock({SPANS_LOCK})", [])] if d.upserts_once else []


def old_days(records: Sequence[SearchRecord], today: date) -> set[date]:
    """The days of ``records`` that a block added up may hold (mostly none: the oldest
    search is looked at first)."""
    if not records or utc_day(min(r.at for r in records)) > closed(today):
        return set()
    return {utc_day(r.at) for r in records}


def invalidate(d: Dialect, days: Iterable[date], today: date) -> list[tuple[str, list[Any]]]:
    """The statements, run after the writes to ``days`` in their transaction, forgetting
    that the blocks holding them were added up."""
    old = sorted({day for day in days if day <= closed(today)})
    if not old:
        return []
    blocks = sorted({(span, block_start(day, span)) for day in old for span in SPANS})
    return [*lock_spans(d), *((f"DELETE FROM {BLOCKS} WHERE span = ? AND day = ?",
                               [span, d.day(day)]) for span, day in blocks),
            *totals.invalidate(d, old)]
