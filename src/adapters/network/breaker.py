"""``CircuitBreaker``: stop calling an engine host that keeps failing, try it again later.

    closed ──(``threshold`` failed calls in a row)──> open
    open ──(``cool_down`` seconds)──> half-open: the next call is let through as a probe
    half-open ──(probe succeeds)──> closed
    half-open ──(probe fails)──> open again, for another ``cool_down``

While open (and while a probe is out) every other call is refused at once, so a dead
engine costs a client no waiting and the engine no traffic. One breaker per engine origin,
shared by every handle on that host; it lives on one event loop and needs no lock.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

logger = logging.getLogger("searchport.engines")

StateListener = Callable[[str, bool], None]  # (origin, open?)


class CircuitBreaker:
    def __init__(
        self,
        origin: str,
        *,
        threshold: int,
        cool_down: float,
        clock: Callable[[], float] = time.monotonic,
        on_change: StateListener | None = None,
    ) -> None:
        self.origin = origin
        self._threshold = threshold
        self._cool_down = cool_down
        self._clock = clock
        self._on_change = on_change
        self._failures = 0
        self._opened_at: float | None = None
        self._probing = False
        if on_change is not None:
            on_change(origin, False)

    @property
    def is_open(self) -> bool:
        """Open or half-open: calls are refused, or only a probe is out."""
        return self._opened_at is not None

    def allow(self) -> bool:
        """Whether a call may go to the engine now; in half-open, the caller is the probe."""
        if self._opened_at is None:
            return True
        if self._probing or self._clock() - self._opened_at < self._cool_down:
            return False
        self._probing = True
        return True

    def retry_in(self) -> int:
        """Whole seconds until the next probe may go (at least 1)."""
        if self._opened_at is None:
            return 0
        left = self._opened_at + self._cool_down - self._clock()
        return max(1, math.ceil(left))

    def success(self) -> None:
        self._failures = 0
        self._probing = False
        if self._opened_at is not None:
            self._opened_at = None
            logger.warning("engine at %s answers again: circuit closed", self.origin)
            self._notify(False)

    def failure(self) -> None:
        self._probing = False
        self._failures += 1
        if self._opened_at is not None:  # a failed probe: another cool-down
            self._opened_at = self._clock()
        elif self._failures >= self._threshold:
            self._opened_at = self._clock()
            logger.warning("engine at %s failed %d calls in a row: circuit open, calls "
                           "refused for %g s", self.origin, self._failures, self._cool_down)
            self._notify(True)

    def release(self) -> None:
        """A call ended with no verdict on the engine (cancelled): free the probe slot."""
        self._probing = False

    def _notify(self, is_open: bool) -> None:
        if self._on_change is not None:
            self._on_change(self.origin, is_open)
