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
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import date, timedelta
from typing import Any, TypeVar

import psycopg

from searchport.adapters.analytics import rollups, schema, sql, users
from searchport.adapters.analytics.sql import POSTGRES, SqlAnalytics
from searchport.domain.analytics.buffer import ObservedBatch, records_of
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import SearchRecord, utc_day
from searchport.domain.errors import AnalyticsUnavailable

T = TypeVar("T")
MIGRATION_LOCK = 0x73706F7274  # pg_advisory_xact_lock key of the schema migrations
# no parameters: no %s; the users' first (their lock before any row lock of the batch)
ROLLUP_BATCH = {refined: (*users.rollup(POSTGRES, rollups.BATCH),
                          *rollups.rollup_searches(POSTGRES, rollups.BATCH, refined))
                for refined in (False, True)}
INSERT_ARRAY = POSTGRES.sql(rollups.insert_array(POSTGRES))
SLICE = 256  # searches encoded between two turns of the requests


class PostgresAnalyticsStore(SqlAnalytics):
    """``AnalyticsStore`` over a PostgreSQL database, given by a ``postgresql://`` URL."""

    dialect = POSTGRES

    def __init__(self, url: str, timeout: float = 5.0) -> None:
        self.url = url
        self.timeout = timeout
        self._db: psycopg.AsyncConnection[Any] | None = None
        self._turn = asyncio.Lock()
        self._pseudonyms: dict[date, dict[str, str]] = {}  # by day, by address

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        db = await psycopg.AsyncConnection.connect(
            self.url, connect_timeout=max(1, round(self.timeout)), autocommit=True,
            # neither JIT compilation nor parallel workers: the reads of a month take a few
            # hundred thousand rows at most, for which either costs more than it saves (the
            # workers double the server's CPU per read)
            options=(f"-c statement_timeout={round(self.timeout * 1000)} -c jit=off "
                     "-c max_parallel_workers_per_gather=0"),
        )
        try:
            await _migrate(db)
            await db.execute(rollups.create_batch(POSTGRES))
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
                await db.execute(POSTGRES.sql(sql.INSERT_SALT), (day, secrets.token_bytes(32)))
                await db.execute(POSTGRES.sql(sql.FORGET_SALTS), (day - timedelta(days=1),))
                cursor = await db.execute(POSTGRES.sql(sql.READ_SALT), (day,))
                row = await cursor.fetchone()
            assert row is not None  # inserted above, or by another instance
            return bytes(row[0])

        return await self._run(salt)

    async def write_searches(self, records: Iterable[SearchRecord]) -> None:
        """The searches and their rollups; the events already kept that name them. The
        records are read and encoded a slice at a time (the requests' turn between two),
        then sent as one array."""
        today = utc_day(time.time())
        parts: list[str] = []
        refined = tracked = False
        old: set[date] = set()
        for part in sql.slices(records, SLICE):
            parts.append(sql.search_array(part)[1:-1])  # its elements, without the brackets
            refined = refined or any(r.refinements for r in part)
            tracked = tracked or any(r.query_id for r in part)
            old |= rollups.old_days(part, today)
            del part  # let go before the requests' turn
            await asyncio.sleep(0)
        if not parts:
            return
        rows = f"[{','.join(parts)}]"
        del parts

        async def write(db: psycopg.AsyncConnection[Any]) -> None:
            async with db.transaction():
                await db.execute(INSERT_ARRAY, (rows,))
                await db.execute(rollups.KEEP_BATCH)
                for statement in ROLLUP_BATCH[refined]:
                    await db.execute(statement)
                found = (await (await db.execute(rollups.BATCH_EARLY)).fetchall()
                         if tracked else [])
                if found:
                    found.sort(key=lambda row: row[0])  # in the order they came
                    await _apply(db, [rollups.event_of(row[2:]) for row in found],
                                 early=[row[1] for row in found])
                for statement, params in rollups.invalidate(POSTGRES, old, today):
                    await db.execute(POSTGRES.sql(statement), params)

        await self._run(write)

    async def write_observed(self, batch: ObservedBatch) -> None:
        await self.write_searches(records_of(batch, self._pseudonyms))

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        """The events, and what they did added to their searches' rollups (the searches'
        rows locked meanwhile, so that two instances count each first click once)."""
        async def write(db: psycopg.AsyncConnection[Any]) -> None:
            async with db.transaction():
                await _apply(db, events)

        if events:
            await self._run(write)

    async def purge(self, before: date) -> int:
        """The days before ``before`` forgotten, then the blocks of days that ended since
        added up, and the running totals and objects per query of the days that ended
        (``rollups.builds``), each in a transaction of its own."""
        removed = await self._run(self._purge(before))
        async def blocks(db: psycopg.AsyncConnection[Any]
                         ) -> list[list[tuple[str, list[Any]]]]:
            found = [await (await db.execute(statement)).fetchall()
                     for statement in rollups.BUILD_READS]
            return rollups.builds(POSTGRES, found, utc_day(time.time()))

        def build(statements: list[tuple[str, list[Any]]]) -> Callable[
                [psycopg.AsyncConnection[Any]], Awaitable[None]]:
            async def run(db: psycopg.AsyncConnection[Any]) -> None:
                async with db.transaction():
                    for statement, params in (*rollups.lock_spans(POSTGRES), *statements):
                        await db.execute(POSTGRES.sql(statement), params)
            return run

        for statements in await self._run(blocks):
            await self._run(build(statements))
        return removed

    def _purge(self, before: date) -> Callable[[psycopg.AsyncConnection[Any]],
                                               Awaitable[int]]:
        async def purge(db: psycopg.AsyncConnection[Any]) -> int:
            removed = 0
            async with db.transaction():
                for statement in rollups.PURGE:
                    await db.execute(POSTGRES.sql(statement), (before,))
                for statement, params in rollups.purge_spans(POSTGRES, before):
                    await db.execute(POSTGRES.sql(statement), params)
                for statement, params in users.purge(POSTGRES, before):
                    await db.execute(POSTGRES.sql(statement), params)
                for statement in sql.PURGE:
                    removed += (await db.execute(POSTGRES.sql(statement), (before,))).rowcount
            return removed

        return purge

    async def _rows(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        async def rows(db: psycopg.AsyncConnection[Any]) -> list[tuple[Any, ...]]:
            cursor = await db.execute(POSTGRES.sql(statement), params)
            return await cursor.fetchall()

        return await self._run(rows)

    async def close(self) -> None:
        async with self._turn:
            await self._drop()


async def _steps(db: psycopg.AsyncConnection[Any], steps: list[rollups.Step]) -> None:
    async with db.cursor() as cursor:
        for statement, rows in steps:
            if rows:
                await cursor.executemany(POSTGRES.sql(statement), rows)


async def _apply(db: psycopg.AsyncConnection[Any], events: Sequence[InsightsEvent], *,
                 early: Sequence[str] | None = None, replayed: bool = False) -> None:
    """Inside a transaction: ``events`` (kept unless ``early`` or ``replayed``: as
    ``rollups.plan_events`` says) added to the rollups of the searches they name, whose
    rows are locked until it ends."""
    names = sorted({q for e in events for q in rollups.named(e)} if early is None
                   else set(early))
    rows: list[tuple[Any, ...]] = []
    for part in rollups.chunks(names):
        rows += await (await db.execute(
            POSTGRES.sql(rollups.lookup_searches(len(part)) + " FOR UPDATE"), part)).fetchall()
    searches = rollups.searches_of(rows, POSTGRES)
    states: list[tuple[Any, ...]] = []
    for part in rollups.chunks(sorted(searches)):
        states += await (await db.execute(
            POSTGRES.sql(rollups.lookup_hit_states(len(part))), part)).fetchall()
    await _steps(db, rollups.plan_events(POSTGRES, events, searches,
                                         rollups.hit_states_of(states), early=early,
                                         replayed=replayed,
                                         today=None if replayed else utc_day(time.time())))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


async def _replay(db: psycopg.AsyncConnection[Any]) -> None:
    """The rollups of a database kept before them, from its searches and events."""
    for statement in rollups.rollup_searches(POSTGRES, "analytics_searches"):
        await db.execute(statement)
    async with db.cursor(name="searchport_replay_events") as events:
        await events.execute(rollups.REPLAY_EVENTS)
        while batch := await events.fetchmany(5000):
            await _apply(db, [rollups.event_of(r) for r in batch], replayed=True)


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
        if 0 < found < rollups.REBUILT_AT:
            await _replay(db)
        if 0 < found < schema.USERS_AT:
            for statement in users.rollup(POSTGRES, "analytics_searches"):
                await db.execute(statement)
        if 0 < found < schema.EARLY_AT:
            for statement in rollups.fill_early(POSTGRES):
                await db.execute(statement)
        if row is None:
            await db.execute("INSERT INTO analytics_schema (version) VALUES (%s)",
                             (schema.VERSION,))
        elif found < schema.VERSION:
            await db.execute("UPDATE analytics_schema SET version = %s", (schema.VERSION,))
