"""GetRule: one rule of a handle by its objectID (Algolia's rule retrieval)."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog
from searchport.domain.rules.format import Rule
from searchport.domain.rules.listing import get_rule
from searchport.domain.usecases.search_rules import readable_rules


class GetRule:
    """One rule of a handle by its objectID (``None``: no such rule)."""

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, handle: str, object_id: str,
                       access: Access = FULL_ACCESS) -> Rule | None:
        return get_rule(readable_rules(self._catalog, handle, access), object_id)
