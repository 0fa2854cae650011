"""``ResilientExchange``: the ``Exchange`` (``exchange.py``) under every engine client.

It gives each engine call (one HTTP exchange as an adapter sees it) three guarantees, so
no engine adapter has to know about them:

- **One time budget.** The call's timeout (the index's ``timeout``) is the budget of the
  whole call: connecting, waiting, reading the full body, and every retry. Past it the call
  raises ``TimedOut`` (which ``api.py`` turns into a 504). Each attempt is given what is
  left of the budget, and every ``Exchange`` keeps the deadline it is given (the
  ``EngineClient`` with libcurl's per-transfer timeout), so no timer of its own is needed
  here.
- **Bounded retries** with jittered exponential back-off, for failures that cannot have
  been half-answered: the connection refused or dropped before the answer's head, and 502
  or 503 answers. Never after a timeout, never on another status, never past the budget.
  searchport only reads, so every engine request may be repeated.
- **A circuit breaker** per engine origin (``breaker.py``): a call counts as failed
  on any ``ExchangeError`` or a 5xx answer; while the circuit is open calls raise
  ``CircuitOpen`` (a 502) without touching the network.

The answer is read in full inside the budget, so a slow body cannot outlive it, and a
reset in the middle of a body is a ``BadAnswer`` (a 502: not ``RETRYABLE``).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from searchport.adapters.network.breaker import CircuitBreaker
from searchport.adapters.network.exchange import (
    RETRYABLE,
    Answer,
    CircuitOpen,
    Exchange,
    ExchangeError,
)
from searchport.domain.running_loop import running_loop

logger = logging.getLogger("searchport.engines")

RETRY_STATUSES = frozenset({502, 503})
MAX_BACKOFF = 2.0  # seconds, before jitter
# a retry starts only with this much of the budget left after its back-off (seconds, and a
# share of the budget): an attempt with less would rarely finish
MIN_ATTEMPT = 0.05
MIN_ATTEMPT_SHARE = 0.2


@dataclass(frozen=True)
class CallPolicy:
    """How hard to try: ``retries`` after the first attempt, the first back-off in
    seconds (doubled each time, jittered), and the breaker's threshold and cool-down."""

    retries: int = 2
    backoff: float = 0.1
    failures: int = 5
    cool_down: float = 10.0


class ResilientExchange:
    """An ``Exchange`` around another: the budget, the retries and the breaker."""

    def __init__(
        self,
        inner: Exchange,
        *,
        retries: int = 0,
        backoff: float = 0.1,
        breaker: CircuitBreaker | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self._inner = inner
        self._retries = retries
        self._backoff = backoff
        self._breaker = breaker
        self._sleep = sleep
        self._jitter = jitter

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        breaker = self._breaker
        if breaker is not None and not breaker.allow():
            raise CircuitOpen(breaker.retry_in())
        try:
            answer = await self._attempts(method, url, headers, body, timeout)
        except ExchangeError:
            if breaker is not None:
                breaker.failure()
            raise
        except BaseException:
            if breaker is not None:
                breaker.release()
            raise
        if breaker is not None:
            if answer.status_code >= 500:
                breaker.failure()
            else:
                breaker.success()
        return answer

    async def _attempts(self, method: str, url: str, headers: Mapping[str, str],
                        body: bytes | None, budget: float) -> Answer:
        loop = running_loop()
        end = loop.time() + budget
        # the latest time a retry may start: its back-off over, a share of the budget left
        deadline = end - max(MIN_ATTEMPT, budget * MIN_ATTEMPT_SHARE)
        attempt, left = 0, budget
        while True:
            try:
                answer = await self._inner.exchange(method, url, headers, body, left)
            except RETRYABLE as exc:
                delay = self._delay(attempt, deadline, loop.time())
                if delay is None:
                    raise
                logger.info("engine call %s %s failed (%s); retrying in %.2f s",
                            method, _path(url), type(exc).__name__, delay)
            else:
                delay = None
                if answer.status_code in RETRY_STATUSES:
                    delay = self._delay(attempt, deadline, loop.time())
                if delay is None:
                    return answer
                logger.info("engine call %s %s answered %s; retrying in %.2f s",
                            method, _path(url), answer.status_code, delay)
            await self._sleep(delay)
            attempt += 1
            left = end - loop.time()

    def _delay(self, attempt: int, deadline: float, now: float) -> float | None:
        """The back-off before retry ``attempt + 1``, or None when no retry may start
        (none left, or it would start after ``deadline``)."""
        if attempt >= self._retries:
            return None
        step = min(self._backoff * 2.0**attempt, MAX_BACKOFF)
        delay = step / 2 + self._jitter() * step / 2  # "equal jitter": spread, never zero
        if now + delay > deadline:
            return None
        return delay

    async def aclose(self) -> None:
        await self._inner.aclose()


def _path(url: str) -> str:
    """The URL's path only, for log lines (never its query or credentials)."""
    return urlsplit(url).path
