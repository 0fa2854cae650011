"""What one request spent, for ``Server-Timing``, the access log and the metrics.

``RequestContext`` puts a fresh ``RequestStats`` in the request's scope and, for the engine
calls the request makes, in a context variable: each engine adapter is wrapped in
``TimedEngine`` (``adapters/observed.py``), whose observer ``EngineCalls`` adds the time of
each call there and reports it to the metrics; ``CacheLookups`` notes there whether the
request's engine answers came from the cache (``ObservedCache``).
"""

from __future__ import annotations

from collections.abc import Callable
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


class CacheLookups:
    """The observer of every lookup in searchport's cache (``ObservedCache``): the request's
    ``RequestStats`` say ``miss`` once one of its lookups missed, else ``hit``; each lookup
    is counted in the metrics (``on_lookup``)."""

    __slots__ = ("_on_lookup",)

    def __init__(self, on_lookup: Callable[[bool], None] | None = None) -> None:
        self._on_lookup = on_lookup

    def __call__(self, hit: bool) -> None:
        stats = current_stats.get()
        if stats is not None and stats.cache != "miss":
            stats.cache = "hit" if hit else "miss"
        if self._on_lookup is not None:
            self._on_lookup(hit)
