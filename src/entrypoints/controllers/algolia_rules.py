"""Algolia's read calls on query rules, as the stock clients send them: ``search_rules``
(``POST /1/indexes/:handle/rules/search``) and ``get_rule``
(``GET /1/indexes/:handle/rules/:objectID``), answered from the handle's configured rules
(docs/rules.md). Rules are configured, never written: the clients' rule writes stay 404s.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import PathParameter

from searchport.domain.errors import InvalidRequest, NotFound
from searchport.domain.rules.format import Rule
from searchport.domain.rules.listing import RuleHits, RuleSearch
from searchport.entrypoints.controllers import params as p
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import access_of

Handle = Annotated[str, PathParameter(description="An index handle (the Algolia index name).")]
RuleId = Annotated[str, PathParameter(description="The rule's objectID.")]
AnyRequest = Request[Any, Any, Any]
_encode = msgspec.json.encode


def _answers(body: Any, description: str) -> dict[int, ResponseSpec]:
    return {200: ResponseSpec(data_container=body, generate_examples=False,
                              description=description), **p.ALGOLIA_ERRORS}


def _json(body: bytes) -> Response[bytes]:
    return Response(content=body, status_code=200, media_type="application/json")


def _search(raw: bytes) -> RuleSearch:
    if not raw.strip():
        return RuleSearch()
    try:
        return msgspec.json.decode(raw, type=RuleSearch)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"The rule search body is not valid: {exc}") from None
    except msgspec.DecodeError:
        raise InvalidRequest("The request body is not valid JSON") from None


def algolia_rules_controller(uc: UseCases) -> type[Controller]:
    """The rule read calls, calling the use cases of ``uc``."""

    class AlgoliaRulesController(Controller):
        tags = ["algolia"]

        @post("/1/indexes/{handle:str}/rules/search", status_code=200,
              summary="Algolia search rules",
              responses=_answers(RuleHits, "The handle's rules matching the search, in "
                                           "objectID order, a page of them."),
              description="query (each word begins a word of the rule's objectID, "
              "description, patterns or contexts), anchoring, context, enabled, page, "
              "hitsPerPage. A key limited to some records of the handle gets a 403.")
        async def search_rules(self, request: AnyRequest, handle: Handle) -> Response[bytes]:
            found = await uc.search_rules()(handle, _search(await request.body()),
                                            access_of(request.scope))
            return _json(_encode(found))

        @get("/1/indexes/{handle:str}/rules/{object_id:str}", summary="Algolia get rule",
             responses=_answers(Rule, "The rule, as configured."))
        async def get_rule(self, request: AnyRequest, handle: Handle,
                           object_id: RuleId) -> Response[bytes]:
            rule = await uc.get_rule()(handle, object_id, access_of(request.scope))
            if rule is None:
                raise NotFound("ObjectID does not exist")
            return _json(_encode(rule))

    return AlgoliaRulesController
