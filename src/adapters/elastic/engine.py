"""``ElasticCompatEngine``: everything Elasticsearch and OpenSearch do alike.

The two products differ only in what ``Flavor`` holds (authentication and the product
check); the query DSL, the answers and the error bodies are the same.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from searchport.adapters.elastic import hybrid, parse, translate
from searchport.adapters.elastic.api import open_api
from searchport.adapters.elastic.fields import FieldCatalog, read_mapping
from searchport.adapters.elastic.filters import filter_clause
from searchport.adapters.elastic.raw_query import check_features, scoped_body
from searchport.adapters.elastic.raw_scope import within_filters
from searchport.adapters.network.address import EngineAddress
from searchport.adapters.network.api import engine_address, within_timeout
from searchport.adapters.network.exchange import Answer
from searchport.adapters.network.refreshed import Refreshed
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig
from searchport.domain.errors import InvalidQuery, SearchportError
from searchport.domain.fields import FieldMap
from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.ranking import custom_ranking
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.domain.semantic import stored_record_vector

T = TypeVar("T")
logger = logging.getLogger("searchport.elastic")

CAPABILITIES = Capabilities(suggest=True, boosts=True, histogram=True, geo_grid=True,
                            geo_radius=True, geo_area=True, nested=True, multi_index=True,
                            raw_query=True, raw_query_filters=True)
MAPPING_TTL = 300.0  # seconds a fetched mapping steers sort, filters and facets
MAPPING_RETRY = 30.0  # seconds before a failed mapping fetch is tried again
PING_BODY = {"size": 0, "track_total_hits": False, "query": {"match_none": {}}}


@dataclass(frozen=True)
class Flavor:
    """What one product does its own way."""

    name: str
    auth_headers: Callable[[IndexConfig, EngineAddress], dict[str, str]]
    product_warning: Callable[[Answer], str | None]
    vector_search: hybrid.VectorSearch  # its search for the records nearest a vector
    # and nearest a text it embeds itself, with a model deployed in it (embedder: engine)
    text_search: hybrid.TextSearch


class ElasticCompatEngine:
    def __init__(self, handle: str, config: IndexConfig, resources: EngineResources,
                 flavor: Flavor) -> None:
        assert config.host and config.index_name  # checked by the config loader
        self._handle = handle
        self._flavor = flavor
        self._ranking = custom_ranking(config)
        names = [config.index_name] if isinstance(config.index_name, str) else config.index_name
        # "a,b" in one name is a multi-target path too: the comma stays a literal comma
        self._indices = ",".join(quote(n, safe="*-_.+,") for n in names)
        self._single = len(names) == 1 and "*" not in names[0] and "," not in names[0]
        self._names = frozenset(part for name in names for part in name.split(","))
        self._denied: list[str] = list(config.raw_query_deny)
        self._api = open_api(handle=handle, engine=flavor.name, config=config,
                             resources=resources,
                             headers=flavor.auth_headers(config, engine_address(handle, config)),
                             on_response=self._check_product)
        # the mapping-backed field catalog; without a mapping, names are used as given
        self._configured_nested = FieldMap(config.fields).nested_paths
        configured = FieldCatalog(configured_nested=self._configured_nested)
        self._fields = Refreshed(self._read_fields, ttl=MAPPING_TTL, retry=MAPPING_RETRY,
                                 on_failure=self._mapping_failed, default=configured)
        self._product_checked = False
        # the field holding the records' vectors, when the handle searches by meaning
        semantic = config.semantic
        self._vectors = semantic.field if semantic is not None else None
        self._floor = semantic.floor if semantic is not None else 0.0
        # embedder: engine: the engine embeds the query's text with its deployed model
        self._embeds = hybrid.EngineEmbeds(flavor.text_search, semantic.model) \
            if semantic is not None and semantic.embedder == "engine" and semantic.model \
            else None

    @property
    def name(self) -> str:
        return self._flavor.name

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Nothing to open: the pool connects on first use. The mapping is fetched in the
        background, so an engine that is down never delays startup."""
        self._fields.start()

    async def ping(self) -> None:
        await self._api.json("POST", f"/{self._indices}/_search", PING_BODY)

    async def close(self) -> None:
        await self._fields.close()

    # ------------------------------------------------------------ search

    @within_timeout
    async def search(self, query: SearchQuery) -> EngineResult:
        fields = await self._fields.get()
        if query.semantic > 0:
            return await self._hybrid(query, fields)
        body = translate.search_body(query, fields, self._ranking)
        if self._vectors is not None and "_source" not in body:
            body["_source"] = {"excludes": [self._vectors]}  # 384 numbers nobody reads
        content = await self._query_content(f"/{self._indices}/_search", body)
        return self._read(lambda: parse.decode_search(content, query))

    async def _hybrid(self, query: SearchQuery, fields: FieldCatalog) -> EngineResult:
        """Words and meaning fused (``hybrid.py``)."""
        path = f"/{self._indices}/_search"

        async def send(body: dict[str, Any]) -> bytes:
            return await self._query_content(path, body)

        try:
            return await hybrid.run_hybrid(query, fields, send=send,
                                           dialect=self._flavor.vector_search,
                                           field=self._vectors, ranking=self._ranking,
                                           floor=self._floor, embeds=self._embeds)
        except (parse.UnreadableAnswer, KeyError, TypeError, ValueError,
                AttributeError) as exc:
            logger.warning("%s: unexpected answer shape: %s", self._handle, exc)
            raise self._api.unreadable() from None

    @within_timeout
    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        fields = await self._fields.get()
        body = translate.facet_values_body(query, fields)
        answer = await self._query(f"/{self._indices}/_search", body)
        match_here = not fields.is_string(query.field)
        return self._read(lambda: parse.facet_values(answer, query, match_here=match_here))

    @within_timeout
    async def get_document(self, doc_id: str) -> Hit | None:
        if not self._single:  # several indices (or a pattern): search them by id
            answer = await self._query(f"/{self._indices}/_search", translate.ids_body(doc_id))
            return self._read(lambda: parse.first_hit(answer))
        path = f"/{self._indices}/_doc/{quote(doc_id, safe='')}"
        response = await self._api.send("GET", path)
        if response.status_code == 404:
            answer = self._api.decode(response)
            if isinstance(answer, Mapping) and answer.get("found") is False:
                return None
        if not response.is_success:
            raise self._api.failure("GET", path, response)
        answer = self._api.decode(response)
        return self._read(lambda: parse.document(answer))

    async def record_vector(self, doc_id: str) -> tuple[float, ...] | None:
        return await stored_record_vector(self._handle, self._vectors, doc_id,
                                          self.get_document)

    async def get_mapping(self) -> dict[str, Any]:
        answer = await self._api.json("GET", f"/{self._indices}/_mapping")
        if not isinstance(answer, dict):
            raise self._api.unreadable()
        return answer

    @within_timeout
    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        path = f"/{self._indices}/_search"
        check_features(body, self._denied)
        kept = scoped_body(body, self._names)
        if filters:
            catalog = await self._fields.get()
            kept = within_filters(kept, [filter_clause(f, catalog) for f in filters])
        response = await self._api.send("POST", path, kept)
        if not response.is_success:
            raise self._api.failure("POST", path, response)
        return response.content

    # ------------------------------------------------------------ internals

    async def _query(self, path: str, body: Any) -> Any:
        return self._api.decode(await self._answer(path, body))

    async def _query_content(self, path: str, body: Any) -> bytes:
        return (await self._answer(path, body)).content

    async def _answer(self, path: str, body: Any) -> Answer:
        try:
            return await self._api.success("POST", path, body)
        except InvalidQuery:
            self._fields.expire()  # the mapping may have changed: fetch it again
            raise

    async def _read_fields(self) -> FieldCatalog:
        """The field catalog of the mapping, refreshed every few minutes and after the
        engine rejects a query."""
        return FieldCatalog(mapped=read_mapping(await self.get_mapping()),
                            configured_nested=self._configured_nested)

    def _mapping_failed(self, exc: SearchportError) -> None:
        logger.warning("%s: the mapping could not be read (%s); field names are used as "
                       "given", self._handle, exc.message)

    def _read(self, parse_answer: Callable[[], T]) -> T:
        try:
            return parse_answer()
        except (parse.UnreadableAnswer, KeyError, TypeError, ValueError, AttributeError) as exc:
            logger.warning("%s: unexpected answer shape: %s", self._handle, exc)
            raise self._api.unreadable() from None

    def _check_product(self, response: Answer) -> None:
        if self._product_checked:
            return
        self._product_checked = True
        warning = self._flavor.product_warning(response)
        if warning:
            logger.warning("%s: %s", self._handle, warning)
