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
from collections import OrderedDict
from typing import TYPE_CHECKING

from searchport.domain.errors import InvalidRequest, SearchportError

if TYPE_CHECKING:
    from searchport.domain.config import IndexConfig
    from searchport.ports.embedder import EmbedderPort

Vector = tuple[float, ...]
QUERY_VECTORS_KEPT = 1024  # per handle: about 3 KiB each (384 floats)
logger = logging.getLogger("searchport.semantic")


def semantic_share(config: IndexConfig, asked: float | None, text: str) -> float:
    """The share of meaning of one search: the request's, else the handle's ``ratio``;
    0 for a search without words (nothing to mean) and on a handle without ``semantic``
    (a 400 when the request asked for more)."""
    if asked is not None and not 0 <= asked <= 1:
        raise InvalidRequest("semantic must be a number from 0 (words only) to 1 (meaning "
                             "only)")
    if config.semantic is None:
        if asked:
            raise InvalidRequest("semantic search is not configured for this index (its "
                                 "semantic section: docs/semantic.md)")
        return 0.0
    share = config.semantic.ratio if asked is None else asked
    return share if text.strip() else 0.0


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
        self._kept: OrderedDict[str, Vector] = OrderedDict()
        self._flights: dict[str, asyncio.Task[Vector]] = {}

    async def vector(self, text: str) -> Vector:
        """The vector of ``text``; raises ``MeaningUnavailable`` (logged once) when the
        embedder fails or takes longer than the timeout."""
        key = text.strip()
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
            return found
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
        self._kept[key] = found
        if len(self._kept) > self._size:
            self._kept.popitem(last=False)
        return found
