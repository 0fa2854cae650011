"""Algolia's read calls beyond search, as the stock clients send them: ``get_object``,
``get_objects``, ``browse``, ``get_settings`` and ``list_indices``, with the handle as
index name. They are answered from the same use cases as the native routes (documents,
search, the handle's configuration), in Algolia's shapes; searchport writes nothing, so the
write calls of the clients stay 404s that say so.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import time
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import PathParameter, QueryParameter

from searchport.domain.access import Access
from searchport.domain.errors import (
    DocumentNotFound,
    IndexNotFound,
    InvalidRequest,
    NotFound,
    SearchportError,
)
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.describe_fields import DescribeFieldsRequest
from searchport.domain.usecases.get_document import GetDocument, GetDocumentRequest
from searchport.entrypoints.algolia import params as ap
from searchport.entrypoints.algolia.highlight import DEFAULT_POST, DEFAULT_PRE
from searchport.entrypoints.algolia.requests import AlgoliaQuery
from searchport.entrypoints.controllers import params as p
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import access_of

Handle = Annotated[str, PathParameter(description="An index handle (the Algolia index name).")]
ObjectId = Annotated[str, PathParameter(description="The record's objectID.")]
AnyRequest = Request[Any, Any, Any]

MAX_OBJECTS = 1000  # records in one get_objects call, as Algolia allows
_decode = msgspec.json.decode
_encode = msgspec.json.encode
_STARTED = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
METADATA = ("_index", "_score", "_highlights")


class ObjectRequest(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    index_name: str
    object_id: str = msgspec.field(name="objectID")
    attributes_to_retrieve: list[str] | None = None


class ObjectsBody(msgspec.Struct, forbid_unknown_fields=True):
    requests: list[ObjectRequest]


class FetchedIndex(msgspec.Struct, rename="camel"):
    name: str
    created_at: str
    updated_at: str
    entries: int
    data_size: int
    file_size: int
    last_build_time_s: int = msgspec.field(name="lastBuildTimeS")
    number_of_pending_tasks: int = 0
    pending_task: bool = False


class IndexList(msgspec.Struct, rename="camel"):
    items: list[FetchedIndex]
    nb_pages: int = 1


class Settings(msgspec.Struct, rename="camel"):
    searchable_attributes: list[str]
    attributes_for_faceting: list[str]
    hits_per_page: int
    # the tags the search routes put around matches when a query names none
    highlight_pre_tag: str = DEFAULT_PRE
    highlight_post_tag: str = DEFAULT_POST
    # a primary's replicas (``virtual(name)`` for a virtual one), a replica's primary
    replicas: list[str] | msgspec.UnsetType = msgspec.UNSET
    primary: str | msgspec.UnsetType = msgspec.UNSET
    # NeuralSearch (docs/semantic.md): a primary whose semantic.ratio is above 0
    mode: str = "keywordSearch"


def _answers(body: Any, description: str) -> dict[int, ResponseSpec]:
    return {200: ResponseSpec(data_container=body, generate_examples=False,
                              description=description), **p.ALGOLIA_ERRORS}


def _json(body: bytes) -> Response[bytes]:
    return Response(content=body, status_code=200, media_type="application/json")


def attribute_names(value: Any, where: str) -> list[str] | None:
    """``attributesToRetrieve`` as a list, a JSON array or a comma-separated string."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = _decode(text)
            except msgspec.DecodeError:
                raise InvalidRequest(f"{where}: not a valid JSON array") from None
        else:
            value = [part.strip() for part in text.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidRequest(f"{where}: must be a list of attribute names")
    return value


def as_record(document: dict[str, Any], attributes: list[str] | None) -> dict[str, Any]:
    """A native document as an Algolia record: ``objectID`` and the public fields, without
    searchport's hit metadata; ``attributes`` (``*`` for all, ``-name`` beside it for all
    but that one) selects fields."""
    record = {k: v for k, v in document.items() if k not in METADATA}
    if attributes is None:
        return record
    if "*" in attributes:
        hidden = ap.excluded(attributes)
        return {k: v for k, v in record.items() if k == "objectID" or k not in hidden}
    return {k: v for k, v in record.items() if k == "objectID" or k in attributes}


async def _record(get_document: GetDocument, handle: str, object_id: str,
                  attributes: list[str] | None, access: Access) -> dict[str, Any] | None:
    try:
        answer = await get_document(GetDocumentRequest(handle=handle, id=object_id), access)
    except DocumentNotFound:
        return None
    return as_record(answer, attributes)


def _cursor(request: dict[str, Any], page: int) -> str:
    raw = _encode({"request": request, "page": page})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _from_cursor(cursor: Any) -> tuple[dict[str, Any], int]:
    if not isinstance(cursor, str) or not cursor:
        raise InvalidRequest("cursor: must be the cursor string of a previous browse answer")
    try:
        value = _decode(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        request, page = value["request"], value["page"]
    except (binascii.Error, ValueError, msgspec.DecodeError, KeyError, TypeError):
        raise InvalidRequest("cursor: not a cursor of this server's browse answers") from None
    if not isinstance(request, dict) or isinstance(page, bool) or not isinstance(page, int):
        raise InvalidRequest("cursor: not a cursor of this server's browse answers")
    return request, page


def _body(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = _decode(raw)
    except (msgspec.DecodeError, RecursionError):
        raise InvalidRequest("The request body is not valid JSON") from None
    if not isinstance(value, dict):
        raise InvalidRequest("The request body must be a JSON object")
    return value


def _objects_body(raw: bytes, access: Access) -> ObjectsBody:
    """A get objects body, checked: from 1 to ``MAX_OBJECTS`` requests, on handles the key
    may read (one it may not refuses the whole call)."""
    try:
        body = msgspec.convert(_body(raw), ObjectsBody)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"The get objects body is not valid: {exc}") from None
    if not body.requests:
        raise InvalidRequest("requests: must list at least one object")
    if len(body.requests) > MAX_OBJECTS:
        raise InvalidRequest(f"requests: at most {MAX_OBJECTS} objects in one call")
    for r in body.requests:
        if not access.allows(r.index_name):
            raise IndexNotFound(r.index_name)
    return body


def algolia_records_controller(uc: UseCases) -> type[Controller]:
    """Algolia's read calls beyond search, calling the use cases of ``uc``."""

    class AlgoliaRecordsController(Controller):
        tags = ["algolia"]

        @get("/1/indexes", responses=_answers(IndexList, "The handles, as Algolia indices."),
             summary="Algolia list indices",
             description="Every handle as an index: entries is its number of records; "
             "createdAt and updatedAt are when this process started; sizes are not reported "
             "(0); searchport has no pending tasks.")
        async def list_indices(self, request: AnyRequest) -> Response[bytes]:
            access = access_of(request.scope)
            algolia_search = uc.algolia_search()
            handles = [info.handle for info in (await uc.list_indexes()(None, access)).indexes]

            async def entries(handle: str) -> int:
                query = AlgoliaQuery(handle=handle,  # every record: no rule hides one
                                     request={"hitsPerPage": 0, "enableRules": False})
                (answer,) = await algolia_search((query,), access)
                return int(answer.nb_hits)

            counts = await asyncio.gather(*(entries(h) for h in handles), return_exceptions=True)
            items = [
                FetchedIndex(name=handle, created_at=_STARTED, updated_at=_STARTED,
                             entries=count if isinstance(count, int) else 0, data_size=0,
                             file_size=0, last_build_time_s=0)
                for handle, count in zip(handles, counts, strict=True)
            ]
            for count in counts:  # an engine down still lists the others, but a bug is a bug
                if isinstance(count, BaseException) and not isinstance(count, SearchportError):
                    raise count
            return _json(_encode(IndexList(items=items)))

        @get("/1/indexes/{handle:str}/settings", summary="Algolia get settings",
             responses=_answers(Settings, "What the handle's configuration says, in Algolia's "
                                          "settings names."))
        async def settings(self, request: AnyRequest, handle: Handle) -> Response[bytes]:
            described = await uc.describe_fields()(DescribeFieldsRequest(handle=handle),
                                                   access_of(request.scope))
            facetable = ("keyword", "boolean", "integer", "float", "date")
            facets = list(described.facets) + [
                f.name for f in described.fields
                if f.type in facetable and f.name not in described.facets
            ]
            return _json(_encode(Settings(
                searchable_attributes=[f.name for f in described.fields if f.searchable],
                attributes_for_faceting=facets,
                hits_per_page=described.per_page,
                replicas=msgspec.UNSET if not described.replicas else [
                    f"virtual({r.handle})" if r.virtual else r.handle
                    for r in described.replicas],
                primary=described.replica_of,
                mode="neuralSearch" if described.semantic and described.replica_of is
                msgspec.UNSET else "keywordSearch",
            )))

        @get("/1/indexes/{handle:str}/{object_id:str}", summary="Algolia get object",
             responses=_answers(dict[str, Any], "The record: objectID and its attributes."))
        async def get_object(
            self, request: AnyRequest, handle: Handle, object_id: ObjectId,
            attributes_to_retrieve: Annotated[str | None, QueryParameter(
                name="attributesToRetrieve", required=False,
                description="Attributes to return (comma-separated or a JSON array); objectID "
                            "always comes back.")] = None,
        ) -> Response[bytes]:
            attributes = attribute_names(attributes_to_retrieve, "attributesToRetrieve")
            record = await _record(uc.get_document(), handle, object_id, attributes,
                                   access_of(request.scope))
            if record is None:
                raise NotFound("ObjectID does not exist")
            return _json(_encode(record))

        @post("/1/indexes/*/objects", status_code=200, summary="Algolia get objects",
              responses=_answers(dict[str, Any], "One record per request, in request order; "
                                                 "null for an objectID that does not exist."))
        async def get_objects(self, request: AnyRequest) -> Response[bytes]:
            access, get_document = access_of(request.scope), uc.get_document()
            body = _objects_body(await request.body(), access)
            results = await asyncio.gather(*(
                _record(get_document, r.index_name, r.object_id, r.attributes_to_retrieve, access)
                for r in body.requests
            ))
            return _json(_encode({"results": results}))

        @post("/1/indexes/{handle:str}/browse", status_code=200, summary="Algolia browse",
              responses=_answers(dict[str, Any], "A page of records with a cursor to the next "
                                                 "page, while there is one."))
        async def browse(self, request: AnyRequest, handle: Handle) -> Response[bytes]:
            return await _browse(uc.algolia_search(), handle, _body(await request.body()),
                                 access_of(request.scope))

        @get("/1/indexes/{handle:str}/browse", summary="Algolia browse (GET)",
             responses=_answers(dict[str, Any], "As POST browse, the parameters in the URL."))
        async def browse_get(self, request: AnyRequest, handle: Handle) -> Response[bytes]:
            return await _browse(uc.algolia_search(), handle, dict(request.query_params.items()),
                                 access_of(request.scope))

    return AlgoliaRecordsController


async def _browse(algolia_search: AlgoliaSearch, handle: str,
                  body: dict[str, Any], access: Access) -> Response[bytes]:
    """Browsing is searching page after page: the cursor carries the request and the next
    page, so a client sends only the cursor after the first call (as Algolia's does)."""
    if "cursor" in body:
        search, page = _from_cursor(body["cursor"])
    else:
        search = ap.collect(body, frozenset()).values  # params (string or object) flattened
        page = search.pop("page", 0)
        if isinstance(page, str) and page.isdigit():
            page = int(page)
        if isinstance(page, bool) or not isinstance(page, int) or page < 0:
            raise InvalidRequest("page: must be an integer from 0")
    # browsing exports records: rules (hides, promotes, filters) do not apply, and every
    # record that matches the words comes, not the nearest by meaning (NeuralSearch)
    query = AlgoliaQuery(handle=handle, request={**search, "page": page, "enableRules": False,
                                                 "mode": "keywordSearch"})
    (found,) = await algolia_search((query,), access)
    answer: dict[str, Any] = msgspec.to_builtins(found)  # the answer as sent, to add to
    if page + 1 < int(answer.get("nbPages", 0)):
        answer["cursor"] = _cursor(search, page + 1)
    return _json(_encode(answer))
