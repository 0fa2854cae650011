"""The query log in PostgreSQL (psycopg 3, asyncio), shared by every searchport instance
that names the same database: one connection per process, opened on first use and again
after a failure, calls taking turns on it. Every call has the store's timeout
(``statement_timeout`` on the server and a deadline here); a connection that timed out or
failed is dropped, which rolls back what it was doing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import psycopg

from searchport.adapters.analytics.dialect import POSTGRES
from searchport.adapters.analytics.store import (
    DEFAULT_QUEUE,
    QueueOptions,
    SqlAnalyticsStore,
    Work,
)
from searchport.domain.errors import AnalyticsUnavailable

T = TypeVar("T")


class PostgresAnalyticsStore(SqlAnalyticsStore):
    """``AnalyticsStore`` over a PostgreSQL database, given by a ``postgresql://`` URL."""

    dialect = POSTGRES

    def __init__(self, url: str, timeout: float = 5.0,
                 queue: QueueOptions = DEFAULT_QUEUE) -> None:
        super().__init__(timeout, queue)
        self.url = url
        self._db: psycopg.AsyncConnection[Any] | None = None
        self._turn = asyncio.Lock()

    async def _run(self, work: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]]) -> T:
        async with self._turn:
            try:
                async with asyncio.timeout(self.timeout):
                    if self._db is None or self._db.closed:
                        self._db = await psycopg.AsyncConnection.connect(
                            self.url, connect_timeout=max(1, round(self.timeout)),
                            autocommit=True,
                            # neither JIT compilation nor parallel workers: the reads of a
                            # month take a few hundred thousand rows at most, for which
                            # either costs more than it saves
                            options=(f"-c statement_timeout={round(self.timeout * 1000)} "
                                     "-c jit=off -c max_parallel_workers_per_gather=0"))
                        self._schema_checked = False  # checked again by the first write
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

    async def _transaction(self, work: Work[T]) -> T:
        async def run(db: psycopg.AsyncConnection[Any]) -> T:
            async with db.transaction():
                return await work(_Transaction(db))

        return await self._run(run)

    async def _rows(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        async def rows(db: psycopg.AsyncConnection[Any]) -> list[tuple[Any, ...]]:
            return await _Transaction(db).rows(statement, params)

        return await self._run(rows)

    async def _disconnect(self) -> None:
        async with self._turn:
            await self._drop()


class _Transaction:
    """``Transaction`` on the connection (in a transaction its caller began)."""

    def __init__(self, db: psycopg.AsyncConnection[Any]) -> None:
        self._db = db

    async def execute(self, statement: str, params: Sequence[Any] = ()) -> int:
        return (await self._db.execute(POSTGRES.sql(statement), params)).rowcount

    async def executemany(self, statement: str, rows: Iterable[Sequence[Any]]) -> None:
        async with self._db.cursor() as cursor:
            await cursor.executemany(POSTGRES.sql(statement), rows)

    async def rows(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await (await self._db.execute(POSTGRES.sql(statement), params)).fetchall()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
