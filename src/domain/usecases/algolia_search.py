"""AlgoliaSearch: Algolia's search calls (one query, or several on any handles)."""

from __future__ import annotations

import asyncio
import time

import msgspec

from searchport.domain.algolia import params as ap
from searchport.domain.algolia.query import Plan, plan_search, shape_result
from searchport.domain.algolia.requests import OUTER_KEYS, AlgoliaQueries, AlgoliaQuery
from searchport.domain.algolia.responses import AlgoliaResult, MultiResponse
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.response_cache import Encoded, ResponseCache
from searchport.domain.usecases.algolia_facet_search import AlgoliaFacetSearch

_encoder = msgspec.json.Encoder()


class AlgoliaSearch:
    """Answer every query in request order; one failing query fails the call with its
    status (the first failure in request order), as Algolia does."""

    def __init__(self, *, catalog: Catalog, facet_search: AlgoliaFacetSearch,
                 responses: ResponseCache | None = None) -> None:
        self._catalog = catalog
        self._facet_search = facet_search
        self._responses = responses or ResponseCache.uncached()

    async def __call__(
        self, request: AlgoliaQueries
    ) -> Encoded[MultiResponse] | Encoded[AlgoliaResult]:
        answers = await asyncio.gather(*(self._one(q) for q in request.queries),
                                       return_exceptions=True)
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
        bodies = [a for a in answers if isinstance(a, bytes)]
        if request.single:
            return Encoded(bodies[0])
        return Encoded(b'{"results":[' + b",".join(bodies) + b"]}")

    async def _one(self, query: AlgoliaQuery) -> bytes:
        if query.facet is not None:
            return _encoder.encode(await self._facet_search(query))
        entry = self._catalog.get_entry(query.handle)
        raw = ap.collect(query.request, OUTER_KEYS)
        plan = plan_search(entry, raw.values)
        answer = await self._responses.answer(
            "search", entry, ["algolia", plan, raw.encoded],
            lambda: self._search(entry, plan, raw),
        )
        return answer.body

    async def _search(self, entry: IndexEntry, plan: Plan, raw: ap.RawParams) -> AlgoliaResult:
        started = time.perf_counter()
        result = await entry.engine.search(plan.query)
        took = round((time.perf_counter() - started) * 1000)
        return shape_result(entry, plan, result, raw, took)
