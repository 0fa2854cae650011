"""HTTP caching of GET answers: a strong ``ETag`` over the body bytes, ``304`` on a matching
``If-None-Match``, and ``Cache-Control`` (``private`` whenever a key is configured).

The body goes out as the bytes the use case returned (often straight from the cache): it is
never decoded or encoded again here.
"""

from __future__ import annotations

import hashlib
from typing import Any

from litestar import Response
from litestar.params import HeaderParameter

from searchport.domain.response_cache import Encoded

PUBLIC = "public, max-age=10, stale-while-revalidate=50"
PRIVATE = "private, max-age=10"

IF_NONE_MATCH = HeaderParameter(
    name="If-None-Match",
    required=False,
    description="ETags of answers the client holds; a match is a 304 with no body.",
)


def matching_etag(etag: str, if_none_match: str) -> str | None:
    """The form of ``etag`` the client named (weak comparison, RFC 9110 13.1.2), if any."""
    for candidate in if_none_match.split(","):
        tag = candidate.strip()
        if tag == "*":
            return etag
        if tag.removeprefix("W/") == etag:
            return tag
    return None


def json_answer(answer: Encoded[Any], if_none_match: str | None,
                scope: str = "") -> Response[bytes]:
    """A 200 with the encoded answer and its ETag, or a bodiless 304 when the client has it.
    ``scope``: the fingerprint of the key's restrictions, part of the ETag when set."""
    etag = f'"{answer.digest}"'  # computed once per answer, shared by joined requests
    if scope:
        salted = hashlib.blake2b(f"{answer.digest}/{scope}".encode(), digest_size=16)
        etag = f'"{salted.hexdigest()}"'
    if if_none_match:
        named = matching_etag(etag, if_none_match)
        if named is not None:
            return Response(content=b"", status_code=304, headers={"etag": named})
    return Response(
        content=answer.body, status_code=200, media_type="application/json", headers={"etag": etag}
    )


def cache_control(auth: bool) -> Any:
    """An ``after_request`` hook: ``Cache-Control`` on answers that carry an ETag."""
    value = PRIVATE if auth else PUBLIC

    async def after_request(response: Response[Any]) -> Response[Any]:
        if response.status_code in (200, 304) and "etag" in response.headers:
            response.headers["cache-control"] = value
        return response

    return after_request
