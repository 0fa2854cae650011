"""The error bodies of every route, built in one place.

Everywhere the body is ``{"error": "<sentence>"}``, one sentence a user can act on. On the
Algolia routes it also carries Algolia's own fields, ``"message"`` (the same sentence) and
``"status"`` (the HTTP status): the ``algoliasearch`` clients read the message from
``"message"``, so without it InstantSearch would show an empty one.
"""

from __future__ import annotations

import msgspec
from litestar.types import Send

from searchport.domain.responses import ErrorBody

_encoder = msgspec.json.Encoder()


class AlgoliaErrorBody(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """An error body on the Algolia routes: ``ErrorBody`` plus Algolia's ``message`` and
    ``status``."""

    error: str
    message: str  # the same sentence as ``error``
    status: int  # the HTTP status
    details: list[str] | msgspec.UnsetType = msgspec.UNSET
    request_id: str | msgspec.UnsetType = msgspec.UNSET


class InsightsBody(msgspec.Struct, kw_only=True):
    """Every answer of ``POST /1/events``, errors included: Insights' ``{status, message}``."""

    status: int
    message: str


EVENTS_PATH = "/1/events"


def is_algolia_path(path: str) -> bool:
    """The Algolia routes: ``/1/...`` (``/1/indexes``, its children, any other path of
    Algolia's API), Algolia's Analytics API (``/2/...``) and ``/:handle/instantsearch``."""
    return path.startswith(("/1/", "/2/")) or path.endswith("/instantsearch")


def error_body(
    status: int,
    sentence: str,
    path: str,
    *,
    details: list[str] | msgspec.UnsetType = msgspec.UNSET,
    request_id: str | msgspec.UnsetType = msgspec.UNSET,
) -> bytes:
    """The JSON body of an error answer with ``status`` on a request for ``path``."""
    if path == EVENTS_PATH:
        return _encoder.encode(InsightsBody(status=status, message=sentence))
    if is_algolia_path(path):
        return _encoder.encode(AlgoliaErrorBody(
            error=sentence, message=sentence, status=status, details=details,
            request_id=request_id,
        ))
    return _encoder.encode(ErrorBody(error=sentence, details=details, request_id=request_id))


async def send_whole(
    send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes
) -> None:
    """An answer sent by hand (the guards) in one piece: its start, then its
    whole body."""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
