"""GetDocument: one document by id."""

from __future__ import annotations

from typing import Any

import msgspec

from searchport.domain.catalog import Catalog
from searchport.domain.errors import DocumentNotFound
from searchport.domain.shaping import shape_document


class GetDocumentRequest(msgspec.Struct, frozen=True, kw_only=True):
    handle: str
    id: str


class GetDocument:
    """Fetch one document; ``DocumentNotFound`` when the engine has none with that id."""

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, request: GetDocumentRequest) -> dict[str, Any]:
        entry = self._catalog.get_entry(request.handle)
        hit = await entry.engine.get_document(request.id)
        if hit is None:
            raise DocumentNotFound()
        return shape_document(entry.fields, hit)
