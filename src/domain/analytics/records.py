"""What one search leaves in the query log.

A request builds an ``ObservedSearch`` (cheap: no hashing, no string work) and hands it to
the recorder; the recorder's background task turns a batch of them into ``SearchRecord``s:
the query normalised, and a user token for every record (the one the client sent, else a
pseudonym of its address for that UTC day). The address itself is never stored.
"""

from __future__ import annotations

import hmac
import secrets
from datetime import UTC, date, datetime
from hashlib import sha256
from typing import Literal

import msgspec

QUERY_ID_LENGTH = 32  # hex characters, as Algolia's queryID
PSEUDONYM_PREFIX = "anon-"  # a pseudonym is never mistaken for a token a client sent


Operator = Literal[":", "<", "<=", "=", "!=", ">", ">="]  # as Algolia's Analytics API says


class Refinement(msgspec.Struct, frozen=True, array_like=True):
    """One refinement a search applied: an attribute (public name), how (``:`` for a facet
    value, a comparison for a numeric bound) and the value, as text."""

    attribute: str
    operator: Operator
    value: str


class ObservedSearch(msgspec.Struct, frozen=True, kw_only=True):
    """One search as its request saw it; ``client`` is the client's address, kept only until
    the record is written (it becomes a pseudonym when ``user_token`` is None)."""

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


class SearchRecord(msgspec.Struct, frozen=True, kw_only=True):
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
    """A fresh query id: 32 lowercase hex characters (128 random bits)."""
    return secrets.token_hex(QUERY_ID_LENGTH // 2)


def pseudonym(address: str, day: date, salt: bytes) -> str:
    """A stable stand-in for a client address during one UTC day: an HMAC-SHA-256 of the
    day and the address under a secret salt. Without the salt it cannot be linked back to
    the address, and the same address gets an unrelated pseudonym the next day."""
    digest = hmac.new(salt, f"{day.isoformat()}|{address}".encode(), sha256).hexdigest()
    return PSEUDONYM_PREFIX + digest[:32]


def to_record(seen: ObservedSearch, salt: bytes) -> SearchRecord:
    """``seen`` as logged; ``salt``: the secret of ``seen``'s UTC day (for the pseudonym)."""
    token = seen.user_token
    if token is None:
        token = pseudonym(seen.client or "", utc_day(seen.at), salt)
    return SearchRecord(
        at=seen.at, handle=seen.handle, query=normalise_query(seen.query),
        nb_hits=seen.nb_hits, page=seen.page, refinements=seen.refinements, tags=seen.tags,
        user_token=token, latency_ms=seen.latency_ms, query_id=seen.query_id,
    )
