"""The daily rollups of the query log, kept as the searches and events are written, so that
a read over a month adds up a few rows per day instead of every search.

Per day, handle and set of ``analyticsTags`` (the segments' unit): the searches, those
without results, the tracked ones, clicked and converted (``analytics_days``); per query
too: the searches,
those without results, their hits, the tracked ones and what the events did to them
(``analytics_query_days``); per object shown (``analytics_object_days``); per refinement
(``analytics_refinement_days``, and per query: ``analytics_filter_days``); per combination
of refinements of the searches without results (``analytics_no_result_days``); the clicks
per position by the click's own day (``analytics_click_days``); revenue per currency
(``analytics_revenue_days``, ``hit`` '' for a query's). The objects of one query's
searches are not rolled up here (a row per object of nearly every new query, on the write
path): the daily build adds them up per day (``totals.py``), the log is read for the days
after.

On PostgreSQL, a batch of searches is written to a table of the connection's own
(``BATCH``), then, in the same transaction, into the log and into the rollups by ``INSERT
... SELECT ... GROUP BY`` statements the database runs by itself (``rollup_searches``);
SQLite (one writer at a time) writes a batch straight into the log and rolls up the rows
it has just added (a slice of mostly distinct queries added to their rows one search at a
time: grouping first would sort rows that hardly group). Nothing per search or per object
is planned here, each search is counted once (a batch that fails is rolled back whole,
and another instance's batch is in its own connection's table).

An event counts once its search is in the log: writing events looks their searches up
(``lookup_searches``) and adds to the search's rows. An event naming a search not yet in
the log (a click can reach another instance's database first, or this one's before the
recorder's next batch) is also kept in ``analytics_early_events``, once per such search,
whether it names it by its ``queryID`` or (a conversion) per object; writing searches
looks up the early events naming them, applies each to its search, and forgets them. The
positions of an early click are counted when it arrives, under no ``analyticsTags`` (its
search unknown), and moved to its search's tags when that search is written. What a
search has had (clicks, conversions...) is kept on its row and per object
(``analytics_hit_events``), so that "searches with at least one click" counts each once.
The queries' and objects' rows are also added up per block of days (``sql.SPANS``) once
a block has ended (``build_spans``, run by the daily purge, each block in a transaction of
its own; ``analytics_span_blocks`` lists those added up); a later write to one of its days
forgets that it was (``invalidate``), and the reads take its days again until the next
build. On PostgreSQL, a build and such writes take turns on a transaction-scoped advisory
lock, so that no write falls between a build's reading of the days and its record.
Every function here plans statements; the adapters run them in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from typing import Any

import msgspec

from searchport.adapters.analytics import schema, totals
from searchport.adapters.analytics.sql import (
    HIT_COUNTERS,
    INSERT_EVENT,
    QUERY_COUNTERS,
    SEARCH_COLUMNS,
    SPANNED,
    SPANS,
    Dialect,
    event_rows,
    span_start,
)
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import SearchRecord, utc_day
from searchport.domain.usecases.click_positions import RANGES

Step = tuple[str, list[tuple[Any, ...]]]  # one statement, the rows it runs with
_strings = msgspec.json.Decoder(list[str])

EVENT_STATE = ("clicks", "conversions", "carts", "purchases")
DAY_COUNTERS = ("searches", "no_results", "tracked", "clicked", "clicks", "converted",
                "conversions")
TABLES = {  # table: its key columns, its counters
    "analytics_days": (("handle", "day", "tags"), DAY_COUNTERS),
    "analytics_query_days": (("handle", "day", "query", "tags"), QUERY_COUNTERS),
    "analytics_object_days": (("handle", "day", "hit", "tags"), HIT_COUNTERS),
    "analytics_filter_days": (("handle", "day", "query", "attribute", "operator", "value",
                               "tags"), ("count",)),
    "analytics_refinement_days": (("handle", "day", "attribute", "operator", "value", "tags"),
                                  ("count",)),
    "analytics_no_result_days": (("handle", "day", "query", "refinements", "tags"),
                                 ("count",)),
    "analytics_click_days": (("handle", "day", "position", "tags"), ("clicks",)),
    "analytics_revenue_days": (("handle", "day", "query", "hit", "tags", "currency"),
                               ("revenue",)),
}
JSON_KEYS = {"tags", "refinements"}
SPAN_TABLES = {  # a table of blocks of days (``SPANS``): its table of days, its keys
    SPANNED[days]: (days, (*TABLES[days][0][:1], "span", *TABLES[days][0][1:]))
    for days in SPANNED}


def _upsert(table: str) -> str:
    keys, counters = TABLES[table]
    columns = (*keys, *counters)
    return (f"INSERT INTO {table} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))}) "
            f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET "
            + ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in counters))


UPSERTS = {table: _upsert(table) for table in TABLES}
SET_STATE = ("UPDATE analytics_searches SET clicks = ?, conversions = ?, carts = ?, "
             "purchases = ? WHERE query_id = ?")
HIT_STATE = ("INSERT INTO analytics_hit_events (query_id, hit, day, clicks, conversions, "
             "carts, purchases) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (query_id, hit) "
             "DO UPDATE SET clicks = excluded.clicks, conversions = excluded.conversions, "
             "carts = excluded.carts, purchases = excluded.purchases")
PURGE = tuple(f"DELETE FROM {table} WHERE day < ?" for table in
              (*TABLES, "analytics_hit_events", "analytics_early_events"))


def _sums_of_days(d: Dialect, spans: str, span: int, where: str,
                  source: str | None = None) -> str:
    """``INSERT INTO spans SELECT``: the blocks of ``span`` days added up from the rows of
    days (or of the table ``source``) ``where`` says (alias ``r``)."""
    days, keys = SPAN_TABLES[spans]
    counters = TABLES[days][1]
    own = keys[3]  # query or hit
    return (f"INSERT INTO {spans} ({', '.join((*keys, *counters))}) "
            f"SELECT r.handle, {span}, {d.span_day('r.day', span)}, r.{own}, r.tags, "
            + ", ".join(f"sum(r.{c})" for c in counters)
            + f" FROM {source or days} r WHERE {where} GROUP BY 1, 3, 4, 5")


SPANS_LOCK = 0x7370616E73  # pg_advisory_xact_lock key of the blocks' building
BUILT_AFTER = 2  # days after its last day before a block is added up
BLOCKS = "analytics_span_blocks"  # the blocks added up: (span, day), day its first


def purge_spans(d: Dialect, before: date) -> list[tuple[str, list[Any]]]:
    """The statements forgetting the blocks that hold a day before ``before`` (the one
    that also holds later days is added up again from them by the next ``build_spans``)."""
    found: list[tuple[str, list[Any]]] = []
    for span in SPANS:
        last = d.day(span_start(before - timedelta(days=1), span))
        found += [(f"DELETE FROM {table} WHERE span = ? AND day <= ?", [span, last])
                  for table in (*SPAN_TABLES, BLOCKS)]
    return [*found, *totals.purge(d, before)]


def closed(today: date) -> date:
    """The last day of the blocks that may be added up on ``today``: a block's days are
    left a day more than the last one's to take late events and searches."""
    return today - timedelta(days=BUILT_AFTER)


def build_spans(d: Dialect, kept: Sequence[Any], today: date,
                built: Iterable[tuple[int, Any]]) -> list[list[tuple[str, list[Any]]]]:
    """The blocks not yet added up (``built``: those that are) of the days ``kept`` (the
    first and last with rows, ``DAYS_KEPT``) that ended by ``closed(today)``: the
    statements of each, to run in a transaction of its own (on PostgreSQL,
    ``lock_spans`` first)."""
    if kept[0] is None:
        return []
    first, last = (d.read_day(day) for day in kept)
    done = {(int(span), d.read_day(day)) for span, day in built}
    found = []
    for span in SPANS:
        day = span_start(first, span)
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


DAYS_KEPT = "SELECT min(day), max(day) FROM analytics_query_days"
BUILT = f"SELECT span, day FROM {BLOCKS}"
# what the daily build reads first: the days kept, and what is added up of them
BUILD_READS = (DAYS_KEPT, BUILT, totals.DAYS_OF_TOTALS, totals.DAYS_OF_HITS)


def builds(d: Dialect, found: Sequence[Sequence[Any]], today: date
           ) -> list[list[tuple[str, list[Any]]]]:
    """Given the rows of ``BUILD_READS`` (the first's one row), what the daily build adds
    up: the blocks of days (``build_spans``), then the running totals and objects per
    query (``totals.build``); a transaction each."""
    kept, built, totals_built, hits_built = found
    kept = kept[0] if kept else (None, None)
    return [*build_spans(d, kept, today, built),
            *totals.build(d, kept, closed(today), totals_built,
                          [row[0] for row in hits_built])]


def lock_spans(d: Dialect) -> list[tuple[str, list[Any]]]:
    """On a database several writers share: the lock that a block's building and the
    writes to its days take turns on."""
    return [(f"SELECT pg_advisory_xact_lock({SPANS_LOCK})", [])] if d.upserts_once else []


def old_days(records: Sequence[SearchRecord], today: date) -> set[date]:
    """The days of ``records`` that a block added up may hold (mostly none: the oldest
    search is looked at first)."""
    if not records or utc_day(min(r.at for r in records)) > closed(today):
        return set()
    return {utc_day(r.at) for r in records}


def invalidate(d: Dialect, days: Iterable[date], today: date) -> list[tuple[str, list[Any]]]:
    """The statements forgetting that the blocks holding ``days`` (written to now) were
    added up, for those that may have been: they are read from their days until added up
    again. (After the writes to these days, in their transaction.)"""
    old = sorted({day for day in days if day <= closed(today)})
    if not old:
        return []
    blocks = sorted({(span, span_start(day, span)) for day in old for span in SPANS})
    return [*lock_spans(d), *((f"DELETE FROM {BLOCKS} WHERE span = ? AND day = ?",
                               [span, d.day(day)]) for span, day in blocks),
            *totals.invalidate(d, old)]


EVENT_FIELDS = ("at, handle, type, subtype, object_ids, positions, query_id, "
                "object_query_ids, revenue, currency, object_revenues")
EARLY_COLUMNS = ("name", "at", "day", "handle", "type", "subtype", "object_ids", "positions",
                 "query_id", "object_query_ids", "revenue", "currency", "object_revenues")
INSERT_EARLY = (f"INSERT INTO analytics_early_events ({', '.join(EARLY_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(EARLY_COLUMNS))})")
# SQLite: the early events whose search's queryID sorts between a batch's first and last
# (queryIDs begin with their time: a few at most), then those naming one of its searches
EARLY_BETWEEN = (f"SELECT id, name, {EVENT_FIELDS} FROM analytics_early_events "
                 "WHERE name BETWEEN ? AND ? ORDER BY id")


def forget_early(count: int) -> str:
    return f"DELETE FROM analytics_early_events WHERE id IN ({', '.join('?' * count)})"


def fill_early(d: Dialect) -> list[str]:
    """The statements keeping apart the events of a database kept before
    ``analytics_early_events`` that name a search not in its log, once per such search."""
    copied = ("e.at, e.day, e.handle, e.type, e.subtype, e.object_ids, e.positions, "
              "e.query_id, e.object_query_ids, e.revenue, e.currency, e.object_revenues")
    into = f"INSERT INTO analytics_early_events ({', '.join(EARLY_COLUMNS)}) "
    missing = "NOT EXISTS (SELECT 1 FROM analytics_searches s WHERE s.query_id = {})"
    by_object = (f"SELECT DISTINCT o.id, n.value AS name FROM analytics_events o, "
                 f"{d.elements('o.object_query_ids', 'n')} WHERE o.query_id IS NULL "
                 "AND o.type = 'conversion' AND n.value <> ''")
    return [
        f"{into}SELECT e.query_id, {copied} FROM analytics_events e "
        "WHERE e.query_id IS NOT NULL AND e.type IN ('click', 'conversion') "
        f"AND {missing.format('e.query_id')} ORDER BY e.id",
        f"{into}SELECT w.name, {copied} FROM analytics_events e "
        f"JOIN ({by_object}) w ON w.id = e.id WHERE {missing.format('w.name')} "
        "ORDER BY e.id, w.name",
    ]


def lookup_searches(count: int) -> str:
    return ("SELECT query_id, handle, day, query, tags, nb_hits, hits, clicks, conversions, "
            "carts, purchases FROM analytics_searches "
            f"WHERE query_id IN ({', '.join('?' * count)}) ORDER BY query_id")


def lookup_hit_states(count: int) -> str:
    return ("SELECT query_id, hit, clicks, conversions, carts, purchases "
            f"FROM analytics_hit_events WHERE query_id IN ({', '.join('?' * count)})")


# a database kept before the rollups: its events replayed into them (its searches are
# rolled up by ``rollup_searches`` over the whole log)
REPLAY_EVENTS = f"SELECT {EVENT_FIELDS} FROM analytics_events ORDER BY id"
REBUILT_AT = 2  # the schema version that brought the rollups



def chunks(items: Sequence[Any], size: int = 500) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _list(value: Any) -> list[Any]:
    if isinstance(value, str | bytes):
        return list(msgspec.json.decode(value))
    return list(value)


class Search:
    """A tracked search as the rollups need it, and what its events did so far."""

    def __init__(self, row: Sequence[Any], d: Dialect) -> None:
        (self.query_id, self.handle, day, self.query, tags, self.nb_hits, hits,
         *state) = row
        self.day: date = d.read_day(day)
        self.tags = tuple(_list(tags))
        self.hits = frozenset(_list(hits))
        self.state = [int(v) for v in state]
        self.changed = False


def searches_of(rows: Iterable[Sequence[Any]], d: Dialect) -> dict[str, Search]:
    return {row[0]: Search(row, d) for row in rows}


def event_of(row: Sequence[Any]) -> InsightsEvent:
    """An event read back (``EVENT_FIELDS``), as far as the rollups need it."""
    (at, handle, kind, subtype, objects, positions, query_id, object_query_ids, revenue,
     currency, object_revenues) = row
    return InsightsEvent(at=float(at), handle=handle, type=kind, subtype=subtype, name="",
                         user_token="", object_ids=tuple(_list(objects)),
                         positions=tuple(_list(positions)), query_id=query_id,
                         object_query_ids=tuple(_list(object_query_ids)),
                         revenue=revenue, currency=currency,
                         object_revenues=tuple(_list(object_revenues)))


def named(event: InsightsEvent) -> set[str]:
    """The searches an event names: its ``queryID``, else (a conversion) each object's."""
    if event.query_id:
        return {event.query_id}
    if event.type == "conversion":
        return set(event.object_query_ids) - {""}
    return set()


_PLACES = {table: {name: i for i, name in enumerate(counters)}
           for table, (_, counters) in TABLES.items()}


class _Sums:
    """Counters to add, per table and key."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[tuple[Any, ...], list[float]]] = {
            t: {} for t in TABLES}

    def add(self, table: str, key: tuple[Any, ...], **counts: float) -> None:
        places = _PLACES[table]
        row = self.tables[table].get(key)
        if row is None:
            row = self.tables[table][key] = [0] * len(places)
        for name, n in counts.items():
            row[places[name]] += n

    def steps(self, d: Dialect) -> list[Step]:
        found = []
        params: dict[Any, Any] = {}  # each day and JSON key converted once

        def param(kind: str, value: Any) -> Any:
            made = params.get((kind, value))
            if made is None:
                made = params[(kind, value)] = (d.day(value) if kind == "day"
                                                else d.json(list(value)))
            return made

        for table, sums in self.tables.items():
            if not sums:
                continue
            keys = TABLES[table][0]
            kinds = [("day" if name == "day" else "json" if name in JSON_KEYS else "")
                     for name in keys]
            # in key order: writers sharing a database lock the rows they add to in the
            # same order, so that two of them never wait for each other
            rows = [tuple(param(kind, v) if kind else v
                          for kind, v in zip(kinds, key, strict=True)) + tuple(counts)
                    for key, counts in sorted(sums.items(), key=_order)]
            found.append((UPSERTS[table], rows))
        return found


def _order(item: tuple[tuple[Any, ...], list[float]]) -> tuple[str, ...]:
    return tuple(repr(part) for part in item[0])


def _range(position: int) -> int:
    return next(i for i, (low, high) in enumerate(RANGES)
                if low <= position and (high == -1 or position <= high))


BATCH = "analytics_batch"  # a connection's own table: the searches of the batch it writes
_BATCH_TYPES = {"at": "real", "day": "day", "nb_hits": "bigint", "page": "bigint",
                "latency_ms": "real", "refinements": "json", "tags": "json", "hits": "json"}


def create_batch(d: Dialect) -> str:
    """The statement creating ``BATCH`` for this connection (its columns: the log's)."""
    types = schema.TYPES[d.name]
    columns = ", ".join(f"{c} {types[_BATCH_TYPES[c]] if c in _BATCH_TYPES else 'TEXT'}"
                        for c in SEARCH_COLUMNS)
    return f"CREATE TEMPORARY TABLE IF NOT EXISTS {BATCH} ({columns}){d.batch_suffix}"


_COLUMNS = ", ".join(SEARCH_COLUMNS)
_ROW = f"({', '.join('?' * len(SEARCH_COLUMNS))})"


def insert_searches(table: str, rows: int) -> str:
    """The statement adding ``rows`` searches to ``table`` (the log or ``BATCH``), their
    values one after the other: one statement run for many rows, not one each."""
    return f"INSERT INTO {table} ({_COLUMNS}) VALUES {', '.join([_ROW] * rows)}"


def insert_array(d: Dialect) -> str:
    """The statement filling ``BATCH`` from the one parameter ``sql.search_array`` makes
    (on SQLite, taking each value out of the JSON costs more than binding it)."""
    values = ", ".join(d.item("r", i, _BATCH_TYPES.get(c, "text"))
                       for i, c in enumerate(SEARCH_COLUMNS))
    return f"INSERT INTO {BATCH} ({_COLUMNS}) SELECT {values} FROM {d.json_rows('r')}"


KEEP_BATCH = f"INSERT INTO analytics_searches ({_COLUMNS}) SELECT {_COLUMNS} FROM {BATCH}"
CLEAR_BATCH = f"DELETE FROM {BATCH}"
# the early events naming the batch's searches (they arrived first), forgotten as they are
# read (PostgreSQL): in the order they came
BATCH_EARLY = ("DELETE FROM analytics_early_events WHERE name IN "
               f"(SELECT query_id FROM {BATCH} WHERE query_id IS NOT NULL) "
               f"RETURNING id, name, {EVENT_FIELDS}")


def _add(d: Dialect, table: str, columns: Sequence[str], select: str) -> str:
    """``INSERT INTO table SELECT ... ON CONFLICT``: the counters of the rows ``select``
    (its key columns, then ``columns``' counts) added to ``table``'s. On a database that
    several writers share, in key order: they lock the rows they add to in the same order,
    so that two of them never wait for each other."""
    keys = TABLES[table][0]
    if d.upserts_once:
        select += " ORDER BY " + ", ".join(str(i + 1) for i in range(len(keys)))
    return (f"INSERT INTO {table} ({', '.join((*keys, *columns))}) {select} "
            f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET "
            + ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in columns))


def rollup_searches(d: Dialect, source: str, with_refinements: bool = True,
                    distinct: bool = False) -> list[str]:
    """The statements adding the searches of the table ``source`` (``BATCH``, or the
    whole log when a database is migrated) to the rollups; when no search of ``source``
    has a refinement (not ``with_refinements``), without those of refinements.
    ``distinct``: the searches of ``source`` are mostly of queries of their own (one per
    row of ``analytics_query_days``), which a database that adds to a row again as often
    as it is met (not ``upserts_once``) then adds one by one instead of grouping them
    first: sorting rows that hardly group costs more than it saves. (``WHERE`` before
    each ``GROUP BY``: SQLite reads an ``ON`` after a bare ``FROM`` as a join's.)"""
    empty = "CASE WHEN s.nb_hits = 0 THEN 1 ELSE 0 END"
    refined = f"{d.array_length('s.refinements')} > 0" if with_refinements else "false"
    tracked_hits = "CASE WHEN s.query_id IS NULL THEN 0 ELSE s.nb_hits END"
    tracked = "CASE WHEN s.query_id IS NULL THEN 0 ELSE 1 END"
    refinement = "r.value ->> 0, r.value ->> 1, r.value ->> 2"

    def add(counter: str) -> str:
        return f"sum({counter})" if d.upserts_once else counter

    one_by_one = distinct and not d.upserts_once  # the queries' rows, each search's own

    def each(counter: str) -> str:
        return counter if one_by_one else f"sum({counter})"

    everyone = [
        _add(d, "analytics_days", ("searches", "no_results", "tracked"),
             f"SELECT s.handle, s.day, s.tags, count(*), sum({empty}), count(s.query_id) "
             f"FROM {source} s WHERE true GROUP BY s.handle, s.day, s.tags"),
        _add(d, "analytics_query_days",
             ("searches", "no_results", "no_results_filtered", "filtered", "hits_sum",
              "tracked", "unclicked", "unclicked_hits_sum"),
             "SELECT s.handle, s.day, s.query, s.tags, " + ", ".join(map(each, (
                 "1", empty, f"CASE WHEN s.nb_hits = 0 AND {refined} THEN 1 ELSE 0 END",
                 f"CASE WHEN {refined} THEN 1 ELSE 0 END", "s.nb_hits", tracked, tracked,
                 tracked_hits)))
             + f" FROM {source} s WHERE true"
             + ("" if one_by_one else " GROUP BY s.handle, s.day, s.query, s.tags")),
        # the searches with the same objects counted together first (a query asked again
        # shows the same page), then each object of each list added
        _add(d, "analytics_object_days", ("count", "tracked"),
             f"SELECT g.handle, g.day, h.value, g.tags, {add('g.n')}, {add('g.t')} "
             "FROM (SELECT s.handle, s.day, s.tags, s.hits, count(*) AS n, "
             f"count(s.query_id) AS t FROM {source} s GROUP BY s.handle, s.day, s.tags, "
             f"s.hits) g, {d.elements('g.hits', 'h')} WHERE true"
             + (" GROUP BY g.handle, g.day, h.value, g.tags" if d.upserts_once else "")),
    ]
    if not with_refinements:
        return everyone
    return [
        *everyone,
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


def plan_events(d: Dialect, events: Sequence[InsightsEvent], searches: dict[str, Search],
                hit_states: dict[tuple[str, str], list[int]], *,
                early: Sequence[str] | None = None, replayed: bool = False,
                today: date | None = None) -> list[Step]:
    """``events`` written, and what they did added to the rollups of the ``searches`` they
    name (``hit_states``: what each object of a search has had so far); those naming a
    search not in ``searches`` kept as early events too. Given ``early`` (the name of each
    event: early events, already kept, now applied to the one search each waited for) or
    ``replayed`` (every event kept, replayed into new rollups), nothing is written but what
    they add. Given ``today``, the blocks of days holding the searches added to are
    forgotten as added up (``invalidate``)."""
    sums = _Sums()
    touched: dict[tuple[str, str], Search] = {}
    waiting: list[tuple[str, InsightsEvent]] = []
    days: set[date] = set()
    for n, e in enumerate(events):
        own = searches.get(e.query_id or "")
        day = utc_day(e.at)
        if e.type == "click" and early is None:
            for p in e.positions:  # by the click's own day and handle
                sums.add("analytics_click_days", (e.handle, day, p, own.tags if own else ()),
                         clicks=1)
        elif e.type == "click" and own is not None and own.tags and not replayed:
            for p in e.positions:  # counted under no tags when it came: now its search's
                sums.add("analytics_click_days", (e.handle, day, p, ()), clicks=-1)
                sums.add("analytics_click_days", (e.handle, day, p, own.tags), clicks=1)
        names = named(e) if early is None else {early[n]}
        for q in sorted(names):
            s = searches.get(q)
            if s is None:
                if early is None and not replayed and e.type in ("click", "conversion"):
                    waiting.append((q, e))
                continue
            _apply(sums, e, s)
            days.add(s.day)
            for i, hit in enumerate(e.object_ids):
                object_q = e.query_id or (e.object_query_ids[i]
                                          if i < len(e.object_query_ids) else "")
                if object_q != q or hit not in s.hits:
                    continue
                state = hit_states.setdefault((q, hit), [0, 0, 0, 0])
                touched[(q, hit)] = s
                _apply_hit(sums, e, s, hit, state, _object_revenue(e, i))
    steps = [] if early is not None or replayed else [(INSERT_EVENT, event_rows(d, events))]
    if waiting:
        steps.append((INSERT_EARLY, early_rows(d, waiting)))
    steps += sums.steps(d)
    changed = sorted((s for s in searches.values() if s.changed), key=lambda s: s.query_id)
    if changed:
        steps.append((SET_STATE, [(*s.state, s.query_id) for s in changed]))
    if touched:
        steps.append((HIT_STATE, [(q, hit, d.day(s.day), *hit_states[(q, hit)])
                                  for (q, hit), s in sorted(touched.items())]))
    if today is not None:
        steps += [(statement, [tuple(params)])
                  for statement, params in invalidate(d, days, today)]
    return steps


def early_rows(d: Dialect, waiting: Sequence[tuple[str, InsightsEvent]]
               ) -> list[tuple[Any, ...]]:
    return [(name, e.at, d.day_at(e.at), e.handle, e.type, e.subtype, d.json(e.object_ids),
             d.json(e.positions), e.query_id, d.json(e.object_query_ids), e.revenue,
             e.currency, d.json(e.object_revenues)) for name, e in waiting]


def _kinds(e: InsightsEvent) -> list[int]:
    """Which of ``EVENT_STATE`` the event is: click, conversion, add-to-cart, purchase."""
    return [i for i, yes in enumerate((e.type == "click", e.type == "conversion",
                                       e.subtype == "addToCart", e.subtype == "purchase"))
            if yes]


_FIRST = ("clicked", "converted", "carted", "purchased")


def _apply(sums: _Sums, e: InsightsEvent, s: Search) -> None:
    key = (s.handle, s.day, s.query, s.tags)
    counts: dict[str, float] = {}
    for kind in _kinds(e):
        counts[EVENT_STATE[kind]] = 1
        if s.state[kind] == 0:
            counts[_FIRST[kind]] = 1
            if kind == 0:
                counts["unclicked"] = -1
                counts["unclicked_hits_sum"] = -s.nb_hits
        s.state[kind] += 1
        s.changed = True
    if e.type == "click" and e.query_id == s.query_id:
        counts["position_sum"] = sum(e.positions)
        counts["positions"] = len(e.positions)
        for p in e.positions:
            name = f"range{_range(p)}"
            counts[name] = counts.get(name, 0) + 1
    if e.subtype == "purchase" and e.revenue is not None and e.currency:
        sums.add("analytics_revenue_days", (s.handle, s.day, s.query, "", s.tags, e.currency),
                 revenue=e.revenue)
    sums.add("analytics_query_days", key, **counts)
    daily = {name: n for name, n in counts.items() if name in _PLACES["analytics_days"]}
    if daily:
        sums.add("analytics_days", (s.handle, s.day, s.tags), **daily)


def _object_revenue(e: InsightsEvent, i: int) -> float | None:
    if i < len(e.object_revenues) and e.object_revenues[i] is not None:
        return e.object_revenues[i]
    return e.revenue if len(e.object_ids) == 1 else None


def _apply_hit(sums: _Sums, e: InsightsEvent, s: Search, hit: str, state: list[int],
               revenue: float | None) -> None:
    counts: dict[str, float] = {}
    for kind in _kinds(e):
        counts[EVENT_STATE[kind]] = 1
        if state[kind] == 0:
            counts[_FIRST[kind]] = 1
        state[kind] += 1
    sums.add("analytics_object_days", (s.handle, s.day, hit, s.tags), **counts)
    if e.subtype == "purchase" and revenue is not None and e.currency:
        sums.add("analytics_revenue_days", (s.handle, s.day, s.query, hit, s.tags,
                                            e.currency), revenue=revenue)


def hit_states_of(rows: Iterable[Sequence[Any]]) -> dict[tuple[str, str], list[int]]:
    return {(q, hit): [int(v) for v in state] for q, hit, *state in rows}

