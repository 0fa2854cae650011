"""``SqlAnalyticsStore``: the ``AnalyticsStore`` port over an SQL database, whatever its
connection: the queue of what the requests record (``writer.py``), the writes (written
once for SQLite and PostgreSQL) and the reads (``reads.py``). A subclass gives its
``dialect``, ``_rows`` (a read), ``_transaction`` (its work run in one transaction within
the store's timeout, committed, or rolled back on any failure) and ``_disconnect``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, TypeVar

from searchport.adapters.analytics import rollups, schema, users
from searchport.adapters.analytics.dialect import Transaction
from searchport.adapters.analytics.events import apply_early, apply_events
from searchport.adapters.analytics.reads import SqlReads
from searchport.adapters.analytics.writer import QueryLogWriter
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import ObservedSearch, SearchRecord, utc_day
from searchport.domain.errors import AnalyticsUnavailable

T = TypeVar("T")
Work = Callable[[Transaction], Awaitable[T]]

INSERT_SALT = ("INSERT INTO analytics_day_salts (day, salt) VALUES (?, ?) "
               "ON CONFLICT (day) DO NOTHING")
FORGET_SALTS = "DELETE FROM analytics_day_salts WHERE day < ?"
READ_SALT = "SELECT salt FROM analytics_day_salts WHERE day = ?"
PURGE_LOG = tuple(f"DELETE FROM {table} WHERE day < ?"
                  for table in ("analytics_searches", "analytics_events"))


@dataclass(frozen=True, kw_only=True)
class QueueOptions:
    capacity: int = 50_000  # records waiting, past which new ones are dropped
    batch: int = 5000  # records per transaction at most
    interval: float = 1.0  # seconds between writes
    on_drop: Callable[[int], None] | None = None  # told how many records were dropped


DEFAULT_QUEUE = QueueOptions()


class SqlAnalyticsStore(SqlReads):
    """``AnalyticsStore`` over an SQL database (a subclass gives the connection)."""

    def __init__(self, timeout: float, queue: QueueOptions) -> None:
        self.timeout = timeout
        self._writer = QueryLogWriter(self, capacity=queue.capacity, batch=queue.batch,
                                      interval=queue.interval, on_drop=queue.on_drop)
        self._schema_checked = False

    async def _transaction(self, work: Work[T]) -> T:
        raise NotImplementedError

    async def _disconnect(self) -> None:
        raise NotImplementedError

    async def open(self) -> None:
        """The tables created (or their version checked), then the writer started (also when
        the database cannot be used: it tries again with each batch)."""
        try:
            await self._write(_nothing)
        except AnalyticsUnavailable:
            self._writer.start(failing=True)
            raise
        self._writer.start()

    def record_search(self, search: ObservedSearch) -> None:
        self._writer.add_search(search)

    def record_events(self, events: Sequence[InsightsEvent]) -> bool:
        return self._writer.add_events(events)

    @property
    def dropped(self) -> int:
        return self._writer.dropped

    async def close(self) -> None:
        await self._writer.close()
        await self._disconnect()

    async def _write(self, work: Work[T]) -> T:
        """``work`` in one transaction, the schema checked first on a new connection."""
        async def checked(tx: Transaction) -> T:
            if not self._schema_checked:
                await _check_schema(tx, self.dialect.name, self.dialect.upserts_once)
            return await work(tx)

        found = await self._transaction(checked)
        self._schema_checked = True
        return found

    async def day_salt(self, day: date) -> bytes:
        d = self.dialect

        async def salt(tx: Transaction) -> bytes:
            await tx.execute(INSERT_SALT, (d.day(day), secrets.token_bytes(32)))
            await tx.execute(FORGET_SALTS, (d.day(day - timedelta(days=1)),))
            return bytes((await tx.rows(READ_SALT, (d.day(day),)))[0][0])

        return await self._write(salt)

    async def write_searches(self, records: Sequence[SearchRecord]) -> None:
        """The searches, by a table of the connection's own, into the log and the rollups;
        then the early events naming them."""
        d = self.dialect
        today = utc_day(time.time())

        async def write(tx: Transaction) -> None:
            await tx.execute(rollups.create_batch(d))
            await tx.execute(rollups.CLEAR_BATCH)
            await tx.executemany(rollups.INSERT_BATCH, rollups.search_rows(d, records))
            await tx.execute(rollups.KEEP_BATCH)
            for statement in rollups.batch_rollups(d):
                await tx.execute(statement)
            if any(r.query_id for r in records):
                await apply_early(tx, d)
            for statement, params in rollups.invalidate(d, rollups.old_days(records, today),
                                                        today):
                await tx.execute(statement, params)

        if records:
            await self._write(write)

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        """The events, and what they did added to their searches' rollups."""
        async def write(tx: Transaction) -> None:
            await apply_events(tx, self.dialect, events)

        if events:
            await self._write(write)

    async def purge(self, before: date) -> int:
        """The days before ``before`` forgotten, then what the daily build adds up
        (``rollups.builds``), each in a transaction of its own."""
        d = self.dialect

        async def forget(tx: Transaction) -> int:
            for statement in rollups.PURGE:
                await tx.execute(statement, (d.day(before),))
            for statement, params in (*rollups.purge_spans(d, before), *users.purge(d, before)):
                await tx.execute(statement, params)
            return sum([await tx.execute(statement, (d.day(before),))
                        for statement in PURGE_LOG])

        def build(statements: list[tuple[str, list[Any]]]) -> Work[None]:
            async def run(tx: Transaction) -> None:
                for statement, params in (*rollups.lock_spans(d), *statements):
                    await tx.execute(statement, params)
            return run

        removed = await self._write(forget)
        found = [await self._rows(statement, []) for statement in rollups.BUILD_READS]
        for statements in rollups.builds(d, found, utc_day(time.time())):
            await self._write(build(statements))
        return removed


SCHEMA_LOCK = 0x73706F7274  # pg_advisory_xact_lock key of the tables' creation


async def _check_schema(tx: Transaction, dialect: str, shared: bool) -> None:
    """The tables created, or brought to this version (under a lock where several instances
    share the database); ``AnalyticsUnavailable`` for a version this searchport does not
    know."""
    if shared:
        await tx.execute(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK})")
    await tx.execute(schema.VERSION_TABLE)
    found = await tx.rows("SELECT version FROM analytics_schema")
    try:
        statements = schema.upgrade(dialect, int(found[0][0]) if found else None)
    except schema.SchemaMismatch as exc:
        raise AnalyticsUnavailable(str(exc)) from None
    for statement in statements:
        await tx.execute(statement)


async def _nothing(tx: Transaction) -> None:
    return None
