"""``GET /{handle}/fields``: what the configuration says about a handle's fields."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get
from litestar.handlers import HTTPRouteHandler
from litestar.params import PathParameter

from searchport.domain.responses import IndexFieldsResponse
from searchport.domain.usecases.describe_fields import DescribeFieldsRequest
from searchport.entrypoints.controllers.params import ERRORS, GUARDS
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import access_of


def fields_route(uc: UseCases) -> HTTPRouteHandler:
    @get(
        "/{handle:str}/fields",
        summary="Public field names, types and defaults",
        description="The handle's configured fields under their public names (aliases), each "
        "with its `type` when the config gives one and whether a plain `q` searches it, plus "
        "the default facets and perPage. The built-in search page uses it to pick facets, sort "
        "fields, the histogram and the map. Fields not listed in the config are not shown.",
        tags=["search"],
        responses={**GUARDS, 404: ERRORS[404]},
    )
    async def fields(
        request: Request[Any, Any, Any],
        handle: Annotated[str, PathParameter(description="An index handle (see GET /indexes).")],
    ) -> IndexFieldsResponse:
        return await uc.describe_fields()(DescribeFieldsRequest(handle=handle),
                                          access_of(request.scope))

    return fields
