"""The query log in PostgreSQL (psycopg 3, asyncio), shared by every searchport instance
that names the same database.

One connection per process, opened on first use and again after a failure; calls take
turns on it. Every call has the store's timeout (``statement_timeout`` on the server and a
deadline here); a connection that timed out or failed is dropped. Migrations run under a
transaction-scoped advisory lock, so instances starting together migrate once.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable, Sequence
from datetime import date, timedelta
from typing import Any, TypeVar

import msgspec
import psycopg
from psycopg.types.json import Jsonb

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
MIGRATION_LOCK = 0x73706F7274  # pg_advisory_xact_lock key of the schema migrations
_json = msgspec.json.Encoder()

INSERT_SEARCH = (
    "INSERT INTO analytics_searches (at, day, handle, query, nb_hits, page, refinements, "
    "tags, user_token, latency_ms, query_id) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
INSERT_EVENT = (
    "INSERT INTO analytics_events (at, day, handle, type, subtype, name, user_token, "
    "authenticated_user_token, object_ids, positions, query_id, filters, object_query_ids) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
# tracked searches per day, and the events of one type naming them (``q``: a query id)
PER_TRACKED_SEARCH = """
    SELECT s.day, count(*), count(c.n), coalesce(sum(c.n), 0)
    FROM analytics_searches s
    LEFT JOIN ({events}) c ON c.q = s.query_id
    WHERE s.handle = %s AND s.day BETWEEN %s AND %s AND s.query_id IS NOT NULL
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
        LEFT JOIN LATERAL jsonb_array_elements_text(e.object_query_ids) AS j(value)
          ON e.query_id IS NULL
        WHERE e.type = 'conversion') AS named
    WHERE q IS NOT NULL AND q <> '' GROUP BY q""")
CLICK_POSITIONS = """
    SELECT e.day, j.value::integer AS p, count(*)
    FROM analytics_events e, jsonb_array_elements_text(e.positions) AS j(value)
    WHERE e.handle = %s AND e.type = 'click' AND e.day BETWEEN %s AND %s
    GROUP BY e.day, p ORDER BY e.day, p
"""
POPULAR_QUERIES = """
    SELECT query, count(*) AS n, max(nb_hits) FROM analytics_searches
    WHERE handle = %s AND day BETWEEN %s AND %s AND query <> ''
    GROUP BY query HAVING count(*) >= %s ORDER BY n DESC, query COLLATE "C" LIMIT %s
"""
# seconds a popular_queries read may take: it reads a whole period of the log
POPULAR_TIMEOUT = 120.0


def _jsonb(value: object) -> Jsonb:
    return Jsonb(value, dumps=lambda v: _json.encode(v).decode("utf-8"))


class PostgresAnalyticsStore:
    """``AnalyticsStore`` over a PostgreSQL database, given by a ``postgresql://`` URL."""

    def __init__(self, url: str, timeout: float = 5.0) -> None:
        self.url = url
        self.timeout = timeout
        self._db: psycopg.AsyncConnection[Any] | None = None
        self._turn = asyncio.Lock()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        db = await psycopg.AsyncConnection.connect(
            self.url, connect_timeout=max(1, round(self.timeout)), autocommit=True,
            options=f"-c statement_timeout={round(self.timeout * 1000)}",
        )
        try:
            await _migrate(db)
        except BaseException:
            await db.close()
            raise
        return db

    async def _run(self, work: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]]) -> T:
        async with self._turn:
            try:
                async with asyncio.timeout(self.timeout):
                    if self._db is None or self._db.closed:
                        self._db = await self._connect()
                    return await work(self._db)
            except (TimeoutError, psycopg.Error, OSError) as exc:
                await self._drop()
                if isinstance(exc, TimeoutError):
                    raise AnalyticsUnavailable(
                        f"The analytics database did not answer within {self.timeout:g} s"
                    ) from None
                # psycopg's messages name the server and the failure, never the password
                raise AnalyticsUnavailable(f"The analytics database cannot be used: "
                                           f"{_first_line(exc)}") from None

    async def _drop(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            with contextlib.suppress(psycopg.Error, OSError):
                await db.close()

    async def open(self) -> None:
        async def nothing(db: psycopg.AsyncConnection[Any]) -> None:
            return None

        await self._run(nothing)

    async def day_salt(self, day: date) -> bytes:
        async def salt(db: psycopg.AsyncConnection[Any]) -> bytes:
            async with db.transaction():
                await db.execute("INSERT INTO analytics_day_salts (day, salt) VALUES (%s, %s) "
                                 "ON CONFLICT (day) DO NOTHING", (day, secrets.token_bytes(32)))
                await db.execute("DELETE FROM analytics_day_salts WHERE day < %s",
                                 (day - timedelta(days=1),))
                cursor = await db.execute("SELECT salt FROM analytics_day_salts WHERE day = %s",
                                          (day,))
                row = await cursor.fetchone()
            assert row is not None  # inserted above, or by another instance
            return bytes(row[0])

        return await self._run(salt)

    async def _write(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
        async def write(db: psycopg.AsyncConnection[Any]) -> None:
            async with db.transaction(), db.cursor() as cursor:
                await cursor.executemany(sql, rows)

        if rows:
            await self._run(write)

    async def write_searches(self, records: Sequence[SearchRecord]) -> None:
        await self._write(INSERT_SEARCH, [
            (r.at, utc_day(r.at), r.handle, r.query, r.nb_hits, r.page,
             _jsonb(r.refinements), _jsonb(r.tags), r.user_token, r.latency_ms, r.query_id)
            for r in records])

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        await self._write(INSERT_EVENT, [
            (e.at, utc_day(e.at), e.handle, e.type, e.subtype, e.name, e.user_token,
             e.authenticated_user_token, _jsonb(e.object_ids), _jsonb(e.positions),
             e.query_id, _jsonb(e.filters), _jsonb(e.object_query_ids))
            for e in events])

    async def purge(self, before: date) -> int:
        async def purge(db: psycopg.AsyncConnection[Any]) -> int:
            async with db.transaction():
                searches = await db.execute("DELETE FROM analytics_searches WHERE day < %s",
                                            (before,))
                events = await db.execute("DELETE FROM analytics_events WHERE day < %s",
                                          (before,))
            return searches.rowcount + events.rowcount

        return await self._run(purge)

    async def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        async def rows(db: psycopg.AsyncConnection[Any]) -> list[tuple[Any, ...]]:
            cursor = await db.execute(sql, params)
            return await cursor.fetchall()

        return await self._run(rows)

    async def searches_by_day(self, handle: str, start: date, end: date) -> list[DayCount]:
        rows = await self._rows(
            "SELECT day, count(*), count(*) FILTER (WHERE nb_hits = 0) FROM analytics_searches "
            "WHERE handle = %s AND day BETWEEN %s AND %s GROUP BY day ORDER BY day",
            (handle, start, end))
        return [DayCount(day, count, none) for day, count, none in rows]

    async def users(self, handle: str, start: date, end: date) -> tuple[int, list[DayUsers]]:
        total = await self._rows(
            "SELECT count(DISTINCT user_token) FROM analytics_searches WHERE handle = %s "
            "AND day BETWEEN %s AND %s", (handle, start, end))
        days = await self._rows(
            "SELECT day, count(DISTINCT user_token) FROM analytics_searches WHERE handle = %s "
            "AND day BETWEEN %s AND %s GROUP BY day ORDER BY day", (handle, start, end))
        return int(total[0][0]), [DayUsers(day, users) for day, users in days]

    async def top_searches(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, no_results: bool = False,
                           no_clicks: bool = False) -> list[TopSearch]:
        hits = "AND nb_hits = 0 " if no_results else ""
        if no_clicks:
            hits += ("AND query_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM analytics_events "
                     "e WHERE e.query_id = analytics_searches.query_id AND e.type = 'click') ")
        rows = await self._rows(
            "SELECT query, count(*) AS n, round(avg(nb_hits))::bigint, "
            "count(*) FILTER (WHERE refinements <> '[]'::jsonb) "
            "FROM analytics_searches WHERE handle = %s AND day BETWEEN %s AND %s " + hits +
            "GROUP BY query ORDER BY n DESC, query COLLATE \"C\" LIMIT %s OFFSET %s",
            (handle, start, end, limit, offset))
        return [TopSearch(*row) for row in rows]

    async def popular_queries(self, handle: str, start: date, end: date, *,
                              min_count: int, limit: int) -> list[PopularQuery]:
        """On a connection of its own, so that the writes go on meanwhile; the server
        stops the statement past ``POPULAR_TIMEOUT``."""
        try:
            async with asyncio.timeout(POPULAR_TIMEOUT + self.timeout):
                db = await psycopg.AsyncConnection.connect(
                    self.url, connect_timeout=max(1, round(self.timeout)), autocommit=True,
                    options=f"-c statement_timeout={round(POPULAR_TIMEOUT * 1000)}")
                async with db:
                    cursor = await db.execute(POPULAR_QUERIES,
                                              (handle, start, end, min_count, limit))
                    rows = await cursor.fetchall()
        except TimeoutError:
            raise AnalyticsUnavailable(f"The analytics database did not answer within "
                                       f"{POPULAR_TIMEOUT:g} s") from None
        except (psycopg.Error, OSError) as exc:
            raise AnalyticsUnavailable(f"The analytics database cannot be used: "
                                       f"{_first_line(exc)}") from None
        return [PopularQuery(query, count, int(hits)) for query, count, hits in rows]

    async def clicks_by_day(self, handle: str, start: date, end: date) -> list[DayClicks]:
        rows = await self._rows(CLICKS_BY_DAY, (handle, start, end))
        return [DayClicks(day, tracked, clicked, int(clicks))
                for day, tracked, clicked, clicks in rows]

    async def conversions_by_day(self, handle: str, start: date, end: date
                                 ) -> list[DayClicks]:
        rows = await self._rows(CONVERSIONS_BY_DAY, (handle, start, end))
        return [DayClicks(day, tracked, converted, int(conversions))
                for day, tracked, converted, conversions in rows]

    async def click_positions(self, handle: str, start: date, end: date
                              ) -> list[DayPosition]:
        rows = await self._rows(CLICK_POSITIONS, (handle, start, end))
        return [DayPosition(day, p, n) for day, p, n in rows]

    async def last_update(self, handle: str) -> float | None:
        rows = await self._rows("SELECT max(at) FROM analytics_searches WHERE handle = %s",
                                (handle,))
        return None if rows[0][0] is None else float(rows[0][0])

    async def close(self) -> None:
        async with self._turn:
            await self._drop()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


async def _migrate(db: psycopg.AsyncConnection[Any]) -> None:
    async with db.transaction():
        await db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        await db.execute(schema.VERSION_TABLE)
        cursor = await db.execute("SELECT version FROM analytics_schema")
        row = await cursor.fetchone()
        found = 0 if row is None else int(row[0])
        if found > schema.VERSION:
            raise psycopg.DataError(schema.too_new(found))
        for statement in schema.statements("postgres", found):
            await db.execute(statement)
        if row is None:
            await db.execute("INSERT INTO analytics_schema (version) VALUES (%s)",
                             (schema.VERSION,))
        elif found < schema.VERSION:
            await db.execute("UPDATE analytics_schema SET version = %s", (schema.VERSION,))
