"""GetMapping: the engine's field mapping or schema for one handle."""

from __future__ import annotations

from typing import Any

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog
from searchport.domain.response_cache import Encoded, ResponseCache


class GetMappingRequest(msgspec.Struct, frozen=True, kw_only=True):
    handle: str


class GetMapping:
    """The engine's own description of the index's fields, unmodified."""

    def __init__(self, *, catalog: Catalog, responses: ResponseCache | None = None) -> None:
        self._catalog = catalog
        self._responses = responses or ResponseCache.uncached()

    async def __call__(self, request: GetMappingRequest,
                       access: Access = FULL_ACCESS) -> Encoded[dict[str, Any]]:
        entry = access.entry(self._catalog, request.handle)
        return await self._responses.respond("mapping", entry, [], entry.engine.get_mapping)
