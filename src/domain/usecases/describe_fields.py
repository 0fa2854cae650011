"""DescribeFields: the public field names, types and defaults of one handle."""

from __future__ import annotations

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog
from searchport.domain.responses import FieldInfo, IndexFieldsResponse, ReplicaInfo


class DescribeFieldsRequest(msgspec.Struct, frozen=True, kw_only=True):
    handle: str


class DescribeFields:
    """What the configuration says about a handle's fields; no hosts, names or credentials."""

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, request: DescribeFieldsRequest,
                       access: Access = FULL_ACCESS) -> IndexFieldsResponse:
        entry = access.entry(self._catalog, request.handle)
        fields = [
            FieldInfo(
                name=name,
                type=fc.type if fc.type is not None else msgspec.UNSET,
                searchable=fc.weight is not None or fc.searchable,
            )
            for name, fc in entry.config.fields.items()
        ]
        defaults = entry.config.defaults
        semantic = entry.config.semantic
        ratio = 0.0 if semantic is None else semantic.ratio
        replicas = [ReplicaInfo(handle=r.handle, virtual=r.replica is not None and
                                r.replica.virtual)
                    for r in self._catalog.replicas_of(request.handle)
                    if access.allows(r.handle)]
        return IndexFieldsResponse(
            handle=request.handle,
            fields=fields,
            facets=list(defaults.facets),
            per_page=defaults.per_page,
            replica_of=msgspec.UNSET if entry.replica is None else entry.replica.primary,
            replicas=replicas or msgspec.UNSET,
            semantic=ratio if ratio else msgspec.UNSET,
        )
