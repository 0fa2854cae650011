"""``TypesenseEngine``: one Typesense collection over HTTP (``X-TYPESENSE-API-KEY``).

Searches go through ``multi_search`` (one request for the hits and every disjunctive facet;
filters travel in the body, not the URL). The collection schema steers every parameter; it
is read once, kept for a few minutes and read again after Typesense rejects a query.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import quote

import msgspec

from searchport.adapters.network.api import within_timeout
from searchport.adapters.network.refreshed import Refreshed
from searchport.adapters.resources import EngineResources
from searchport.adapters.typesense import hybrid, parse, translate
from searchport.adapters.typesense.api import ENGINE, open_api, search_failure
from searchport.adapters.typesense.filters import literal
from searchport.adapters.typesense.schema import FLOAT_TYPES, Schema, read_schema
from searchport.domain.config import IndexConfig
from searchport.domain.errors import Forbidden, InvalidQuery, InvalidRequest, SearchportError
from searchport.domain.fusion import meaning_complete, reciprocal_rank_fusion, words_complete
from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.ranking import custom_ranking
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.domain.semantic import stored_record_vector

T = TypeVar("T")
logger = logging.getLogger("searchport.typesense")

CAPABILITIES = Capabilities(suggest=False, boosts=True, histogram=False, geo_grid=False,
                            geo_radius=True, geo_area=True, nested=False, multi_index=False,
                            raw_query=True, max_page=translate.MAX_PER_PAGE)
SCHEMA_TTL = 300.0  # seconds a fetched schema steers the queries
SCHEMA_RETRY = 30.0  # seconds the last schema is used after a failed read
MULTI_SEARCH_LIMIT = 50  # Typesense's default cap on searches per multi_search request
FACET_RETRY_MAX = 10_000  # values read at most to settle a tie across the facet cut
# GET /collections/<c>/documents/<these> are other routes: such ids are looked up by filter.
ROUTE_NAMES = frozenset({"export", "search", "import"})


class TypesenseEngine:
    def __init__(self, handle: str, config: IndexConfig, resources: EngineResources) -> None:
        assert config.host and config.index_name  # checked by the config loader
        self._handle = handle
        names = [config.index_name] if isinstance(config.index_name, str) else config.index_name
        self._collection = names[0]
        self._ranking = custom_ranking(config)
        self._path = f"/collections/{_segment(self._collection)}"
        self._api = open_api(handle=handle, config=config, resources=resources)
        # fields the config types date: Typesense stores them as Unix seconds (int64)
        self._dates = frozenset(spec.field or name for name, spec in config.fields.items()
                                if spec.type == "date")
        semantic = config.semantic
        # the field of the records' vectors, and whether Typesense embeds the query itself
        self._vectors = semantic.field if semantic is not None else None
        self._engine_embeds = semantic is not None and semantic.embedder == "engine"
        self._floor = semantic.floor if semantic is not None else 0.0
        self._schema: Refreshed[Schema] = Refreshed(self._read_schema, ttl=SCHEMA_TTL,
                                                    retry=SCHEMA_RETRY,
                                                    on_failure=self._schema_failed)

    @property
    def name(self) -> str:
        return ENGINE

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Nothing to open; the schema is read in the background, so an engine that is down
        never delays startup."""
        self._schema.start()

    async def ping(self) -> None:
        """The collection's schema, read; on a handle that searches by meaning, its vector
        field checked in it (``searchport check`` says what is wrong)."""
        await self.get_mapping()
        if self._vectors is not None:
            schema = await self._schema.get()
            schema.vector_field(self._vectors, self._engine_embeds)

    async def close(self) -> None:
        await self._schema.close()

    # ------------------------------------------------------------ queries

    @within_timeout
    async def search(self, query: SearchQuery) -> EngineResult:
        schema = await self._schema.get()
        if query.semantic > 0 and self._vectors is not None:
            return await self._hybrid(query, schema)
        return await self._search(query, schema)

    async def _search(self, query: SearchQuery, schema: Schema) -> EngineResult:
        plan = translate.search_plan(query, schema, self._collection, self._ranking,
                                     self._vectors)
        answers = await self._multi_search(plan.searches)
        drop_id = query.fields is not None and "id" not in query.fields
        result = self._read(lambda: EngineResult(
            hits=parse.hits(answers[0], self._collection, skip=plan.skip, limit=query.limit,
                            highlight_fields=plan.highlight_fields, drop_id=drop_id),
            total=parse.total(answers[0]),
        ))
        dates = self._date_fields(schema)
        for name in query.facets:
            position = plan.facet_search[name]
            values = self._read(parse.facet_counts, answers[position], dates).get(name, [])
            result.facets[name] = await self._settle_ties(
                plan.searches[position], name, values, plan.facet_budget,
                query.max_facet_values, dates,
            )
        for name in query.stats:
            single = schema.fields[name].type in FLOAT_TYPES
            found = self._read(parse.field_stats, answers[plan.facet_search[name]], name, single)
            if found is not None:
                result.stats[name] = found
        return result

    async def _hybrid(self, query: SearchQuery, schema: Schema) -> EngineResult:
        """Words and meaning fused (``hybrid.py``)."""
        halves = hybrid.halves(query)
        keyword = None if halves.keyword is None else translate.search_plan(
            halves.keyword, schema, self._collection, self._ranking, self._vectors)
        template = keyword.searches[0] if keyword is not None else translate.search_plan(
            msgspec.structs.replace(query, facets=(), stats=(), limit=0), schema,
            self._collection, (), self._vectors).searches[0]
        assert self._vectors is not None
        meaning = hybrid.meaning_search(query, schema, template, self._vectors,
                                        self._engine_embeds, halves.window)
        answers = await self._multi_search(
            [meaning] if keyword is None else [keyword.searches[0], meaning])
        halves_found = [self._read(hybrid.ranked, answer) for answer in answers]
        by_words = [] if keyword is None else [doc_id for doc_id, _ in halves_found[0]]
        by_meaning = [(doc_id, hybrid.cosine(raw)) for doc_id, raw in halves_found[-1]]
        fused = reciprocal_rank_fusion(by_words, by_meaning, query.semantic, self._floor)
        found: dict[str, Any] = {}  # the keyword half's hit first: it has the highlights
        for half in halves_found:
            for doc_id, raw in half:
                found.setdefault(doc_id, raw)
        marked = keyword.highlight_fields if keyword is not None else frozenset()
        drop_id = query.fields is not None and "id" not in query.fields
        hits = []
        for doc_id, score in fused[query.offset:query.offset + query.limit]:
            hit = self._read(lambda raw=found[doc_id]: parse.hit(
                raw, self._collection, highlight_fields=marked, drop_id=drop_id))
            hit.score = score
            hits.append(hit)
        result = EngineResult(hits=hits, total=len(fused),
                              facets={name: [] for name in query.facets},
                              complete_total=(keyword is None
                                              or words_complete(len(by_words), halves.window))
                              and meaning_complete([c for _, c in by_meaning], halves.window,
                                                   query.semantic, self._floor))
        if fused and (query.facets or query.stats):  # counted over exactly the fused records
            extras = await self._search(msgspec.structs.replace(
                query, text="", offset=0, limit=0, highlight=False, fields=None, sort=(),
                ids=tuple(doc_id for doc_id, _ in fused), semantic=0.0, vector=None), schema)
            result.facets, result.stats = extras.facets, extras.stats
        return result

    @within_timeout
    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        schema = await self._schema.get()
        dates = self._date_fields(schema)
        dated = query.field in dates
        searches = translate.facet_values_searches(query, schema, self._collection,
                                                   dated=dated)
        answers = await self._multi_search(searches)
        if not query.text:  # the best values by count then value, ties settled
            values = self._read(parse.facet_counts, answers[0], dates).get(query.field, [])
            values = await self._settle_ties(searches[0], query.field, values,
                                             translate.FACET_SCAN, query.limit, dates)
        else:
            if dated and len(self._read(parse.facet_counts, answers[0], dates)
                             .get(query.field, [])) > translate.DATE_SCAN:
                raise InvalidRequest(
                    f"Cannot search the values of the date field '{query.field}': it has more "
                    f"than {translate.DATE_SCAN} values under these filters on the {ENGINE} "
                    "engine; narrow them with filters"
                )
            values = self._read(lambda: parse.matching_values(answers, query.field,
                                                              query.text, dates))
        return sorted(values, key=lambda v: (-v.count, v.value))[: query.limit]

    @within_timeout
    async def get_document(self, doc_id: str) -> Hit | None:
        if not doc_id:
            return None
        if doc_id in ROUTE_NAMES:
            return await self._document_by_filter(doc_id)
        path = f"{self._path}/documents/{_segment(doc_id)}"
        response = await self._api.send("GET", path)
        if response.status_code == 404:
            answer = self._api.decode(response)
            message = answer.get("message") if isinstance(answer, Mapping) else None
            if isinstance(message, str) and message.startswith("Could not find a document"):
                return None
        if not response.is_success:
            raise self._api.failure("GET", path, response)
        answer = self._api.decode(response)
        return self._read(parse.document, answer, self._collection)

    async def record_vector(self, doc_id: str) -> tuple[float, ...] | None:
        return await stored_record_vector(self._handle, self._vectors, doc_id,
                                          self.get_document)

    async def get_mapping(self) -> dict[str, Any]:
        answer, schema = await self._fetch_schema()
        self._schema.keep(schema)
        return answer

    async def _fetch_schema(self) -> tuple[dict[str, Any], Schema]:
        answer = await self._api.json("GET", self._path)
        if not isinstance(answer, dict):
            raise self._api.unreadable()
        return answer, self._read(read_schema, answer)

    async def _read_schema(self) -> Schema:
        return (await self._fetch_schema())[1]

    def _schema_failed(self, exc: SearchportError) -> None:
        logger.warning("%s: the collection schema could not be read (%s)", self._handle,
                       exc.message)

    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        if filters:  # never sent: raw_query_filters is off
            raise Forbidden("A raw query cannot keep forced filters on this engine")
        path = f"{self._path}/documents/search"
        response = await self._api.send("GET", path, params=translate.raw_params(body))
        if not response.is_success:
            raise self._api.failure("GET", path, response)
        return response.content

    # ------------------------------------------------------------ internals

    async def _multi_search(self, searches: list[dict[str, Any]]) -> list[parse.Json]:
        chunks = [searches[i: i + MULTI_SEARCH_LIMIT]
                  for i in range(0, len(searches), MULTI_SEARCH_LIMIT)]
        answers = await asyncio.gather(*(
            self._api.json("POST", "/multi_search", body={"searches": chunk})
            for chunk in chunks
        ))
        results: list[parse.Json] = []
        for chunk, answer in zip(chunks, answers, strict=True):
            results.extend(self._read(parse.multi_search_results, answer, len(chunk)))
        for result in results:
            if "error" in result or "code" in result:
                error = search_failure(self._api, result.get("code"), result.get("error"))
                if isinstance(error, InvalidQuery):
                    self._schema.expire()  # the schema may have changed: read it again
                raise error
        return results

    async def _settle_ties(self, search: dict[str, Any], name: str, values: list[FacetValue],
                           budget: int, limit: int, dates: frozenset[str]) -> list[FacetValue]:
        """Read more values of one facet while a tie crosses the cut (Typesense orders by
        count only), so the best ``limit`` by count then value are exact."""
        while not parse.exact_top(values, budget, limit) and budget < FACET_RETRY_MAX:
            budget = min(budget * 4, FACET_RETRY_MAX)
            [answer] = await self._multi_search([translate.facet_retry(search, name, budget)])
            values = self._read(parse.facet_counts, answer, dates).get(name, [])
        return values

    def _date_fields(self, schema: Schema) -> frozenset[str]:
        """The fields the config types date that the collection stores as integers."""
        return frozenset(name for name in self._dates
                         if (info := schema.fields.get(name)) is not None and info.is_integer)

    async def _document_by_filter(self, doc_id: str) -> Hit | None:
        search = {"collection": self._collection, "q": "*", "query_by": "", "per_page": 1,
                  "filter_by": f"id:={literal(doc_id, Schema(), exact=True)}"}
        [answer] = await self._multi_search([search])
        found = self._read(lambda: parse.hits(answer, self._collection, skip=0, limit=1,
                                              highlight_fields=frozenset(), drop_id=False))
        return found[0] if found else None

    def _read(self, parse_answer: Callable[..., T], *args: Any) -> T:
        try:
            return parse_answer(*args)
        except (parse.UnreadableAnswer, KeyError, TypeError, ValueError, AttributeError) as exc:
            logger.warning("%s: unexpected answer shape: %s", self._handle, exc)
            raise self._api.unreadable() from None


def _segment(text: str) -> str:
    """One URL path segment: every reserved character and the dots of ``..`` encoded."""
    return quote(text, safe="").replace(".", "%2E")
