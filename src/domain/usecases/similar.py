"""SimilarDocuments: the records nearest in meaning to one record (docs/semantic.md).

The record's own vector (``record_vector``: the one the engine searches by meaning with)
is the query's vector of a search by meaning alone (``semantic`` 1, no words), with the
request's filters and the key's, the record itself excluded (``excluded_ids``): every
engine then runs the very search ``/search?semantic=1`` runs, and the answer is shaped
as its hits are.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.errors import DocumentNotFound, InvalidRequest
from searchport.domain.query import SearchQuery
from searchport.domain.record_match import holds
from searchport.domain.responses import SearchResponse
from searchport.domain.results import EngineResult
from searchport.domain.search_request import SearchRequest, build_search_query
from searchport.domain.semantic import Vector
from searchport.domain.usecases.search import search_and_shape


class SimilarRequest(msgspec.Struct, frozen=True, kw_only=True):
    """``GET /:handle/documents/:id/similar`` as it arrived: JSON parameters still text."""

    handle: str
    id: str
    filters: str | None = None
    page: int | None = None
    per_page: int | None = None
    fields: str | None = None
    facets: str | None = None


NOT_CONFIGURED = ("Similar documents compare records by meaning: give this index a semantic "
                  "section (semantic.fields on the embedded engine, semantic.field on a "
                  "server engine: docs/semantic.md)")


class SimilarDocuments:
    """The records nearest in meaning to one record, best first, without it."""

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, request: SimilarRequest,
                       access: Access = FULL_ACCESS) -> SearchResponse:
        """``DocumentNotFound`` for an unknown id, and for a record outside the key's
        forced filters (as ``GetDocument``); ``InvalidRequest`` on a handle without a
        ``semantic`` section."""
        entry = access.entry(self._catalog, request.handle)
        query, page, per_page = build_search_query(entry, SearchRequest(
            handle=request.handle, filters=request.filters, page=request.page,
            per_page=request.per_page, fields=request.fields, facets=request.facets))
        query, _ = await self._prepared(entry, request.id, query, access)
        return await search_and_shape(entry, query, page, per_page)

    async def nearest(self, handle: str, doc_id: str,
                      plan: Callable[[IndexEntry], SearchQuery],
                      access: Access = FULL_ACCESS) -> Nearest:
        """The records nearest ``doc_id`` as the engine answers them, for another
        protocol's shape (Algolia Recommend): ``plan`` makes the handle's query (its
        filters, page and fields), each hit's cosine with the record comes with them."""
        entry = access.entry(self._catalog, handle)
        query, vector = await self._prepared(entry, doc_id, plan(entry), access)
        result = await entry.search()(query)
        hit_vectors = await asyncio.gather(*(entry.engine.record_vector(hit.id)
                                             for hit in result.hits))
        return Nearest(entry=entry, result=result, cosines=[
            cosine(vector, other) if other is not None else 0.0 for other in hit_vectors])

    async def _prepared(self, entry: IndexEntry, doc_id: str, query: SearchQuery,
                        access: Access) -> tuple[SearchQuery, Vector]:
        """``query`` as a search by the record's meaning alone, without it, with the key's
        filters too."""
        if entry.config.semantic is None:
            raise InvalidRequest(NOT_CONFIGURED)
        forced = access.forced(entry)
        if forced:
            hit = await entry.engine.get_document(doc_id)
            if hit is None or not holds(forced, hit.source):
                raise DocumentNotFound()
        vector = await entry.engine.record_vector(doc_id)
        if vector is None:
            raise DocumentNotFound()
        return msgspec.structs.replace(
            query, text="", filters=access.restrict(entry, query.filters), semantic=1.0,
            vector=vector, excluded_ids=(*query.excluded_ids, doc_id), highlight=False,
            suggest_field=None, sort=(), geo_sort=None), vector


class Nearest(msgspec.Struct, frozen=True, kw_only=True):
    entry: IndexEntry
    result: EngineResult
    cosines: list[float]  # each hit's cosine with the record, in the hits' order


def cosine(a: Vector, b: Vector) -> float:
    """The cosine of two vectors (0 when either is null or their sizes differ)."""
    if len(a) != len(b):
        return 0.0
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0
