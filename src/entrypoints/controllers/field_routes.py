"""``GET /{handle}/fields``: what the configuration says about a handle's fields."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.di import NamedDependency
from litestar.params import PathParameter

from searchport.domain.responses import IndexFieldsResponse
from searchport.domain.scope import Scope
from searchport.domain.usecases.describe_fields import DescribeFields, DescribeFieldsRequest
from searchport.entrypoints.controllers.params import ERRORS, GUARDS


@get(
    "/{handle:str}/fields",
    summary="Public field names, types and defaults",
    description="The handle's configured fields under their public names (aliases), each with "
    "its `type` when the config gives one and whether a plain `q` searches it, plus the "
    "default facets and perPage. The built-in search page uses it to pick facets, sort "
    "fields, the histogram and the map. Fields not listed in the config are not shown.",
    tags=["search"],
    responses={**GUARDS, 404: ERRORS[404]},
)
async def fields_route(
    describe_fields: NamedDependency[DescribeFields],
    handle: Annotated[str, PathParameter(description="An index handle (see GET /indexes).")],
    access: NamedDependency[Scope],
) -> IndexFieldsResponse:
    return await describe_fields(DescribeFieldsRequest(handle=handle), access)
