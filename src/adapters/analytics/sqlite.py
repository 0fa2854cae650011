"""The query log in an SQLite file (the standard library's ``sqlite3``), the default store.

Two connections to one file in WAL mode (readers never wait for the writer):

- **the writer's**, on the event loop: each batch of the recorder is one transaction of
  short statements (a slice of at most ``SLICE`` searches each), and the loop serves
  requests between any two of them. The interpreter's lock is never handed to another
  thread for this work: a writer thread beside the loop, taking turns with it for every
  statement, cost the searches several times the statements' own CPU. Nothing on this
  connection waits for the disk: commits in WAL mode with ``synchronous=NORMAL`` do not
  sync, and its automatic checkpoints are off;
- **the thread's**, in one thread of its own: the reads of the Analytics API (long on a
  big log), the checkpoints that copy the log's pages into the file and sync it, the
  daily salt, the purge and the migrations.

Days are kept as ``YYYY-MM-DD`` text, which sorts as the days do.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import Any, TypeVar

from searchport.adapters.analytics import rollups, schema, sql, users
from searchport.adapters.analytics.sql import SQLITE, SqlAnalytics
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import SearchRecord, utc_day
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
        self._db: sqlite3.Connection | None = None  # the thread's
        self._writer: sqlite3.Connection | None = None  # the event loop's
        self._writing = asyncio.Lock()  # one transaction at a time on the writer's

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

    async def _write(self, work: Callable[[sqlite3.Connection], Iterator[None]]) -> None:
        """``work`` in one transaction on the writer's connection, the event loop's turn
        after each of its steps; rolled back when it fails or passes the timeout."""
        async with self._writing:
            try:
                async with asyncio.timeout(self.timeout):
                    db = await self._writer_connection()
                    await _begin(db)
                    try:
                        for _ in work(db):
                            await asyncio.sleep(0)
                        db.execute("COMMIT")
                    except BaseException:
                        db.rollback()
                        raise
            except TimeoutError:
                raise AnalyticsUnavailable(
                    f"The analytics file did not answer within {self.timeout:g} s") from None
            except (sqlite3.Error, OSError) as exc:
                self._close_writer()  # opened again by the next write
                raise AnalyticsUnavailable(
                    f"The analytics file cannot be used: {exc}") from None
        # when this fails, the pages stay in the write-ahead log, as committed as they were
        with contextlib.suppress(AnalyticsUnavailable):
            await self._run(_checkpoint)

    def _close_writer(self) -> None:
        db, self._writer = self._writer, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()

    async def _writer_connection(self) -> sqlite3.Connection:
        if self._writer is None:
            await self.open()  # the file made and migrated (in the thread)
            db = sqlite3.connect(self.path, timeout=0, isolation_level=None)
            try:
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA temp_store=MEMORY")
                db.execute("PRAGMA wal_autocheckpoint=0")  # the thread checkpoints
            except BaseException:
                db.close()
                raise
            self._writer = db
        return self._writer

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

    async def write_searches(self, records: Iterable[SearchRecord]) -> None:
        """The searches and their rollups; the events already kept that name them. The
        records are read a slice at a time, as they are written."""
        await self._write(lambda db: _write_batch(db, sql.slices(records, SLICE)))

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        """The events, and what they did added to their searches' rollups."""
        if events:
            await self._write(lambda db: _apply(db, events))

    async def purge(self, before: date) -> int:
        """The days before ``before`` forgotten, then the blocks of days that ended since
        added up, and the running totals and objects per query of the days that ended
        (``rollups.builds``), each in a transaction of its own (the writer
        takes its turns between them)."""
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

        def blocks(db: sqlite3.Connection) -> list[list[tuple[str, list[Any]]]]:
            return rollups.builds(SQLITE, [db.execute(statement).fetchall()
                                           for statement in rollups.BUILD_READS],
                                  utc_day(time.time()))

        def build(statements: list[tuple[str, list[Any]]]) -> Callable[
                [sqlite3.Connection], None]:
            def run(db: sqlite3.Connection) -> None:
                with _transaction(db):
                    for statement, params in statements:
                        db.execute(statement, params)
            return run

        removed = await self._run(purge)
        for statements in await self._run(blocks):
            await self._run(build(statements))
        return removed

    async def _rows(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return await self._run(lambda db: db.execute(statement, params).fetchall())

    async def close(self) -> None:
        def close() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None

        async with self._writing:
            self._close_writer()
        await asyncio.get_running_loop().run_in_executor(self._executor, close)
        self._executor.shutdown(wait=False)


def _checkpoint(db: sqlite3.Connection) -> None:
    """In the thread, between two batches: the pages written copied into the file (synced),
    and, when all were, the write-ahead log begun anew here with a write of the file's
    ``user_version`` (otherwise unused): SQLite syncs the header of a log begun anew, and
    the writer's next batch, on the event loop, then appends to this one instead."""
    busy, frames, copied = db.execute(CHECKPOINT).fetchone()
    if not busy and 0 < frames == copied:
        with _transaction(db):
            flipped = db.execute("PRAGMA user_version").fetchone()[0] ^ 1
            db.execute(f"PRAGMA user_version = {flipped:d}")


CHECKPOINT = "PRAGMA wal_checkpoint(PASSIVE)"  # never waits for the writer
BUSY_RETRY = 0.005  # seconds between tries while another connection writes


async def _begin(db: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE`` on the writer's connection, which never waits inside SQLite
    (that would hold the event loop): tried again while the thread's connection writes
    (a salt, the purge), until the caller's deadline."""
    while True:
        try:
            db.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY:
                raise
        await asyncio.sleep(BUSY_RETRY)


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK``) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _apply(db: sqlite3.Connection, events: Sequence[InsightsEvent], *,
           early: Sequence[str] | None = None, replayed: bool = False) -> Iterator[None]:
    """Inside a transaction: ``events`` (kept unless ``early`` or ``replayed``: as
    ``rollups.plan_events`` says) added to the rollups of the searches they name; a step
    per statement."""
    names = sorted({q for e in events for q in rollups.named(e)} if early is None
                   else set(early))
    searches = rollups.searches_of(
        (row for part in rollups.chunks(names)
         for row in db.execute(rollups.lookup_searches(len(part)), part)), SQLITE)
    yield
    known = sorted(searches)
    states = rollups.hit_states_of(
        row for part in rollups.chunks(known)
        for row in db.execute(rollups.lookup_hit_states(len(part)), part))
    yield
    today = None if replayed else utc_day(time.time())
    for statement, rows in rollups.plan_events(SQLITE, events, searches, states,
                                               early=early, replayed=replayed, today=today):
        if rows:
            db.executemany(statement, rows)
            yield


LOG = "analytics_searches"
ROWS_PER_INSERT = 64
SLICE = 256  # searches inserted and rolled up in one step of a batch
INSERT_ROWS = rollups.insert_searches(LOG, ROWS_PER_INSERT)
LAST_ROW = f"SELECT max(rowid) FROM {LOG}"
# one slice just written: the log's rows after its last one before, up to its own last
# (one writer at a time: each batch is written in a transaction of its own)
WRITTEN = f"(SELECT * FROM {LOG} NOT INDEXED WHERE rowid > ? AND rowid <= ?)"  # by rowid
# by (any refinement, any tags, mostly distinct queries) among the slice's searches: only
# the statements it needs, the queries' rows added to one by one when they hardly group
ROLLUP_WRITTEN = {(refined, tagged, distinct): (
    *users.rollup(SQLITE, WRITTEN, tagged),
    *rollups.rollup_searches(SQLITE, WRITTEN, refined, distinct))
    for refined in (False, True) for tagged in (False, True) for distinct in (False, True)}
DISTINCT = 0.75  # distinct queries to searches in a slice, past which its queries' rows are
# added to one by one


def _insert(db: sqlite3.Connection, records: Sequence[SearchRecord]) -> Iterator[None]:
    """``records`` into the log, ``ROWS_PER_INSERT`` to a statement (one run of a statement
    for many rows, not one each); a step per statement."""
    flat = itertools.chain.from_iterable
    for start in range(0, len(records), ROWS_PER_INSERT):
        rows = sql.search_rows(SQLITE, records[start:start + ROWS_PER_INSERT])
        statement = (INSERT_ROWS if len(rows) == ROWS_PER_INSERT
                     else rollups.insert_searches(LOG, len(rows)))
        db.execute(statement, tuple(flat(rows)))
        yield


def _write_batch(db: sqlite3.Connection, slices: Iterable[list[SearchRecord]]
                 ) -> Iterator[None]:
    """Inside a transaction: the searches of ``slices`` kept in the log and added to the
    rollups, slice by slice (each let go once written), then the early events that named
    them applied and forgotten; a step per statement."""
    today = utc_day(time.time())
    tracked: set[str] = set()
    old: set[date] = set()
    last = db.execute(LAST_ROW).fetchone()[0] or 0
    for part in slices:
        yield from _insert(db, part)
        end = db.execute(LAST_ROW).fetchone()[0]
        needs = (any(r.refinements for r in part), any(r.tags for r in part),
                 len({r.query for r in part}) > DISTINCT * len(part))
        for statement in ROLLUP_WRITTEN[needs]:
            db.execute(statement, (last, end))
            yield
        last = end
        tracked.update(r.query_id for r in part if r.query_id)
        old |= rollups.old_days(part, today)
    found = [row for row in db.execute(rollups.EARLY_BETWEEN, (min(tracked), max(tracked)))
             if row[1] in tracked] if tracked else []
    if found:
        yield from _apply(db, [rollups.event_of(row[2:]) for row in found],
                          early=[row[1] for row in found])
        ids = [row[0] for row in found]
        for part_ids in rollups.chunks(ids):
            db.execute(rollups.forget_early(len(part_ids)), part_ids)
    for statement, params in rollups.invalidate(SQLITE, old, today):
        db.execute(statement, params)


def _replay(db: sqlite3.Connection) -> None:
    """The rollups of a database kept before them, from its searches and events."""
    for statement in rollups.rollup_searches(SQLITE, "analytics_searches"):
        db.execute(statement)
    events = db.execute(rollups.REPLAY_EVENTS)
    while batch := events.fetchmany(5000):
        for _ in _apply(db, [rollups.event_of(r) for r in batch], replayed=True):
            pass


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
        if row is None:
            db.execute("INSERT INTO analytics_schema (version) VALUES (?)", (schema.VERSION,))
        elif found < schema.VERSION:
            db.execute("UPDATE analytics_schema SET version = ?", (schema.VERSION,))
