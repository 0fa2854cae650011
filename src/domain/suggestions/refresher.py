"""``SuggestionsRefresher``: a ``querySuggestions`` handle's index rebuilt in the background
every ``refresh`` seconds, never failing a search.

When the build fails (the analytics store or the source engine is down) the index served
before stays, and the build is tried again sooner than ``refresh``. Several processes
serving one index folder share the work: one whose index another process built less than
``refresh`` seconds ago opens that one instead of building its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from searchport.domain.errors import SearchportError

if TYPE_CHECKING:
    from searchport.domain.usecases.build_suggestions import BuildSuggestions
    from searchport.ports.suggestions import SuggestionsIndex

logger = logging.getLogger("searchport.suggestions")
RETRY_AFTER = 30.0  # seconds before a failed build is tried again (at most ``refresh``)


class SuggestionsRefresher:
    def __init__(self, *, handle: str, index: SuggestionsIndex, build: BuildSuggestions,
                 interval: float, clock: Callable[[], float]) -> None:
        self.handle = handle
        self._index = index
        self._build = build
        self._interval = interval
        self._clock = clock  # wall time: the index folder's build time is one
        self._task: asyncio.Task[None] | None = None

    async def refresh(self) -> bool:
        """One round: build and swap in a new index, or open the one another process built
        recently; False when the build failed (the index served stays)."""
        try:
            built = await self._index.built_at()
            if built is not None and self._clock() - built < self._interval * 0.9:
                await self._index.reopen()
                return True
            suggestions = await self._build(self.handle)
            await self._index.replace(suggestions)
        except SearchportError as exc:
            logger.warning("the query suggestions of %s were not rebuilt (%s); the previous "
                           "ones are served", self.handle, exc.message)
            return False
        except Exception:  # a background loop outlives any one failure
            logger.exception("the query suggestions of %s were not rebuilt; the previous "
                             "ones are served", self.handle)
            return False
        logger.info("the query suggestions of %s rebuilt: %d suggestions", self.handle,
                    len(suggestions))
        return True

    async def _run(self) -> None:
        while True:
            done = await self.refresh()
            await asyncio.sleep(self._interval if done else min(self._interval, RETRY_AFTER))

    def start(self) -> None:
        """Rebuild now (in the background), then every ``refresh`` seconds."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"searchport-suggestions-{self.handle}")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
