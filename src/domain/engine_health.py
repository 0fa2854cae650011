"""``EngineHealth``: what ``/health`` says of each handle's engine, without waiting on one.

The view is a table handle -> ``ok`` | ``unreachable`` | ``unknown``. Reading it never
waits on an engine (but for at most a quarter of a second before the first answer, see
``current``): a read that finds the table older than ``interval`` seconds starts one
refresh in the background (every engine's ``ping()`` at once, each bounded by its index's
``timeout``) and answers with what is known now. Engines are pinged only while someone asks,
at most once per interval. A handle whose engine host has an open circuit (the adapters'
breaker, through ``circuit_open``) is ``unreachable`` at once, whatever the last ping said.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from searchport.domain.errors import SearchportError

if TYPE_CHECKING:
    from searchport.domain.catalog import Catalog, IndexEntry

logger = logging.getLogger("searchport.health")

EngineStatus = Literal["ok", "unreachable", "unknown"]
PING_MARGIN = 1.0  # seconds a ping may take past its index's timeout before it counts as lost


class EngineHealth:
    def __init__(
        self,
        *,
        catalog: Catalog,
        interval: float = 5.0,
        circuit_open: Callable[[str], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._catalog = catalog
        self._interval = interval
        self._circuit_open = circuit_open
        self._clock = clock
        self._known: dict[str, EngineStatus] = {}
        self._checked_at: float | None = None
        self._refresh: asyncio.Task[None] | None = None

    def statuses(self) -> dict[str, EngineStatus]:
        """Every handle's status as known now; starts a refresh when the view is stale."""
        now = self._clock()
        stale = self._checked_at is None or now - self._checked_at >= self._interval
        if stale and (self._refresh is None or self._refresh.done()):
            self._checked_at = now
            # a fresh context: the pings belong to no request (no request's engine time)
            self._refresh = asyncio.get_running_loop().create_task(
                self._ping_all(), context=contextvars.Context()
            )
        circuit_open = self._circuit_open
        return {
            handle: "unreachable" if circuit_open is not None and circuit_open(handle)
            else self._known.get(handle, "unknown")
            for handle in self._catalog
        }

    async def current(self, first_wait: float = 0.25) -> dict[str, EngineStatus]:
        """``statuses()``; while a handle has never been checked, the round under way gets up
        to ``first_wait`` seconds to finish first, so that right after a start the engines
        that answer at once (the embedded one, a healthy server) are already ``ok``."""
        known = self.statuses()
        refresh = self._refresh
        if "unknown" in known.values() and refresh is not None and not refresh.done():
            deadline = self._clock() + first_wait
            while not refresh.done() and "unknown" in known.values():
                left = deadline - self._clock()
                if left <= 0:
                    break
                await asyncio.wait({refresh}, timeout=min(left, 0.01))
                known = self.statuses()
        return known

    async def close(self) -> None:
        task, self._refresh = self._refresh, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _ping_all(self) -> None:
        async def ping_one(entry: IndexEntry) -> None:
            self._known[entry.handle] = await self._ping(entry)  # known as soon as answered

        await asyncio.gather(*(ping_one(entry) for entry in self._catalog.values()))
        self._checked_at = self._clock()

    async def _ping(self, entry: IndexEntry) -> EngineStatus:
        try:
            async with asyncio.timeout(entry.config.timeout + PING_MARGIN):
                await entry.engine.ping()
        except (SearchportError, TimeoutError):
            return "unreachable"
        except Exception:  # a bug in an adapter: say so in the log, not "unreachable"
            logger.exception("%s: the engine's ping failed unexpectedly", entry.handle)
            return "unknown"
        return "ok"
