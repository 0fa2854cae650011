"""GetMapping: the engine's field mapping or schema for one handle."""

from __future__ import annotations

from typing import Any

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog


class GetMappingRequest(msgspec.Struct, frozen=True, kw_only=True):
    handle: str


class GetMapping:
    """The engine's own description of the index's fields, unmodified."""

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, request: GetMappingRequest,
                       access: Access = FULL_ACCESS) -> dict[str, Any]:
        return await access.entry(self._catalog, request.handle).engine.get_mapping()
