"""The query log in an SQLite file (the standard library's ``sqlite3``), the default store.

Two connections to one file in WAL mode (readers never wait for the writer):

- **the writer's**, in a process of its own (``writer_process``): each batch of the
  recorder is handed to it still packed, with the salts of its days, and it makes the
  records, writes them with their rollups in one transaction and copies the pages written
  into the file (a checkpoint, which syncs the disk). None of this work runs in the
  serving process: its event loop only hands the bytes to a thread that waits for the
  answer. A batch that takes longer than ``timeout`` kills the writer (the transaction is
  rolled back, the batch counted as dropped) and the next batch starts a new one;
- **the thread's**, in one thread of the serving process: the reads of the Analytics API
  (long on a big log), the daily salt, the purge and the migrations (before the writer
  first writes).

Days are kept as ``YYYY-MM-DD`` text, which sorts as the days do.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from searchport.adapters.analytics import rollups, schema, sql, users
from searchport.adapters.analytics.sql import SQLITE, SqlAnalytics
from searchport.adapters.analytics.writer_process import WriterGone, WriterProcess, run_child
from searchport.domain.analytics.buffer import ObservedBatch, records_of
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import SearchRecord, utc_day
from searchport.domain.errors import AnalyticsUnavailable

T = TypeVar("T")


class SqliteAnalyticsStore(SqlAnalytics):
    """``AnalyticsStore`` over one SQLite file (created with its folder when missing)."""

    dialect = SQLITE

    def __init__(self, path: Path, timeout: float = 5.0, slice_size: int | None = None,
                 writer_process: bool | None = None) -> None:
        """``slice_size``: searches inserted and rolled up in one statement's step
        (``SLICE``). ``writer_process``: False, the writer's work is done in a thread of
        this process instead (a deadline then fails the batch without stopping its
        work); None, in a process where the system can fork one from a fork server."""
        self.path = path
        self.timeout = timeout
        self._executor = ThreadPoolExecutor(max_workers=1,
                                            thread_name_prefix="searchport-analytics")
        self._db: sqlite3.Connection | None = None  # the thread's
        if writer_process is None:
            writer_process = "forkserver" in multiprocessing.get_all_start_methods()
        arguments = (str(path), timeout, slice_size or SLICE)
        self._writer: WriterProcess | _InThread = (
            WriterProcess(write_log, arguments, preload=[__name__],
                          name="searchport-analytics-writer")
            if writer_process else _InThread(_LogWriter(*arguments)))
        self._pipe = ThreadPoolExecutor(max_workers=1,
                                        thread_name_prefix="searchport-analytics-writer")
        self._writing = asyncio.Lock()  # one batch at a time
        self._migrated = False

    @property
    def writer_pid(self) -> int | None:
        """The writer process's id, while one runs."""
        return self._writer.pid

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

    async def _hand(self, work: _Work) -> None:
        """``work`` done by the writer process (started when none runs), within
        ``timeout``: past it, or when the caller gives up, the writer is killed and
        nothing of ``work`` is kept."""
        message = _messages.encode(work)
        async with self._writing:
            if not self._migrated:
                await self.open()  # the file made and migrated (in the thread)
                self._migrated = True
            answer = asyncio.get_running_loop().run_in_executor(
                self._pipe, self._writer.exchange, message, self.timeout)
            answer.add_done_callback(_retrieve)
            try:
                async with asyncio.timeout(self.timeout + STUCK):
                    failure = await asyncio.shield(answer)
            except WriterGone as exc:
                raise AnalyticsUnavailable(
                    f"The analytics file did not answer within {self.timeout:g} s"
                    if exc.timed_out else "The analytics writer process stopped") from None
            except BaseException as exc:  # the deadline passed, or the caller went away
                self._writer.kill()
                if isinstance(exc, TimeoutError):
                    raise AnalyticsUnavailable(
                        f"The analytics file did not answer within {self.timeout:g} s"
                    ) from None
                raise
        if failure:
            raise AnalyticsUnavailable(failure.decode("utf-8", "replace"))

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
        """The searches and their rollups; the events already kept that name them."""
        await self._hand(_Records(list(records)))

    async def write_observed(self, batch: ObservedBatch) -> None:
        """``write_searches`` of the batch's records, made by the writer process."""
        await self._hand(_Observed(batch))

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        """The events, and what they did added to their searches' rollups."""
        if events:
            await self._hand(_Events(list(events)))

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

        loop = asyncio.get_running_loop()
        async with self._writing:
            await loop.run_in_executor(self._pipe, self._writer.stop)
        self._pipe.shutdown(wait=False)
        await loop.run_in_executor(self._executor, close)
        self._executor.shutdown(wait=False)


def _checkpoint(db: sqlite3.Connection) -> None:
    """In the writer process, after each batch: the pages written copied into the file
    (synced), and, when all were, the write-ahead log begun anew here with a write of the
    file's ``user_version`` (otherwise unused): SQLite syncs the header of a log begun anew,
    and the next batch then appends to this one instead."""
    busy, frames, copied = db.execute(CHECKPOINT).fetchone()
    if not busy and 0 < frames == copied:
        with _transaction(db):
            flipped = db.execute("PRAGMA user_version").fetchone()[0] ^ 1
            db.execute(f"PRAGMA user_version = {flipped:d}")


def _retrieve(answer: asyncio.Future[bytes]) -> None:
    # an answer given up on (its writer killed) must not be reported as never retrieved
    if not answer.cancelled():
        answer.exception()


CHECKPOINT = "PRAGMA wal_checkpoint(PASSIVE)"  # never waits for another connection
STUCK = 1.0  # seconds past the timeout after which a writer that did not even take its
# batch (the pipe full) is killed too


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


# -- the writer process ----------------------------------------------------------------------

class _Records(msgspec.Struct, tag="records", array_like=True):
    records: list[SearchRecord]


class _Observed(msgspec.Struct, tag="observed", array_like=True):
    batch: ObservedBatch


class _Events(msgspec.Struct, tag="events", array_like=True):
    events: list[InsightsEvent]


_Work = _Records | _Observed | _Events
_messages = msgspec.msgpack.Encoder()


def write_log(conn: Any, path: str, timeout: float, slice_size: int) -> None:
    """The writer process's work: each message a transaction on the file at ``path``."""
    run_child(_LogWriter(path, timeout, slice_size), conn)


class _InThread:
    """``WriterProcess``'s part done in the calling thread: ``_LogWriter`` called there."""

    pid = None

    def __init__(self, work: _LogWriter) -> None:
        self._work = work

    def exchange(self, message: bytes, deadline: float) -> bytes:
        return self._work(message)

    def kill(self) -> None:
        return None

    def stop(self) -> None:
        self._work.close()


class _LogWriter:
    """Each message (``_Work``) written in one transaction, then checkpointed; the answer
    is empty, or the failure's message (the transaction rolled back)."""

    def __init__(self, path: str, timeout: float, slice_size: int) -> None:
        self.path = path
        self.timeout = timeout
        self.slice_size = slice_size
        self.db: sqlite3.Connection | None = None
        self.pseudonyms: dict[date, dict[str, str]] = {}  # by day, by address
        self.decoder = msgspec.msgpack.Decoder(_Work)

    def __call__(self, message: bytes) -> bytes:
        try:
            work = self.decoder.decode(message)
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")  # waits for another writer (the busy timeout)
            try:
                for _ in self._steps(db, work):
                    pass
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.rollback()
                raise
        except (sqlite3.Error, OSError) as exc:
            self.close()  # opened again by the next message
            return f"The analytics file cannot be used: {exc}".encode()
        with contextlib.suppress(sqlite3.Error):  # the pages stay in the log, committed
            _checkpoint(db)
        return b""

    def _steps(self, db: sqlite3.Connection, work: _Work) -> Iterator[None]:
        if isinstance(work, _Events):
            return _apply(db, work.events)
        records = (work.records if isinstance(work, _Records)
                   else records_of(work.batch, self.pseudonyms))
        return _write_batch(db, sql.slices(records, self.slice_size))

    def _connection(self) -> sqlite3.Connection:
        if self.db is None:
            # a longer wait for the lock than the parent's deadline: the parent gives up
            # first, and says so
            db = sqlite3.connect(self.path, timeout=self.timeout + 2 * STUCK,
                                 isolation_level=None)
            try:
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA temp_store=MEMORY")
                db.execute("PRAGMA wal_autocheckpoint=0")  # checkpointed after each batch
            except BaseException:
                db.close()
                raise
            self.db = db
        return self.db

    def close(self) -> None:
        db, self.db = self.db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
