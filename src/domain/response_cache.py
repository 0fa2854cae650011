"""Response caching shared by every cacheable use case: one key recipe, single flight, and
responses encoded once, so that a hit is served as stored bytes. ("Answer" is reserved for
what an engine sends back; what this module keeps and returns is a response.)

A key is ``<prefix>:v1:<kind>:<handle>:<sha256>``; the digest covers the searchport version,
the kind, the handle, a digest of the handle's whole ``IndexConfig`` (so a config change never
serves old entries, and no config value, secret or not, appears in a key) and the request
after normalisation (the domain query in real field names with defaults applied and clamped;
sort clauses keep their priority order, and JSON keeps ``1``, ``1.0`` and ``true`` apart).
"""

from __future__ import annotations

import asyncio
import hashlib
import zlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import msgspec

from searchport.domain.catalog import IndexEntry
from searchport.domain.config import CacheConfig, IndexConfig

if TYPE_CHECKING:
    from searchport.ports.cache import CachePort

T = TypeVar("T")
Kind = Literal["search", "facets", "autocomplete", "mapping", "document"]

FORMAT = "v1"  # bump when the key recipe or the stored bytes change meaning
_encoder = msgspec.json.Encoder()


class Summary(msgspec.Struct, frozen=True):
    """What a use case keeps of a response it computed, for the query log: its hit count
    and its hits' object IDs, in order (``analytics.records.summary_of``)."""

    nb_hits: int
    hit_ids: tuple[str, ...]


class Encoded(Generic[T]):
    """A response of type ``T`` as JSON bytes: what the cache stores and the HTTP layer sends,
    with what the cache knows of it: ``cache`` is ``"hit"`` (read from the cache), ``"miss"``
    (computed, then stored) or None (not cacheable: no cache, or a TTL of 0).

    Every request that joined one computation gets the same ``Encoded``, so the checksum of
    its bytes (the HTTP layer's ETag) is computed once for all of them. ``summary`` is what
    the caller asked to keep of the response when it was computed here (None when read from
    the cache): the response itself is let go as soon as it is encoded. ``alone``: the
    response was encoded as its one request's own (``ResponseCache.respond``'s ``alone``)."""

    __slots__ = ("_checksum", "alone", "body", "cache", "summary")

    def __init__(self, body: bytes, cache: Literal["hit", "miss"] | None = None,
                 summary: Summary | None = None, alone: bool = False) -> None:
        self.body = body
        self.cache = cache
        self.summary = summary
        self.alone = alone
        self._checksum: str | None = None

    @property
    def checksum(self) -> str:
        """The length and CRC-32 of the bytes, in hex (``5000-1a2b3c4d``)."""
        if self._checksum is None:
            self._checksum = f"{len(self.body):x}-{zlib.crc32(self.body):08x}"
        return self._checksum

    def decode(self, kind: type[T]) -> T:
        return msgspec.json.decode(self.body, type=kind)


class NoCache:
    """A ``CachePort`` that stores nothing: what runs when no cache is configured (the
    ``none`` backend) and what use cases built without a ``ResponseCache`` use."""

    status = "disabled"

    async def probe(self) -> str:
        return self.status

    async def get(self, key: str) -> bytes | None:
        return None

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        return None

    async def clear(self) -> int:
        return 0

    async def close(self) -> None:
        return None


class ResponseCache:
    """Responds to a request from the cache, or computes it once however many ask at a time."""

    def __init__(
        self, *, cache: CachePort, settings: CacheConfig | None = None, version: str = ""
    ) -> None:
        self._cache = cache
        self._settings = settings or CacheConfig()
        self._version = version
        self._flights: dict[str | bytes, asyncio.Future[Encoded[Any]]] = {}
        self._joined: set[str | bytes] = set()  # the flights another request joined
        self._enabled = cache.status != "disabled"
        self._tasks: set[asyncio.Task[None]] = set()
        self._config_digests: dict[int, tuple[IndexConfig, str]] = {}

    @classmethod
    def uncached(cls) -> ResponseCache:
        return cls(cache=NoCache())

    def ttl(self, kind: Kind, entry: IndexEntry) -> float:
        """Seconds a response of this kind is kept for this handle; 0 means never stored."""
        own = entry.config.cache
        if kind == "mapping":
            return own.mapping_ttl if own.mapping_ttl is not None else self._settings.mapping_ttl
        if kind == "document" and not own.documents:
            return 0.0
        return own.search_ttl if own.search_ttl is not None else self._settings.search_ttl

    def key(self, kind: Kind, entry: IndexEntry, params: Any) -> str:
        material = _encoder.encode(
            [FORMAT, self._version, kind, entry.handle, self._config_digest(entry.config), params]
        )
        digest = hashlib.sha256(material).hexdigest()
        return f"{self._settings.prefix}:{FORMAT}:{kind}:{entry.handle}:{digest}"

    def _config_digest(self, config: IndexConfig) -> str:
        known = self._config_digests.get(id(config))
        if known is not None and known[0] is config:
            return known[1]
        digest = hashlib.sha256(msgspec.json.encode(config)).hexdigest()
        self._config_digests[id(config)] = (config, digest)  # holding config keeps its id unique
        return digest

    async def respond(
        self, kind: Kind, entry: IndexEntry, params: Any, compute: Callable[[], Awaitable[T]],
        summary: Callable[[T], Summary] | None = None, alone: Callable[[T], T] | None = None,
    ) -> Encoded[T]:
        """The encoded response to ``params``: a stored one, or ``compute()``'s, computed once
        for all the identical requests that arrive while it runs (``summary``: what to keep
        of it in ``Encoded.summary``). ``alone``: the response as this request's own (its
        ``queryID`` set), encoded instead when nothing else gets these bytes: the request
        computed it, no other joined it, and it is not stored (``Encoded.alone`` says so);
        otherwise the caller adds what is its own to the shared bytes."""
        key: str | bytes
        if self._enabled:
            key = self.key(kind, entry, params)
            ttl = self.ttl(kind, entry)
        else:  # no cache: the request itself is the key of its flight, nothing is hashed
            key = _encoder.encode([kind, entry.handle, params])
            ttl = 0.0
        flight = self._flights.get(key)
        if flight is None and ttl > 0:
            stored = await self._cache.get(key)  # type: ignore[arg-type]
            if stored is not None:
                return Encoded(stored, "hit")
            flight = self._flights.get(key)  # another request may have started meanwhile
        if flight is None:
            flight = asyncio.get_running_loop().create_future()
            flight.add_done_callback(_retrieve)
            self._flights[key] = flight
            self._spawn(self._fly(key, ttl, flight, compute, summary,
                                  alone if ttl <= 0 else None))
        else:
            self._joined.add(key)
        # shielded: a caller that goes away does not cancel the response the others await
        return await asyncio.shield(flight)

    async def _fly(
        self,
        key: str | bytes,
        ttl: float,
        flight: asyncio.Future[Encoded[Any]],
        compute: Callable[[], Awaitable[Any]],
        summary: Callable[[Any], Summary] | None,
        alone: Callable[[Any], Any] | None = None,
    ) -> None:
        try:
            try:
                value = await compute()
                # from here to the result nothing awaits: no request joins in between
                own = alone is not None and key not in self._joined
                if own:
                    value = alone(value)  # type: ignore[misc]
                body = _encoder.encode(value)
                # only what was asked for outlives the encoding: a response held until its
                # bytes are sent keeps all its objects alive across the requests in flight,
                # which slows every allocation
                kept = None if summary is None else summary(value)
                del value
            except asyncio.CancelledError:
                flight.cancel()
                raise
            except Exception as exc:  # every caller of this flight gets the same error
                flight.set_exception(exc)
                return
            flight.set_result(Encoded(body, "miss" if ttl > 0 else None, kept, own))
            if ttl > 0:
                # until the write is done, identical requests still join this flight
                await self._cache.set(key, body, ttl)  # type: ignore[arg-type]
        finally:
            if self._flights.get(key) is flight:
                del self._flights[key]
                self._joined.discard(key)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self, timeout: float = 2.0) -> None:
        """Let the responses and cache writes under way finish (at shutdown)."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)


def _retrieve(flight: asyncio.Future[Encoded[Any]]) -> None:
    # a response nobody awaits any more must not be reported as "never retrieved"
    if not flight.cancelled():
        flight.exception()
