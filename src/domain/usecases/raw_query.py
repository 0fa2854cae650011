"""RawQuery: an engine-native query body passed through to the handle's own index."""

from __future__ import annotations

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog
from searchport.domain.errors import Forbidden, InvalidRequest, PayloadTooLarge, UnsupportedFeature


class RawQueryRequest(msgspec.Struct, frozen=True, kw_only=True):
    handle: str
    body: bytes


class RawQuery:
    """Run the body on the configured index only; the engine's response comes back as is."""

    def __init__(self, *, catalog: Catalog, max_body_bytes: int = 65_536) -> None:
        self._catalog = catalog
        self._max_body_bytes = max_body_bytes

    async def __call__(self, request: RawQueryRequest, access: Access = FULL_ACCESS) -> bytes:
        """Under a key with forced filters, an engine that can wrap the raw query keeps them
        (``Capabilities.raw_query_filters``); any other refuses it with a 403."""
        entry = access.entry(self._catalog, request.handle)
        if not entry.config.raw_query:
            raise Forbidden("The raw query endpoint is turned off for this index")
        if not entry.engine.capabilities.raw_query:
            raise UnsupportedFeature("raw query", entry.engine.name)
        forced = access.raw_filters(entry)
        if forced and not entry.engine.capabilities.raw_query_filters:
            raise Forbidden(f"This API key forces filters on this handle, which a raw query on "
                            f"{entry.engine.name} cannot keep: use the search routes")
        if len(request.body) > self._max_body_bytes:
            raise PayloadTooLarge(
                f"The request body is larger than the limit of {self._max_body_bytes} bytes"
            )
        try:
            body = msgspec.json.decode(request.body)
        except (msgspec.DecodeError, RecursionError):
            raise InvalidRequest("The request body must be a JSON object") from None
        if not isinstance(body, dict):
            raise InvalidRequest("The request body must be a JSON object")
        if forced:
            return await entry.engine.raw_query(body, forced)
        return await entry.engine.raw_query(body)
