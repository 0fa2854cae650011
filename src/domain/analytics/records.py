"""What one search leaves in the query log: a request hands an ``ObservedSearch`` (cheap:
no hashing, no string work) to the analytics store, which makes it a ``SearchRecord`` when
it writes it (``to_record``). The client's address itself is never stored."""

from __future__ import annotations

import hmac
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from hashlib import sha256
from typing import Any

import msgspec

from searchport.domain.analytics.refinements import Refinement

PSEUDONYM_PREFIX = "anon-"  # a pseudonym is never mistaken for a token a client sent


class Visitor(msgspec.Struct, frozen=True, kw_only=True):
    """Who made a request: the ``X-Algolia-UserToken`` header, the client's address, and
    when the request started (``time.perf_counter()`` seconds)."""

    user_token: str | None = None
    client: str | None = None
    started: float | None = None


class Tracking(msgspec.Struct, frozen=True, kw_only=True):
    """One search's ``analytics``, ``clickAnalytics``, ``analyticsTags`` and ``userToken``
    (Algolia's defaults)."""

    analytics: bool = True
    click_analytics: bool = False
    tags: tuple[str, ...] = ()
    user_token: str | None = None


DEFAULT_TRACKING = Tracking()  # Algolia's defaults: logged, no queryID


class ObservedSearch(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One search as its request saw it; ``client``, the client's address, becomes a
    pseudonym when ``user_token`` is None. ``gc=False``: thousands may wait for a write,
    and plain values make no reference cycle for the garbage collector to look for."""

    at: float  # seconds since the Unix epoch (UTC)
    handle: str
    query: str  # as typed
    nb_hits: int
    page: int = 0  # 0-based, as Algolia counts
    refinements: tuple[Refinement, ...] = ()
    tags: tuple[str, ...] = ()  # analyticsTags
    user_token: str | None = None
    client: str | None = None
    latency_ms: float = 0.0
    query_id: str | None = None  # set when the search asked for clickAnalytics
    hits: tuple[str, ...] = ()  # the objectIDs of the answer's hits, in order


class SearchRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One search in the query log."""

    at: float  # seconds since the Unix epoch (UTC); its UTC day is ``day``
    handle: str
    query: str  # normalised (``normalise_query``)
    nb_hits: int
    page: int
    refinements: tuple[Refinement, ...]
    tags: tuple[str, ...]
    user_token: str
    latency_ms: float
    query_id: str | None
    hits: tuple[str, ...] = ()  # the objectIDs it returned (at most ``MAX_HITS``)

    @property
    def day(self) -> date:
        return utc_day(self.at)


def utc_day(at: float) -> date:
    return datetime.fromtimestamp(at, UTC).date()


def normalise_query(query: str) -> str:
    """The query as the log counts it: trimmed, case-folded, runs of white space as one
    space (``"  New   YORK "`` and ``"new york"`` are one query)."""
    return " ".join(query.split()).casefold()


def new_query_id() -> str:
    """32 lowercase hex characters: the milliseconds since the Unix epoch, then 80 random
    bits; ids made later sort later, so the log's index of them grows at its end."""
    return f"{time.time_ns() // 1_000_000:012x}{secrets.token_hex(10)}"


def pseudonym(address: str, day: date, salt: bytes) -> str:
    """A stand-in for a client address during one UTC day: an HMAC-SHA-256 of the day and
    the address under the day's secret salt, unrelated to the next day's."""
    digest = hmac.new(salt, f"{day.isoformat()}|{address}".encode(), sha256).hexdigest()
    return PSEUDONYM_PREFIX + digest[:32]


MAX_HITS = 100  # objectIDs kept per search


def kept_hit_ids(hits: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The ``objectID`` of each hit of an answer, in order, at most ``MAX_HITS``, each cut
    at 200 characters."""
    ids: list[Any] = [hit.get("objectID") for hit in hits[:MAX_HITS]]
    try:  # texts (join refuses anything else) short enough: kept without another loop
        if len("".join(ids)) <= 200 or max(map(len, ids)) <= 200:
            return tuple(ids)
    except TypeError:  # a number, None...
        pass
    return tuple(str(i)[:200] for i in ids if i is not None)


USER_TOKEN = re.compile(r"[a-zA-Z0-9_=/+-]{1,129}")  # Algolia's userToken
MAX_TAGS = 10
MAX_QUERY = 512  # characters of a query kept


def to_record(seen: ObservedSearch, salt: bytes) -> SearchRecord:
    """``seen`` as logged, under the salt of its UTC day; a user token Algolia would not
    accept is replaced by the pseudonym too."""
    token = seen.user_token
    if token is None or not USER_TOKEN.fullmatch(token):
        token = pseudonym(seen.client or "", utc_day(seen.at), salt)
    return SearchRecord(
        at=seen.at, handle=seen.handle, query=normalise_query(seen.query[:MAX_QUERY]),
        nb_hits=seen.nb_hits, page=seen.page, refinements=seen.refinements,
        tags=tuple(t[:100] for t in seen.tags[:MAX_TAGS]) if seen.tags else (),
        user_token=token, latency_ms=seen.latency_ms, query_id=seen.query_id, hits=seen.hits,
    )
