"""What one request spent, for ``Server-Timing``, the access log and the metrics.

``RequestContext`` puts a fresh ``RequestStats`` in the request's scope and, for the engine
calls the request makes, in a context variable: each engine adapter is wrapped in
``TimedEngine``, which adds the time of its calls there (and reports each call to an
optional observer, for per-handle metrics). Whether a response body came from the cache travels
with it (``Encoded.cache``), which the HTTP layer notes on ``RequestStats``;
``ObservedCache`` counts the cache's lookups for the metrics.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.ports.cache import CachePort
from searchport.ports.engine import SearchEnginePort

T = TypeVar("T")


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


class EngineObserver(Protocol):
    def engine_call(
        self, handle: str, operation: str, seconds: float, error: str | None
    ) -> None: ...


class TimedEngine:
    """Delegates to an engine and accounts the time spent in it."""

    def __init__(
        self, inner: SearchEnginePort, handle: str = "", observer: EngineObserver | None = None
    ) -> None:
        self.inner = inner
        self.handle = handle
        self.observer = observer

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    async def _timed(self, operation: str, call: Awaitable[T]) -> T:
        started = time.perf_counter()
        error: str | None = None
        try:
            return await call
        except BaseException as exc:
            error = type(exc).__name__
            raise
        finally:
            spent = time.perf_counter() - started
            stats = current_stats.get()
            if stats is not None:
                stats.engine_seconds += spent
            if self.observer is not None:
                self.observer.engine_call(self.handle, operation, spent, error)

    async def search(self, query: SearchQuery) -> EngineResult:
        return await self._timed("search", self.inner.search(query))

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        return await self._timed("facet_values", self.inner.facet_values(query))

    async def get_document(self, doc_id: str) -> Hit | None:
        return await self._timed("get_document", self.inner.get_document(doc_id))

    async def get_mapping(self) -> dict[str, Any]:
        return await self._timed("get_mapping", self.inner.get_mapping())

    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        return await self._timed("raw_query", self.inner.raw_query(body, filters))

    async def start(self) -> None:
        await self.inner.start()

    async def ping(self) -> None:
        await self.inner.ping()

    async def close(self) -> None:
        await self.inner.close()


class ObservedCache:
    """Delegates to a cache and reports each lookup's outcome to an observer (the metrics)."""

    def __init__(self, inner: CachePort, on_lookup: Callable[[bool], None] | None = None) -> None:
        self.inner = inner
        self.on_lookup = on_lookup

    @property
    def status(self) -> str:
        return self.inner.status

    async def probe(self) -> str:
        return await self.inner.probe()

    async def get(self, key: str) -> bytes | None:
        value = await self.inner.get(key)
        if self.on_lookup is not None and self.inner.status != "disabled":
            self.on_lookup(value is not None)  # no cache: nothing was looked up
        return value

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        await self.inner.set(key, value, ttl)

    async def clear(self) -> int:
        return await self.inner.clear()

    async def close(self) -> None:
        await self.inner.close()
