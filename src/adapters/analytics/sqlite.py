"""The query log in an SQLite file (the standard library's ``sqlite3``), the default store:
two connections to the file in WAL mode (readers never wait for the writer), each used by
a thread of its own so that the event loop never waits for the file. A write begins with
``BEGIN IMMEDIATE`` (which waits while another process writes) and is committed once its
work is done within the store's timeout, rolled back otherwise. Days are kept as
``YYYY-MM-DD`` text, which sorts as the days do.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from searchport.adapters.analytics.dialect import SQLITE
from searchport.adapters.analytics.store import (
    DEFAULT_QUEUE,
    QueueOptions,
    SqlAnalyticsStore,
    Work,
)
from searchport.domain.errors import AnalyticsUnavailable

T = TypeVar("T")


class SqliteAnalyticsStore(SqlAnalyticsStore):
    """``AnalyticsStore`` over one SQLite file (created with its folder when missing)."""

    dialect = SQLITE

    def __init__(self, path: Path, timeout: float = 5.0,
                 queue: QueueOptions = DEFAULT_QUEUE) -> None:
        super().__init__(timeout, queue)
        self.path = path
        self._writes = _Connection(path, timeout, "searchport-analytics-writes")
        self._reads = _Connection(path, timeout, "searchport-analytics-reads")
        self._turn = asyncio.Lock()  # one transaction at a time on the writes' connection

    async def _transaction(self, work: Work[T]) -> T:
        tx = self._writes
        async with self._turn:
            try:
                async with asyncio.timeout(self.timeout):
                    await tx.execute("BEGIN IMMEDIATE")
                    found = await work(tx)
                await tx.execute("COMMIT")  # no deadline: once the work is done, it is kept
            except BaseException as exc:
                # queued after what the thread is doing now: whatever began is undone
                await self._writes.roll_back()
                if _mapped(exc):
                    raise self._unavailable(exc) from None
                raise
            return found

    async def _rows(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        try:
            async with asyncio.timeout(self.timeout):
                return await self._reads.rows(statement, params)
        except BaseException as exc:
            if _mapped(exc):
                raise self._unavailable(exc) from None
            raise

    def _unavailable(self, exc: BaseException) -> AnalyticsUnavailable:
        if isinstance(exc, TimeoutError):
            return AnalyticsUnavailable(
                f"The analytics file did not answer within {self.timeout:g} s")
        return AnalyticsUnavailable(f"The analytics file cannot be used: {exc}")

    async def _disconnect(self) -> None:
        await self._writes.close()
        await self._reads.close()


def _mapped(exc: BaseException) -> bool:
    """Whether ``exc`` says the file cannot be used (others go through unchanged)."""
    return isinstance(exc, TimeoutError | sqlite3.Error | OSError)


class _Connection:
    """One connection to the file, opened on first use, used by a thread of its own; the
    ``Transaction`` of the writes (in the transaction the store began)."""

    def __init__(self, path: Path, timeout: float, name: str) -> None:
        self._path = path
        self._timeout = timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._db: sqlite3.Connection | None = None

    async def call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._run,
                                                                work)

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        if self._db is None:
            self._db = self._connect()
        return work(self._db)

    def _connect(self) -> sqlite3.Connection:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        # waiting for another process's write a little longer than the store's timeout:
        # the deadline of the transaction comes first, and says so
        db = sqlite3.connect(self._path, timeout=self._timeout + 1, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA temp_store=MEMORY")
        except BaseException:
            db.close()
            raise
        return db

    async def execute(self, statement: str, params: Sequence[Any] = ()) -> int:
        return await self.call(lambda db: db.execute(statement, params).rowcount)

    async def executemany(self, statement: str, rows: Iterable[Sequence[Any]]) -> None:
        await self.call(lambda db: db.executemany(statement, rows))

    async def rows(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self.call(lambda db: db.execute(statement, params).fetchall())

    async def roll_back(self) -> None:
        """The transaction open on the connection, if any, rolled back."""
        def roll_back() -> None:
            if self._db is not None and self._db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")

        await asyncio.get_running_loop().run_in_executor(self._executor, roll_back)

    async def close(self) -> None:
        def close() -> None:
            db, self._db = self._db, None
            if db is not None:
                db.close()

        if self._db is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, close)
        self._executor.shutdown(wait=False)

