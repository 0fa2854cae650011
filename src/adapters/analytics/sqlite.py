"""The query log in an SQLite file (the standard library's ``sqlite3``), the default store.

One connection in one thread of its own: every call runs there in turn, off the event
loop, so a slow disk never holds a request. The file is in WAL mode (readers do not wait
for the writer), and each batch is one transaction. Days are kept as ``YYYY-MM-DD`` text,
which sorts as the days do.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import Any, TypeVar

from searchport.adapters.analytics import rollups, schema, sql, users
from searchport.adapters.analytics.sql import SQLITE, SqlAnalytics
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import SearchRecord
from searchport.domain.errors import AnalyticsUnavailable

T = TypeVar("T")


class SqliteAnalyticsStore(SqlAnalytics):
    """``AnalyticsStore`` over one SQLite file (created with its folder when missing)."""

    dialect = SQLITE

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
            db.execute("PRAGMA temp_store=MEMORY")
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
                db.execute(sql.INSERT_SALT, (day.isoformat(), secrets.token_bytes(32)))
                db.execute(sql.FORGET_SALTS, ((day - timedelta(days=1)).isoformat(),))
                row = db.execute(sql.READ_SALT, (day.isoformat(),)).fetchone()
            return bytes(row[0])

        return await self._run(salt)

    async def write_searches(self, records: Sequence[SearchRecord]) -> None:
        """The searches and their rollups; the events already kept that name them."""
        def write(db: sqlite3.Connection) -> None:
            rows = sql.search_rows(SQLITE, records)  # in this thread, off the event loop
            with _transaction(db):
                _write_batch(db, rows, refined=any(r.refinements for r in records),
                             tracked={r.query_id for r in records if r.query_id})

        if records:
            await self._run(write)

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        """The events, and what they did added to their searches' rollups."""
        def write(db: sqlite3.Connection) -> None:
            with _transaction(db):
                _apply(db, events)

        if events:
            await self._run(write)

    async def purge(self, before: date) -> int:
        def purge(db: sqlite3.Connection) -> int:
            with _transaction(db):
                for statement in rollups.PURGE:
                    db.execute(statement, (before.isoformat(),))
                for statement, params in rollups.purge_spans(SQLITE, before):
                    db.execute(statement, params)
                for statement, params in users.purge(SQLITE, before):
                    db.execute(statement, params)
                return sum(db.execute(statement, (before.isoformat(),)).rowcount
                           for statement in sql.PURGE)

        return await self._run(purge)

    async def _rows(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return await self._run(lambda db: db.execute(statement, params).fetchall())

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


def _steps(db: sqlite3.Connection, steps: list[rollups.Step]) -> None:
    for statement, rows in steps:
        if rows:
            db.executemany(statement, rows)


def _apply(db: sqlite3.Connection, events: Sequence[InsightsEvent], *,
           early: Sequence[str] | None = None, replayed: bool = False) -> None:
    """Inside a transaction: ``events`` (kept unless ``early`` or ``replayed``: as
    ``rollups.plan_events`` says) added to the rollups of the searches they name."""
    names = sorted({q for e in events for q in rollups.named(e)} if early is None
                   else set(early))
    searches = rollups.searches_of(
        (row for part in rollups.chunks(names)
         for row in db.execute(rollups.lookup_searches(len(part)), part)), SQLITE)
    known = sorted(searches)
    states = rollups.hit_states_of(
        row for part in rollups.chunks(known)
        for row in db.execute(rollups.lookup_hit_states(len(part)), part))
    _steps(db, rollups.plan_events(SQLITE, events, searches, states, early=early,
                                   replayed=replayed))


LOG = "analytics_searches"
ROWS_PER_INSERT = 64
INSERT_ROWS = rollups.insert_searches(LOG, ROWS_PER_INSERT)
LAST_ROW = f"SELECT max(rowid) FROM {LOG}"
# the batch just written: the log's rows after its last one before (one writer at a time:
# each batch is written in a transaction of its own, BEGIN IMMEDIATE)
WRITTEN = f"(SELECT * FROM {LOG} NOT INDEXED WHERE rowid > ?)"  # by rowid, no index
ROLLUP_WRITTEN = {refined: (*users.rollup(SQLITE, WRITTEN),
                            *rollups.rollup_searches(SQLITE, WRITTEN, refined))
                  for refined in (False, True)}


def _insert(db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """``rows`` into the log, ``ROWS_PER_INSERT`` to a statement. Each run of a statement
    lets the event loop's thread take the interpreter's lock (in turn with this one): per
    row, the requests' thread and this one would take turns thousands of times a batch."""
    full = len(rows) - len(rows) % ROWS_PER_INSERT
    flat = itertools.chain.from_iterable
    db.executemany(INSERT_ROWS, (tuple(flat(rows[start:start + ROWS_PER_INSERT]))
                                 for start in range(0, full, ROWS_PER_INSERT)))
    if full < len(rows):
        db.execute(rollups.insert_searches(LOG, len(rows) - full), tuple(flat(rows[full:])))


def _write_batch(db: sqlite3.Connection, rows: list[tuple[Any, ...]], *, refined: bool,
                 tracked: set[str]) -> None:
    """Inside a transaction: the searches ``rows`` kept in the log and added to the
    rollups (``refined``: some has a refinement), the early events that named them
    applied and forgotten (``tracked``: their queryIDs)."""
    last = db.execute(LAST_ROW).fetchone()[0] or 0
    _insert(db, rows)
    for statement in ROLLUP_WRITTEN[refined]:
        db.execute(statement, (last,))
    found = [row for row in db.execute(rollups.EARLY_BETWEEN, (min(tracked), max(tracked)))
             if row[1] in tracked] if tracked else []
    if found:
        _apply(db, [rollups.event_of(row[2:]) for row in found],
               early=[row[1] for row in found])
        ids = [row[0] for row in found]
        for part in rollups.chunks(ids):
            db.execute(rollups.forget_early(len(part)), part)


def _replay(db: sqlite3.Connection) -> None:
    """The rollups of a database kept before them, from its searches and events."""
    for statement in rollups.rollup_searches(SQLITE, "analytics_searches"):
        db.execute(statement)
    events = db.execute(rollups.REPLAY_EVENTS)
    while batch := events.fetchmany(5000):
        _apply(db, [rollups.event_of(r) for r in batch], replayed=True)


def _migrate(db: sqlite3.Connection) -> None:
    with _transaction(db):
        db.execute(schema.VERSION_TABLE)
        row = db.execute("SELECT version FROM analytics_schema").fetchone()
        found = 0 if row is None else int(row[0])
        if found > schema.VERSION:
            raise sqlite3.DatabaseError(schema.too_new(found))
        for statement in schema.statements("sqlite", found):
            db.execute(statement)
        if 0 < found < rollups.REBUILT_AT:
            _replay(db)
        if 0 < found < schema.USERS_AT:
            for statement in users.rollup(SQLITE, "analytics_searches"):
                db.execute(statement)
        if 0 < found < schema.EARLY_AT:
            for statement in rollups.fill_early(SQLITE):
                db.execute(statement)
        if rollups.REBUILT_AT <= found < schema.SPANS_AT:  # else rolled up with the rest
            for statement in rollups.fill_spans(SQLITE):
                db.execute(statement)
        if row is None:
            db.execute("INSERT INTO analytics_schema (version) VALUES (?)", (schema.VERSION,))
        elif found < schema.VERSION:
            db.execute("UPDATE analytics_schema SET version = ?", (schema.VERSION,))
