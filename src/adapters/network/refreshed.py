"""``Refreshed``: what a server engine adapter reads from its engine and keeps a while
(Elasticsearch's mapping, Typesense's collection schema, Meilisearch's primary key).

Read in the background from startup (``start``), so an engine that is down never delays
startup (``close`` waits for that read); one read at a time however many requests wait for
it; kept ``ttl`` seconds, or until ``expire`` (after the engine rejected a query built
from it). A read that fails keeps what was kept (or the ``default``) and is tried again
after ``retry`` seconds; with nothing to fall back on, the failure reaches the caller. A
read that gives ``None`` has nothing to keep yet (an empty Meilisearch index has no primary
key): tried again after ``retry``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from searchport.domain.errors import SearchportError

T = TypeVar("T")


class Refreshed(Generic[T]):
    def __init__(
        self,
        read: Callable[[], Awaitable[T | None]],
        *,
        ttl: float,
        retry: float,
        on_failure: Callable[[SearchportError], None],
        default: T | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self._ttl = ttl
        self._retry = retry
        self._on_failure = on_failure
        self._clock = clock
        self._kept: T | None = None
        self._default = default
        self._due = -math.inf
        self._lock = asyncio.Lock()
        self._warm_up: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._warm_up = asyncio.create_task(self._background())

    async def close(self) -> None:
        """Waits for a warm-up read still in flight (its deadline bounds it) rather than
        cancelling it: an exchange cancelled halfway leaves the engine client a request to
        wait for when it closes, for as long as the whole deadline."""
        warm_up, self._warm_up = self._warm_up, None
        if warm_up is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await warm_up

    def keep(self, value: T) -> None:
        """A value read by other means (``get_mapping``), kept for ``ttl``."""
        self._kept, self._due = value, self._clock() + self._ttl

    def expire(self) -> None:
        self._due = -math.inf

    async def get(self) -> T:
        if self._clock() < self._due:
            return self._current()
        async with self._lock:
            if self._clock() < self._due:
                return self._current()
            try:
                value = await self._read()
            except SearchportError as exc:
                if self._kept is None and self._default is None:
                    raise
                self._on_failure(exc)
                self._due = self._clock() + self._retry
            else:
                if value is None:
                    self._due = self._clock() + self._retry
                else:
                    self.keep(value)
            return self._current()

    def _current(self) -> T:
        value = self._kept if self._kept is not None else self._default
        assert value is not None
        return value

    async def _background(self) -> None:
        try:
            await self.get()
        except SearchportError as exc:  # nothing to fall back on: the next request asks again
            self._on_failure(exc)
