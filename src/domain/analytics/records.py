"""What one search leaves in the query log.

A request builds an ``ObservedSearch`` (cheap: no hashing, no string work) and hands it to
the analytics store, which makes it a ``SearchRecord`` when it writes it (``to_record``):
the query normalised, and a user token for every record (the one the client sent, else a
pseudonym of its address for that UTC day). The address itself is never stored.
"""

from __future__ import annotations

import hmac
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime
from hashlib import sha256
from typing import Any, TypeVar

import msgspec

from searchport.domain.analytics.refinements import Refinement
from searchport.domain.response_cache import Summary
from searchport.domain.responses import AutocompleteResponse, SearchResponse

T = TypeVar("T")
PSEUDONYM_PREFIX = "anon-"  # a pseudonym is never mistaken for a token a client sent


class Visitor(msgspec.Struct, frozen=True, kw_only=True):
    """Who made a request, as the request says: the ``X-Algolia-UserToken`` header, the
    client's address, and when the request started (``time.perf_counter()`` seconds)."""

    user_token: str | None = None
    client: str | None = None
    started: float | None = None


class Tracking(msgspec.Struct, frozen=True, kw_only=True):
    """What one search's analytics parameters ask (Algolia's names and defaults):
    ``analytics`` (false: not logged), ``clickAnalytics`` (a ``queryID`` in the answer),
    ``analyticsTags`` and ``userToken``."""

    analytics: bool = True
    click_analytics: bool = False
    tags: tuple[str, ...] = ()
    user_token: str | None = None


DEFAULT_TRACKING = Tracking()  # Algolia's defaults: logged, no queryID


class ObservedSearch(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One search as its request saw it, made cheaply: ``client`` is the client's address,
    kept only until the record is written (it becomes a pseudonym when ``user_token`` is
    None). Plain values only (``gc=False``: thousands may wait for a write, and none is
    part of a reference cycle, so the garbage collector need not look at them)."""

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
    """One search in the query log (``gc=False``: plain values, no cycle through it)."""

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
    """The UTC day of an instant given in seconds since the Unix epoch."""
    return datetime.fromtimestamp(at, UTC).date()


def normalise_query(query: str) -> str:
    """The query as the log counts it: trimmed, case-folded, runs of white space as one
    space (``"  New   YORK "`` and ``"new york"`` are one query)."""
    return " ".join(query.split()).casefold()


def new_query_id() -> str:
    """A fresh query id: 32 lowercase hex characters, the milliseconds since the Unix
    epoch (12) then 80 random bits (20), as a UUIDv7 orders its bits: ids made later sort
    later, so the log's index of them grows at its end instead of everywhere."""
    return f"{time.time_ns() // 1_000_000:012x}{secrets.token_hex(10)}"


def pseudonym(address: str, day: date, salt: bytes) -> str:
    """A stable stand-in for a client address during one UTC day: an HMAC-SHA-256 of the
    day and the address under a secret salt. Without the salt it cannot be linked back to
    the address, and the same address gets an unrelated pseudonym the next day."""
    digest = hmac.new(salt, f"{day.isoformat()}|{address}".encode(), sha256).hexdigest()
    return PSEUDONYM_PREFIX + digest[:32]


class _Hit(msgspec.Struct):
    object_id: str | None = msgspec.field(default=None, name="objectID")


class _Hits(msgspec.Struct):
    hits: list[_Hit] = []


_hits = msgspec.json.Decoder(_Hits)
MAX_HITS = 100  # objectIDs kept per search


def hit_ids_of(answer: bytes) -> tuple[str, ...]:
    """The ``objectID`` of each hit of a search answer (searchport's and Algolia's answers
    both name it so), in order, at most ``MAX_HITS``."""
    try:
        hits = _hits.decode(answer).hits
    except msgspec.DecodeError:
        return ()
    return tuple(h.object_id[:200] for h in hits[:MAX_HITS] if h.object_id is not None)


def summary_of(nb_hits: int, hits: Sequence[Mapping[str, Any]]) -> Summary:
    """What the query log reads of an answer computed here, kept once it is encoded."""
    return Summary(nb_hits, kept_hit_ids(hits))


def shaped_summary(response: SearchResponse | AutocompleteResponse) -> Summary:
    """``summary_of`` a response searchport's own API answers."""
    return summary_of(response.total_hits, response.hits)


def kept_hit_ids(hits: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The ``objectID`` of each hit of an answer still in hand (not decoded again), as
    ``hit_ids_of`` keeps them."""
    ids: list[Any] = [hit.get("objectID") for hit in hits[:MAX_HITS]]
    try:  # texts (join refuses anything else) short enough: kept without another loop
        if len("".join(ids)) <= 200 or max(map(len, ids)) <= 200:
            return tuple(ids)
    except TypeError:  # a number, None...
        pass
    return tuple(str(i)[:200] for i in ids if i is not None)


class _Counts(msgspec.Struct):
    total_hits: int | None = msgspec.field(default=None, name="totalHits")
    nb_hits: int | None = msgspec.field(default=None, name="nbHits")


_counts = msgspec.json.Decoder(_Counts)
USER_TOKEN = re.compile(r"[a-zA-Z0-9_=/+-]{1,129}")  # Algolia's userToken
MAX_TAGS = 10
MAX_QUERY = 512  # characters of a query kept


_TOTALS = (b'"totalHits":', b'"nbHits":')


def nb_hits_of(answer: bytes) -> int:
    """The hit count of a search answer (searchport's ``totalHits``, Algolia's ``nbHits``).

    Both answers put the count right after their hits, and only object keys are unescaped
    quotes followed by a colon: the last such key before the end is the count's, unless a
    facet of that name follows (its value is then an object or list, not a number), when
    the whole answer is decoded. Cheap enough for the request path, so no logged search
    holds its answer's bytes."""
    for key in _TOTALS:
        at = answer.rfind(key)
        if at < 0:
            continue
        start = at + len(key)
        end = start
        while end < len(answer) and 48 <= answer[end] <= 57:  # digits
            end += 1
        if end > start and end < len(answer) and answer[end] in b",}":
            return int(answer[start:end])
        break
    try:
        counts = _counts.decode(answer)
    except msgspec.DecodeError:
        return 0
    return next((n for n in (counts.total_hits, counts.nb_hits) if n is not None), 0)


def to_record(seen: ObservedSearch, salt: bytes) -> SearchRecord:
    """``seen`` as logged; ``salt``: the secret of ``seen``'s UTC day (for the pseudonym).
    A user token that is not one Algolia accepts is replaced by the pseudonym too."""
    token = seen.user_token
    if token is None or not USER_TOKEN.fullmatch(token):
        token = pseudonym(seen.client or "", utc_day(seen.at), salt)
    return SearchRecord(
        at=seen.at, handle=seen.handle, query=normalise_query(seen.query[:MAX_QUERY]),
        nb_hits=seen.nb_hits, page=seen.page, refinements=seen.refinements,
        tags=tuple(t[:100] for t in seen.tags[:MAX_TAGS]) if seen.tags else (),
        user_token=token, latency_ms=seen.latency_ms, query_id=seen.query_id, hits=seen.hits,
    )


def with_id(query_id: str) -> Callable[[T], T]:
    """A search's answer (a struct with a ``query_id`` field, as every search answer has)
    with ``query_id`` set: the answer encoded for one request alone, its ``queryID``
    written by the encoder instead of added to bytes shared with others
    (``with_query_id``)."""
    def own(answer: T) -> T:
        return msgspec.structs.replace(answer, query_id=query_id)  # type: ignore[type-var]
    return own


def with_query_id(body: bytes, query_id: str) -> bytes:
    """A JSON object's bytes with ``"queryID"`` added as its last member."""
    return b"".join((memoryview(body)[:-1],
                     b'"queryID":"' if body.endswith(b"{}") else b',"queryID":"',
                     query_id.encode(), b'"}'))

