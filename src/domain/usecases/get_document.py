"""GetDocument: one document by id."""

from __future__ import annotations

from typing import Any

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog
from searchport.domain.errors import DocumentNotFound
from searchport.domain.record_match import holds
from searchport.domain.shaping import shape_document


class GetDocumentRequest(msgspec.Struct, frozen=True, kw_only=True):
    handle: str
    id: str


class GetDocument:
    """Fetch one document; ``DocumentNotFound`` when the engine has none with that id."""

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, request: GetDocumentRequest,
                       access: Access = FULL_ACCESS) -> dict[str, Any]:
        """A document outside the key's forced filters is not found, as one that does not
        exist (``record_match``: only a certain match is shown)."""
        entry = access.entry(self._catalog, request.handle)
        forced = access.forced(entry)
        hit = await entry.engine.get_document(request.id)
        if hit is None or (forced and not holds(forced, hit.source)):
            raise DocumentNotFound()
        return shape_document(entry.fields, hit)
