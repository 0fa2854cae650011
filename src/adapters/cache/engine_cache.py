"""Engine answers kept in searchport's cache: ``CachedEngine`` wraps a handle's engine, so
that what the engine answered is served again, for the handle's TTL, without asking it; and
identical questions asked at once reach the engine once (single flight, also without a
cache). The container wires it around every handle's engine; the use cases never see it.

A key is ``<prefix>:v2:<kind>:<handle>:<sha256>``; the digest covers the searchport version,
the kind, the handle, a digest of the handle's whole ``IndexConfig`` (so a config change never
serves old entries, and no config value, secret or not, appears in a key) and the question
as the engine gets it: the domain query in real field names, defaults applied and clamped,
sort clauses in their priority order (JSON keeps ``1``, ``1.0`` and ``true`` apart). The
answers are stored as MessagePack and decoded into fresh objects on every hit, so no two
requests ever share (and shape) the same answer.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from searchport.domain.config import CacheConfig, CacheKind, IndexConfig
from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.ports.cache import CachePort
from searchport.ports.engine import SearchEnginePort

FORMAT = "v2"  # bump when the key recipe or the stored bytes change meaning
_key_encoder = msgspec.json.Encoder()
_store_encoder = msgspec.msgpack.Encoder()
_DECODERS: dict[str, msgspec.msgpack.Decoder[Any]] = {
    "search": msgspec.msgpack.Decoder(EngineResult),
    "facets": msgspec.msgpack.Decoder(list[FacetValue]),
    "document": msgspec.msgpack.Decoder(Hit | None),
    "mapping": msgspec.msgpack.Decoder(dict[str, Any]),
}


class EngineCache:
    """What the ``CachedEngine`` of every handle shares: the cache and the questions in
    flight."""

    def __init__(self, *, cache: CachePort, settings: CacheConfig | None = None,
                 version: str = "") -> None:
        self.cache = cache
        self.settings = settings or CacheConfig()
        self.version = version
        self.enabled = cache.status != "disabled"
        self._flights: dict[str | bytes, asyncio.Future[bytes | None]] = {}  # stored forms
        self._joined: set[str | bytes] = set()  # the flights another request joined

    def around(self, engine: SearchEnginePort, handle: str, config: IndexConfig
               ) -> CachedEngine:
        """``engine`` (serving ``handle``, configured by ``config``) behind this cache."""
        return CachedEngine(engine, handle, config, self)

    async def answer(self, kind: CacheKind, key: str | bytes, ttl: float,
                     ask: Callable[[], Awaitable[Any]]) -> Any:
        """The stored answer under ``key``, or ``ask()``'s, asked once for all the identical
        questions that arrive while it runs and stored for ``ttl`` seconds (0: never)."""
        while True:
            flight = self._flights.get(key)
            if flight is None and ttl > 0:
                stored = await self.cache.get(key)  # type: ignore[arg-type]
                if stored is not None:
                    return _DECODERS[kind].decode(stored)
                flight = self._flights.get(key)  # another request may have started meanwhile
            if flight is None:
                return await self._lead(key, ttl, ask)
            self._joined.add(key)
            try:
                # shielded: a request that goes away does not cancel the others' flight
                stored = await asyncio.shield(flight)
            except asyncio.CancelledError:
                # the request that asked went away before the answer: ask again, unless
                # this request is the one going away
                if flight.cancelled() and not _cancelling():
                    continue
                raise
            # encoded for this request: it joined before the answer came, or the answer is
            # being stored
            return _DECODERS[kind].decode(stored)  # type: ignore[arg-type]

    async def _lead(self, key: str | bytes, ttl: float,
                    ask: Callable[[], Awaitable[Any]]) -> Any:
        """``ask()`` in the request that asked first, its answer handed to those that
        joined meanwhile. The first request asks the engine itself, not through a task of its
        own: its answer is shaped and sent in the same turn of the loop that decoded it, so
        the answers of the requests in flight do not pile up in memory."""
        flight: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        flight.add_done_callback(_retrieve)
        self._flights[key] = flight
        try:
            try:
                value = await ask()
            except asyncio.CancelledError:
                flight.cancel()
                raise
            except Exception as exc:  # every request of this flight gets the same error
                flight.set_exception(exc)
                raise
            # from here to the result nothing awaits: no request joins in between, and the
            # one that asked keeps the answer itself (nothing encoded for it alone)
            kept = ttl > 0 and value is not None  # a document not found is not kept
            stored = (_store_encoder.encode(value)
                      if kept or key in self._joined else None)
            flight.set_result(stored)
            if kept:
                # until the write is done, identical questions still join this flight; the
                # request that asked waits for it, so that what it was answered is kept
                # before it is answered
                await self.cache.set(key, stored, ttl)  # type: ignore[arg-type]
            return value
        finally:
            self._land(key, flight)

    def _land(self, key: str | bytes, flight: asyncio.Future[bytes | None]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
            self._joined.discard(key)


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _retrieve(flight: asyncio.Future[bytes | None]) -> None:
    # an answer nobody awaits any more must not be reported as "never retrieved"
    if not flight.cancelled():
        flight.exception()


class CachedEngine:
    """A handle's engine behind the cache: its searches, facet values, documents and
    mapping answered from it when it holds them (a raw query never is)."""

    def __init__(self, inner: SearchEnginePort, handle: str, config: IndexConfig,
                 cache: EngineCache) -> None:
        self.inner = inner
        self.handle = handle
        self._cache = cache
        self._config_digest = hashlib.sha256(msgspec.json.encode(config)).hexdigest()
        self._ttls: dict[CacheKind, float] = {
            kind: cache.settings.ttl(kind, config.cache)
            for kind in ("search", "facets", "document", "mapping")}

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    def key(self, kind: CacheKind, question: Any) -> str:
        cache = self._cache
        material = _key_encoder.encode([FORMAT, cache.version, kind, self.handle,
                                        self._config_digest, question])
        digest = hashlib.sha256(material).hexdigest()
        return f"{cache.settings.prefix}:{FORMAT}:{kind}:{self.handle}:{digest}"

    async def _answer(self, kind: CacheKind, question: Any,
                      ask: Callable[[], Awaitable[Any]]) -> Any:
        cache = self._cache
        if cache.enabled:
            return await cache.answer(kind, self.key(kind, question), self._ttls[kind], ask)
        # no cache: the question itself is the key of its flight, nothing is hashed
        key = _key_encoder.encode([kind, self.handle, question])
        return await cache.answer(kind, key, 0.0, ask)

    async def search(self, query: SearchQuery) -> EngineResult:
        result: EngineResult = await self._answer("search", query,
                                                  lambda: self.inner.search(query))
        return result

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        values: list[FacetValue] = await self._answer("facets", query,
                                                      lambda: self.inner.facet_values(query))
        return values

    async def get_document(self, doc_id: str) -> Hit | None:
        hit: Hit | None = await self._answer("document", doc_id,
                                             lambda: self.inner.get_document(doc_id))
        return hit

    async def record_vector(self, doc_id: str) -> tuple[float, ...] | None:
        return await self.inner.record_vector(doc_id)  # read once per request: not kept

    async def get_mapping(self) -> dict[str, Any]:
        mapping: dict[str, Any] = await self._answer("mapping", None, self.inner.get_mapping)
        return mapping

    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        return await self.inner.raw_query(body, filters)

    async def start(self) -> None:
        await self.inner.start()

    async def ping(self) -> None:
        await self.inner.ping()

    async def close(self) -> None:
        await self.inner.close()
