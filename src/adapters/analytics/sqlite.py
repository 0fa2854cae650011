"""The query log in an SQLite file (the standard library's ``sqlite3``), the default store.

One connection in one thread of its own: every call runs there in turn, off the event
loop, so a slow disk never holds a request. The file is in WAL mode (readers do not wait
for the writer), and each batch is one transaction. Days are kept as ``YYYY-MM-DD`` text,
which sorts as the days do.
"""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import TypeVar

import msgspec

from searchport.adapters.analytics import schema
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import SearchRecord, utc_day
from searchport.domain.analytics.reports import (
    DayClicks,
    DayCount,
    DayPosition,
    DayUsers,
    PopularQuery,
    TopSearch,
)
from searchport.domain.errors import AnalyticsUnavailable

T = TypeVar("T")
_json = msgspec.json.Encoder()

INSERT_SEARCH = (
    "INSERT INTO analytics_searches (at, day, handle, query, nb_hits, page, refinements, "
    "tags, user_token, latency_ms, query_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_EVENT = (
    "INSERT INTO analytics_events (at, day, handle, type, subtype, name, user_token, "
    "authenticated_user_token, object_ids, positions, query_id, filters, object_query_ids) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# tracked searches per day, and the events of one type naming them (``q``: a query id)
PER_TRACKED_SEARCH = """
    SELECT s.day, count(*), sum(CASE WHEN c.n > 0 THEN 1 ELSE 0 END), coalesce(sum(c.n), 0)
    FROM analytics_searches s
    LEFT JOIN ({events}) c ON c.q = s.query_id
    WHERE s.handle = ? AND s.day BETWEEN ? AND ? AND s.query_id IS NOT NULL
    GROUP BY s.day ORDER BY s.day
"""
CLICKS_BY_DAY = PER_TRACKED_SEARCH.format(events="""
    SELECT query_id AS q, count(*) AS n FROM analytics_events
    WHERE type = 'click' AND query_id IS NOT NULL GROUP BY query_id""")
# a conversion names its search by queryID, or (a purchase) by each object's; once per event
CONVERSIONS_BY_DAY = PER_TRACKED_SEARCH.format(events="""
    SELECT q, count(*) AS n FROM (
        SELECT DISTINCT e.id, coalesce(e.query_id, j.value) AS q
        FROM analytics_events e
        LEFT JOIN json_each(e.object_query_ids) j ON e.query_id IS NULL
        WHERE e.type = 'conversion')
    WHERE q IS NOT NULL AND q <> '' GROUP BY q""")
CLICK_POSITIONS = """
    SELECT e.day, CAST(j.value AS INTEGER) AS p, count(*)
    FROM analytics_events e, json_each(e.positions) j
    WHERE e.handle = ? AND e.type = 'click' AND e.day BETWEEN ? AND ?
    GROUP BY e.day, p ORDER BY e.day, p
"""
POPULAR_QUERIES = """
    SELECT query, count(*) AS n, max(nb_hits) FROM analytics_searches
    WHERE handle = ? AND day BETWEEN ? AND ? AND query <> ''
    GROUP BY query HAVING count(*) >= ? ORDER BY n DESC, query LIMIT ?
"""
# seconds a popular_queries read may take: it reads a whole period of the log
POPULAR_TIMEOUT = 120.0


def _text(value: object) -> str:
    return _json.encode(value).decode("utf-8")


class SqliteAnalyticsStore:
    """``AnalyticsStore`` over one SQLite file (created with its folder when missing)."""

    def __init__(self, path: Path, timeout: float = 5.0) -> None:
        self.path = path
        self.timeout = timeout
        self._executor = ThreadPoolExecutor(max_workers=1,
                                            thread_name_prefix="searchport-analytics")
        self._db: sqlite3.Connection | None = None

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def call() -> T:
            if self._db is None:
                self._db = self._connect()
            try:
                return work(self._db)
            except sqlite3.Error:
                self._db.rollback()
                raise

        try:
            async with asyncio.timeout(self.timeout):
                return await asyncio.get_running_loop().run_in_executor(self._executor, call)
        except TimeoutError:
            raise AnalyticsUnavailable(
                f"The analytics file did not answer within {self.timeout:g} s") from None
        except (sqlite3.Error, OSError) as exc:
            raise AnalyticsUnavailable(f"The analytics file cannot be used: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            _migrate(db)
        except BaseException:
            db.close()
            raise
        return db

    async def open(self) -> None:
        await self._run(lambda db: None)

    async def day_salt(self, day: date) -> bytes:
        def salt(db: sqlite3.Connection) -> bytes:
            with _transaction(db):
                db.execute("INSERT OR IGNORE INTO analytics_day_salts (day, salt) VALUES (?, ?)",
                           (day.isoformat(), secrets.token_bytes(32)))
                db.execute("DELETE FROM analytics_day_salts WHERE day < ?",
                           ((day - timedelta(days=1)).isoformat(),))
                row = db.execute("SELECT salt FROM analytics_day_salts WHERE day = ?",
                                 (day.isoformat(),)).fetchone()
            return bytes(row[0])

        return await self._run(salt)

    async def write_searches(self, records: Sequence[SearchRecord]) -> None:
        rows = [(r.at, utc_day(r.at).isoformat(), r.handle, r.query, r.nb_hits, r.page,
                 _text(r.refinements), _text(r.tags), r.user_token, r.latency_ms, r.query_id)
                for r in records]
        await self._run(lambda db: _write(db, INSERT_SEARCH, rows))

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        rows = [(e.at, utc_day(e.at).isoformat(), e.handle, e.type, e.subtype, e.name,
                 e.user_token, e.authenticated_user_token, _text(e.object_ids),
                 _text(e.positions), e.query_id, _text(e.filters), _text(e.object_query_ids))
                for e in events]
        await self._run(lambda db: _write(db, INSERT_EVENT, rows))

    async def purge(self, before: date) -> int:
        def purge(db: sqlite3.Connection) -> int:
            with _transaction(db):
                removed = db.execute("DELETE FROM analytics_searches WHERE day < ?",
                                     (before.isoformat(),)).rowcount
                removed += db.execute("DELETE FROM analytics_events WHERE day < ?",
                                      (before.isoformat(),)).rowcount
            return removed

        return await self._run(purge)

    async def searches_by_day(self, handle: str, start: date, end: date) -> list[DayCount]:
        rows = await self._run(lambda db: db.execute(
            "SELECT day, count(*), sum(CASE WHEN nb_hits = 0 THEN 1 ELSE 0 END) "
            "FROM analytics_searches WHERE handle = ? AND day BETWEEN ? AND ? "
            "GROUP BY day ORDER BY day", (handle, start.isoformat(), end.isoformat()),
        ).fetchall())
        return [DayCount(date.fromisoformat(day), count, none) for day, count, none in rows]

    async def users(self, handle: str, start: date, end: date) -> tuple[int, list[DayUsers]]:
        def users(db: sqlite3.Connection) -> tuple[int, list[DayUsers]]:
            span = (handle, start.isoformat(), end.isoformat())
            total = db.execute("SELECT count(DISTINCT user_token) FROM analytics_searches "
                               "WHERE handle = ? AND day BETWEEN ? AND ?", span).fetchone()[0]
            days = db.execute("SELECT day, count(DISTINCT user_token) FROM analytics_searches "
                              "WHERE handle = ? AND day BETWEEN ? AND ? GROUP BY day "
                              "ORDER BY day", span).fetchall()
            return int(total), [DayUsers(date.fromisoformat(d), n) for d, n in days]

        return await self._run(users)

    async def top_searches(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, no_results: bool = False,
                           no_clicks: bool = False) -> list[TopSearch]:
        hits = "AND nb_hits = 0 " if no_results else ""
        if no_clicks:
            hits += ("AND query_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM analytics_events "
                     "e WHERE e.query_id = analytics_searches.query_id AND e.type = 'click') ")
        rows = await self._run(lambda db: db.execute(
            "SELECT query, count(*) AS n, CAST(round(avg(nb_hits)) AS INTEGER), "
            "sum(CASE WHEN refinements <> '[]' THEN 1 ELSE 0 END) "
            "FROM analytics_searches WHERE handle = ? AND day BETWEEN ? AND ? " + hits +
            "GROUP BY query ORDER BY n DESC, query LIMIT ? OFFSET ?",
            (handle, start.isoformat(), end.isoformat(), limit, offset),
        ).fetchall())
        return [TopSearch(*row) for row in rows]

    async def popular_queries(self, handle: str, start: date, end: date, *,
                              min_count: int, limit: int) -> list[PopularQuery]:
        """On a connection of its own in a thread of its own (WAL: the writer goes on),
        stopped by SQLite itself past ``POPULAR_TIMEOUT``."""
        def read() -> list[tuple[str, int, int]]:
            deadline = time.monotonic() + POPULAR_TIMEOUT
            db = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True,
                                 timeout=self.timeout)
            try:
                db.set_progress_handler(lambda: time.monotonic() > deadline, 100_000)
                return db.execute(POPULAR_QUERIES, (handle, start.isoformat(), end.isoformat(),
                                                    min_count, limit)).fetchall()
            finally:
                db.close()

        try:
            rows = await asyncio.to_thread(read)
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise AnalyticsUnavailable(f"The analytics file did not answer within "
                                           f"{POPULAR_TIMEOUT:g} s") from None
            raise AnalyticsUnavailable(f"The analytics file cannot be used: {exc}") from None
        except (sqlite3.Error, OSError) as exc:
            raise AnalyticsUnavailable(f"The analytics file cannot be used: {exc}") from None
        return [PopularQuery(query, count, int(hits)) for query, count, hits in rows]

    async def clicks_by_day(self, handle: str, start: date, end: date) -> list[DayClicks]:
        rows = await self._run(lambda db: db.execute(
            CLICKS_BY_DAY, (handle, start.isoformat(), end.isoformat())).fetchall())
        return [DayClicks(date.fromisoformat(day), tracked, clicked, clicks)
                for day, tracked, clicked, clicks in rows]

    async def conversions_by_day(self, handle: str, start: date, end: date
                                 ) -> list[DayClicks]:
        rows = await self._run(lambda db: db.execute(
            CONVERSIONS_BY_DAY, (handle, start.isoformat(), end.isoformat())).fetchall())
        return [DayClicks(date.fromisoformat(day), tracked, converted, conversions)
                for day, tracked, converted, conversions in rows]

    async def click_positions(self, handle: str, start: date, end: date
                              ) -> list[DayPosition]:
        rows = await self._run(lambda db: db.execute(
            CLICK_POSITIONS, (handle, start.isoformat(), end.isoformat())).fetchall())
        return [DayPosition(date.fromisoformat(day), p, n) for day, p, n in rows]

    async def last_update(self, handle: str) -> float | None:
        row = await self._run(lambda db: db.execute(
            "SELECT max(at) FROM analytics_searches WHERE handle = ?", (handle,)).fetchone())
        return None if row[0] is None else float(row[0])

    async def close(self) -> None:
        def close() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None

        await asyncio.get_running_loop().run_in_executor(self._executor, close)
        self._executor.shutdown(wait=False)


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK``) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _write(db: sqlite3.Connection, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
    if rows:
        with _transaction(db):
            db.executemany(sql, rows)


def _migrate(db: sqlite3.Connection) -> None:
    with _transaction(db):
        db.execute(schema.VERSION_TABLE)
        row = db.execute("SELECT version FROM analytics_schema").fetchone()
        found = 0 if row is None else int(row[0])
        if found > schema.VERSION:
            raise sqlite3.DatabaseError(schema.too_new(found))
        for statement in schema.statements("sqlite", found):
            db.execute(statement)
        if row is None:
            db.execute("INSERT INTO analytics_schema (version) VALUES (?)", (schema.VERSION,))
        elif found < schema.VERSION:
            db.execute("UPDATE analytics_schema SET version = ?", (schema.VERSION,))
