"""FacetSearch: search within one facet field's values."""

from __future__ import annotations

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog
from searchport.domain.params import clamp, decode_json, parse_filters
from searchport.domain.query import FacetValuesQuery
from searchport.domain.responses import FacetSearchResponse
from searchport.domain.shaping import order_facet_values

MAX_VALUES = 100


class FacetSearchRequest(msgspec.Struct, frozen=True, kw_only=True):
    handle: str
    field: str
    q: str = ""
    max_values: int | None = None
    filters: str | None = None


class FacetSearch:
    """Values of one facet field containing ``q``, with counts under ``filters``."""

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, request: FacetSearchRequest,
                       access: Access = FULL_ACCESS) -> FacetSearchResponse:
        entry = access.entry(self._catalog, request.handle)
        limit = clamp(request.max_values, 20, 1, MAX_VALUES)
        filters = (
            parse_filters(decode_json("filters", request.filters), entry.fields)
            if request.filters is not None
            else ()
        )
        query = FacetValuesQuery(
            field=entry.fields.real(request.field),
            text=request.q.strip(),
            limit=limit,
            filters=access.restrict(entry, filters),
        )
        found = await entry.engine.facet_values(query)
        # the response names the field as it was asked for (an alias or the real name)
        return FacetSearchResponse(field=request.field, values=order_facet_values(found, limit))
