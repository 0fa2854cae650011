"""Port decorators that report what passes through them, wired by the composition root:
``TimedEngine`` times each call of an engine, ``ObservedCache`` tells whether each cache
lookup found its entry. What is done with a report (the request's ``Server-Timing``, the
metrics) is the observer's."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.ports.cache import CachePort
from searchport.ports.engine import SearchEnginePort

T = TypeVar("T")


class EngineObserver(Protocol):
    def engine_call(
        self, handle: str, operation: str, seconds: float, error: str | None
    ) -> None: ...


class TimedEngine:
    """Delegates to an engine and reports the time of each call (``error``: the name of the
    exception it raised, if any)."""

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
        observer = self.observer
        if observer is None:
            return await call
        started = time.perf_counter()
        error: str | None = None
        try:
            return await call
        except BaseException as exc:
            error = type(exc).__name__
            raise
        finally:
            observer.engine_call(self.handle, operation, time.perf_counter() - started, error)

    async def search(self, query: SearchQuery) -> EngineResult:
        return await self._timed("search", self.inner.search(query))

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        return await self._timed("facet_values", self.inner.facet_values(query))

    async def get_document(self, doc_id: str) -> Hit | None:
        return await self._timed("get_document", self.inner.get_document(doc_id))

    async def record_vector(self, doc_id: str) -> tuple[float, ...] | None:
        return await self._timed("record_vector", self.inner.record_vector(doc_id))

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
    """Delegates to a cache and reports each lookup's outcome (``True``: found)."""

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
