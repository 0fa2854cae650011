"""Search by meaning (docs/semantic.md): a query's vector, and how much it weighs.

A hybrid search ranks by words and by meaning at once: the engine fuses its keyword
ranking and its vector ranking, each weighted by the share of meaning (``semantic``,
0..1). The query's vector comes from the handle's embedder through ``QueryMeanings``:
each text embedded once (the last ``size`` kept), within the handle's
``semantic.timeout``. An embedder that fails or is late never fails the search: it goes
on with words alone, and the answer says it was degraded.
"""

from __future__ import annotations

import asyncio
import logging
from array import array
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import msgspec

from searchport.domain.errors import InvalidRequest, SearchportError
from searchport.domain.query import SearchQuery

if TYPE_CHECKING:
    from searchport.domain.catalog import IndexEntry
    from searchport.domain.config import IndexConfig
    from searchport.domain.results import Hit
    from searchport.ports.embedder import EmbedderPort

Vector = tuple[float, ...]
QUERY_VECTORS_KEPT = 1024  # per handle: about 3 KiB each (384 numbers, kept as doubles)
logger = logging.getLogger("searchport.semantic")


def semantic_share(config: IndexConfig, asked: float | None, text: str,
                   sorted_: bool = False) -> float:
    """The share of meaning of one search: the request's, else the handle's ``ratio``;
    0 for a search without words (nothing to mean) and on a handle without ``semantic``
    (a 400 when the request asked for more). The handle's ``ratio`` is not used by a
    sorted search (``sorted_``) nor on a replica, which orders its hits itself: only a
    ``semantic`` the request sends is (and a sorted search refuses it)."""
    if asked is not None and not 0 <= asked <= 1:
        raise InvalidRequest("semantic must be a number from 0 (words only) to 1 (meaning "
                             "only)")
    if config.semantic is None:
        if asked:
            raise InvalidRequest("semantic search is not configured for this index (its "
                                 "semantic section: docs/semantic.md)")
        return 0.0
    if asked is None and (sorted_ or config.replica_of is not None):
        return 0.0
    share = config.semantic.ratio if asked is None else asked
    return share if text.strip() else 0.0


def neural_search(config: IndexConfig) -> bool:
    """Whether the handle answers the Algolia routes as Algolia's NeuralSearch does (its
    settings' ``mode``): a primary whose ``semantic.ratio`` is above 0. A replica orders
    its hits itself (a sort, or a relevant sort of keyword scores): it searches by words."""
    return (config.semantic is not None and config.semantic.ratio > 0
            and config.replica_of is None)


def neural_share(config: IndexConfig, text: str, *, keyword_mode: bool = False) -> float:
    """The share of meaning of one search on the Algolia routes: the handle's ``ratio`` on
    a NeuralSearch handle (Algolia's requests say no share), 0 when the search asks for
    ``mode: keywordSearch``, on any other handle, and for a search without words."""
    if keyword_mode or not neural_search(config) or config.semantic is None:
        return 0.0
    return config.semantic.ratio if text.strip() else 0.0


def complete_words(text: str) -> str:
    """What autocomplete searches by meaning: ``text`` but its last word while it is being
    typed (a text that ends with a space is complete); "" for one unfinished word."""
    if not text or text[-1].isspace():
        return text.strip()
    head, _, _ = text.strip().rpartition(" ")
    return head.strip()


async def with_meaning(entry: IndexEntry, query: SearchQuery,
                       meaning: str | None = None) -> tuple[SearchQuery, bool]:
    """The query with the vector of ``meaning`` (default: its text) when it asks for
    meaning and searchport embeds it (``entry.meanings``); when the vector cannot be had,
    the query by words alone, and True (degraded): the engine, and the cache around it,
    only ever see a words-only question for a degraded answer, never a hybrid one."""
    if query.semantic <= 0 or entry.meanings is None:
        return query, False
    try:
        vector = await entry.meanings.vector(query.text if meaning is None else meaning)
    except MeaningUnavailable:  # the embedder failed or is late: by words alone, said so
        return msgspec.structs.replace(query, semantic=0.0), True
    return msgspec.structs.replace(query, vector=vector), False


async def stored_record_vector(handle: str, field: str | None, doc_id: str,
                               read: Callable[[str], Awaitable[Hit | None]]) -> Vector | None:
    """A record's vector kept in its own ``field`` (``semantic.field`` of a server engine),
    the record read whole by ``read``; ``None`` when no record has that id."""
    if field is None:
        raise InvalidRequest(f"{handle} searches by meaning nowhere: give it a semantic "
                             "section with its vector field (docs/semantic.md)")
    hit = await read(doc_id)
    if hit is None:
        return None
    return stored_vector(hit.source.get(field), field, doc_id)


def stored_vector(value: object, field: str, doc_id: str) -> Vector:
    """A record's vector as an engine stored it (a list of numbers in ``field``); an
    ``InvalidRequest`` naming the field when the record has none."""
    if isinstance(value, list) and value and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        return tuple(float(x) for x in value)
    raise InvalidRequest(f"The document '{doc_id}' has no vector in '{field}' "
                         "(semantic.field): its meaning cannot be compared")


class MeaningUnavailable(Exception):
    """The query's vector could not be had in time: the search goes on with words alone."""


class QueryMeanings:
    """One handle's query vectors: cached (bounded), each within ``timeout`` seconds, and
    computed once for all the requests that ask for the same text at once."""

    def __init__(self, embedder: EmbedderPort, *, timeout: float, handle: str = "",
                 size: int = QUERY_VECTORS_KEPT) -> None:
        self.embedder = embedder
        self._timeout = timeout
        self._handle = handle
        self._size = size
        # each vector an array of doubles: its numbers exactly, without a float object each
        self._kept: OrderedDict[str, array[float]] = OrderedDict()
        self._flights: dict[str, asyncio.Task[Vector]] = {}

    async def vector(self, text: str) -> Vector:
        """The vector of ``text``; raises ``MeaningUnavailable`` (logged once) when the
        embedder fails or takes longer than the timeout."""
        key = text.strip()
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
            return tuple(found)
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.get_running_loop().create_task(self._embed(key))
            self._flights[key] = flight
            flight.add_done_callback(lambda done: self._landed(key, done))
        # shielded: a request that goes away does not cancel the vector the others await
        return await asyncio.shield(flight)

    def _landed(self, key: str, flight: asyncio.Task[Vector]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.cancelled():
            flight.exception()  # retrieved: an answer nobody awaits any more is no error

    async def _embed(self, key: str) -> Vector:
        try:
            async with asyncio.timeout(self._timeout):
                (found,) = await self.embedder.embed([key])
        except TimeoutError:
            logger.warning("%s: the query's embedding took over %s s; searching by words "
                           "alone", self._handle, self._timeout)
            raise MeaningUnavailable() from None
        except SearchportError as exc:
            logger.warning("%s: the query could not be embedded (%s); searching by words "
                           "alone", self._handle, exc.message)
            raise MeaningUnavailable() from None
        except Exception as exc:  # an adapter's bug must not fail the search either
            logger.error("%s: the embedder failed; searching by words alone", self._handle,
                         exc_info=exc)
            raise MeaningUnavailable() from None
        self._kept[key] = array("d", found)
        if len(self._kept) > self._size:
            self._kept.popitem(last=False)
        return found
