"""Engine time per request, for the ``Server-Timing`` header.

Each engine adapter is wrapped in ``TimedEngine``; the elapsed time of its calls is added to
a per-request accumulator held in a context variable set by ``RequestContext``.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any

from searchport.domain.query import FacetValuesQuery, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.ports.engine import SearchEnginePort

engine_seconds: ContextVar[list[float] | None] = ContextVar("engine_seconds", default=None)


def _add(started: float) -> None:
    bucket = engine_seconds.get()
    if bucket is not None:
        bucket[0] += time.perf_counter() - started


class TimedEngine:
    """Delegates to an engine and accounts the time spent in it."""

    def __init__(self, inner: SearchEnginePort) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    async def search(self, query: SearchQuery) -> EngineResult:
        started = time.perf_counter()
        try:
            return await self.inner.search(query)
        finally:
            _add(started)

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        started = time.perf_counter()
        try:
            return await self.inner.facet_values(query)
        finally:
            _add(started)

    async def get_document(self, doc_id: str) -> Hit | None:
        started = time.perf_counter()
        try:
            return await self.inner.get_document(doc_id)
        finally:
            _add(started)

    async def get_mapping(self) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return await self.inner.get_mapping()
        finally:
            _add(started)

    async def raw_query(self, body: dict[str, Any]) -> bytes:
        started = time.perf_counter()
        try:
            return await self.inner.raw_query(body)
        finally:
            _add(started)

    async def start(self) -> None:
        await self.inner.start()

    async def ping(self) -> None:
        await self.inner.ping()

    async def close(self) -> None:
        await self.inner.close()
