"""ListIndexes: the configured handles, their engines and what each can do."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog
from searchport.domain.responses import CapabilitiesBody, IndexInfo, IndexListResponse


class ListIndexes:
    """Every handle in config order; no hosts, index names or credentials."""

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, request: None = None,
                       access: Access = FULL_ACCESS) -> IndexListResponse:
        """Only the handles ``access`` may read; ``rawQuery`` says whether this key may."""
        infos = []
        for handle, entry in self._catalog.items():
            if not access.allows(handle):
                continue
            caps = entry.engine.capabilities
            raw = (caps.raw_query and entry.config.raw_query and access.raw_query
                   and (caps.raw_query_filters or not access.forced(entry)))
            infos.append(
                IndexInfo(
                    handle=handle,
                    engine=entry.engine.name,
                    capabilities=CapabilitiesBody(
                        suggest=caps.suggest and bool(entry.config.defaults.suggest_field),
                        boosts=caps.boosts,
                        histogram=caps.histogram,
                        geo_grid=caps.geo_grid,
                        geo_radius=caps.geo_radius,
                        nested=caps.nested,
                        multi_index=caps.multi_index,
                        raw_query=raw,
                        semantic=entry.config.semantic is not None,
                    ),
                )
            )
        return IndexListResponse(indexes=infos)
