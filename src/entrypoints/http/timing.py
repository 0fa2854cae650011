"""What one request spent, for ``Server-Timing``, the access log and the metrics.

``RequestContext`` puts a fresh ``RequestStats`` in the request's scope and, for the engine
calls the request makes, in a context variable: each engine adapter is wrapped in
``TimedEngine`` (``adapters/observed.py``), whose observer ``EngineCalls`` adds the time of
each call there and reports it to the metrics. Whether a response body came from the cache
travels with it (``Encoded.cache``), which the HTTP layer notes on ``RequestStats``.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from searchport.adapters.observed import EngineObserver


class RequestStats:
    """Mutable per-request figures; shared with work the request starts (single flight)."""

    __slots__ = ("cache", "engine_seconds", "started", "status")

    def __init__(self, started: float = 0.0) -> None:
        self.started = started  # time.perf_counter() when the request arrived
        self.engine_seconds = 0.0
        self.cache: str | None = None  # "hit" or "miss" once the cache was asked
        self.status = 500  # the response's status, once it starts (500 if none ever does)


current_stats: ContextVar[RequestStats | None] = ContextVar("searchport_stats", default=None)
STATS_KEY = "searchport.stats"


def stats_of(scope: Any) -> RequestStats | None:
    """The request's ``RequestStats`` (None outside ``RequestContext``)."""
    stats: RequestStats | None = scope.get(STATS_KEY)
    return stats


class EngineCalls:
    """The observer of every engine call (``TimedEngine``): its time is added to the
    request's ``RequestStats`` (``Server-Timing``, the access log), and the call reported to
    ``metrics`` (per handle and operation)."""

    __slots__ = ("_metrics",)

    def __init__(self, metrics: EngineObserver | None = None) -> None:
        self._metrics = metrics

    def engine_call(self, handle: str, operation: str, seconds: float,
                    error: str | None) -> None:
        stats = current_stats.get()
        if stats is not None:
            stats.engine_seconds += seconds
        if self._metrics is not None:
            self._metrics.engine_call(handle, operation, seconds, error)
