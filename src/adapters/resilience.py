"""``ResilientTransport``: the httpx transport under every engine client.

It gives each engine call (one HTTP exchange as an adapter sees it) three guarantees, so
no engine adapter has to know about them:

- **One time budget.** httpx's timeouts are per phase (a read timeout restarts with every
  chunk), so an engine dripping its answer could hold a request forever. The request's own
  timeout (the index's ``timeout``) becomes the budget of the whole call: connecting,
  waiting, reading the full body, and every retry. Past it the call raises ``CallTimeout``
  (an ``httpx.TimeoutException``, which the adapters turn into a 504).
- **Bounded retries** with jittered exponential back-off, for failures that cannot have
  been half-answered: the connection refused or dropped before the answer's head, and 502
  or 503 answers. Never after a timeout, never on another status, never past the budget.
  searchport only reads, so every engine request may be repeated.
- **A circuit breaker** per engine origin (``circuit_breaker.py``): a call counts as failed
  on a network error, a timeout or a 5xx answer; while the circuit is open calls raise
  ``CircuitOpen``, an ``EngineUnavailable`` (502), without touching the network.

The answer is read in full inside the budget and handed on as bytes, so a reset in the
middle of a body fails here (``httpx.ReadError`` or ``RemoteProtocolError``, a 502) and a
slow body cannot outlive the budget.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

from searchport.adapters.circuit_breaker import CircuitBreaker
from searchport.domain.errors import EngineUnavailable

logger = logging.getLogger("searchport.engines")

RETRY_STATUSES = frozenset({502, 503})
# no byte of an answer can have arrived: safe to ask again
RETRY_ERRORS: tuple[type[Exception], ...] = (httpx.NetworkError, httpx.RemoteProtocolError)
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


class CircuitOpen(EngineUnavailable):
    def __init__(self, retry_in: int) -> None:
        super().__init__(
            "The engine is unavailable after repeated failures; searchport will try it "
            f"again in {retry_in} s"
        )
        self.retry_in = retry_in


class PartialAnswer(httpx.RemoteProtocolError):
    """The answer's head arrived, then its body failed (reset, cut short): never retried,
    since the engine may have done the work."""


class CallTimeout(httpx.TimeoutException):
    """The whole call, retries included, took longer than its budget."""


class ResilientTransport(httpx.AsyncBaseTransport):
    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
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

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        breaker = self._breaker
        if breaker is not None and not breaker.allow():
            raise CircuitOpen(breaker.retry_in())
        budget = _budget(request)
        try:
            try:
                async with asyncio.timeout(budget):
                    response = await self._attempts(request, budget)
            except TimeoutError:
                raise CallTimeout(f"no complete answer within {budget:g} s",
                                  request=request) from None
        except httpx.TransportError:
            if breaker is not None:
                breaker.failure()
            raise
        except BaseException:
            if breaker is not None:
                breaker.release()
            raise
        if breaker is not None:
            if response.status_code >= 500:
                breaker.failure()
            else:
                breaker.success()
        return response

    async def _attempts(self, request: httpx.Request, budget: float | None) -> httpx.Response:
        loop = asyncio.get_running_loop()
        # the latest time a retry may start: its back-off over, a share of the budget left
        deadline = None if budget is None else (
            loop.time() + budget - max(MIN_ATTEMPT, budget * MIN_ATTEMPT_SHARE)
        )
        attempt = 0
        while True:
            try:
                response = await self._inner.handle_async_request(request)
            except PartialAnswer:
                raise
            except RETRY_ERRORS as exc:
                delay = self._delay(attempt, deadline, loop.time())
                if delay is None:
                    raise
                logger.info("engine call %s %s failed (%s); retrying in %.2f s",
                            request.method, request.url.path, type(exc).__name__, delay)
            else:
                delay = None
                if response.status_code in RETRY_STATUSES:
                    delay = self._delay(attempt, deadline, loop.time())
                if delay is None:
                    return await _buffered(response)
                await _discard(response)
                logger.info("engine call %s %s answered %s; retrying in %.2f s",
                            request.method, request.url.path, response.status_code, delay)
            await self._sleep(delay)
            attempt += 1

    def _delay(self, attempt: int, deadline: float | None, now: float) -> float | None:
        """The back-off before retry ``attempt + 1``, or None when no retry may start
        (none left, or it would start after ``deadline``)."""
        if attempt >= self._retries:
            return None
        step = min(self._backoff * 2.0**attempt, MAX_BACKOFF)
        delay = step / 2 + self._jitter() * step / 2  # "equal jitter": spread, never zero
        if deadline is not None and now + delay > deadline:
            return None
        return delay

    async def aclose(self) -> None:
        await self._inner.aclose()


def _budget(request: httpx.Request) -> float | None:
    """The request's timeout as one budget (httpx hands it over per phase)."""
    timeout = request.extensions.get("timeout")
    if not isinstance(timeout, dict):
        return None
    phases = [v for v in timeout.values() if isinstance(v, (int, float))]
    return float(max(phases)) if phases else None


async def _buffered(response: httpx.Response) -> httpx.Response:
    """The same answer with its body read: still encoded, as the client expects it."""
    if response.is_stream_consumed:  # built in memory (a test's transport)
        return response
    try:
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
    finally:
        await response.aclose()
    extensions = {k: v for k, v in response.extensions.items() if k != "network_stream"}
    return httpx.Response(response.status_code, headers=response.headers,
                          stream=httpx.ByteStream(raw), extensions=extensions)


async def _discard(response: httpx.Response) -> None:
    """Read and drop an answer that will be retried (a read body keeps the connection)."""
    if response.is_stream_consumed:
        return
    try:
        async for _ in response.aiter_raw():
            pass
    except httpx.TransportError:
        pass  # the retry is what counts
    finally:
        await response.aclose()
