"""``ElasticCompatEngine``: everything Elasticsearch and OpenSearch do alike.

The two products differ only in what ``Flavor`` holds (authentication and the product
check); the query DSL, the answers and the error bodies are the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from searchport.adapters.elastic import parse, translate
from searchport.adapters.elastic.fields import FieldCatalog
from searchport.adapters.elastic.raw_query import check_features, scoped_body
from searchport.adapters.elastic.transport import transport
from searchport.adapters.engine_address import EngineAddress
from searchport.adapters.engine_http import open_link
from searchport.adapters.exchange import Answer
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig
from searchport.domain.errors import InvalidQuery, SearchportError
from searchport.domain.fields import FieldMap
from searchport.domain.query import FacetValuesQuery, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit

T = TypeVar("T")
logger = logging.getLogger("searchport.elastic")

CAPABILITIES = Capabilities(suggest=True, boosts=True, histogram=True, geo_grid=True,
                            geo_radius=True, nested=True, multi_index=True, raw_query=True)
MAPPING_TTL = 300.0  # seconds a fetched mapping steers sort, filters and facets
MAPPING_RETRY = 30.0  # seconds before a failed mapping fetch is tried again
PING_BODY = {"size": 0, "track_total_hits": False, "query": {"match_none": {}}}


@dataclass(frozen=True)
class Flavor:
    """What one product does its own way."""

    name: str
    auth_headers: Callable[[IndexConfig, EngineAddress], dict[str, str]]
    product_warning: Callable[[Answer], str | None]


class ElasticCompatEngine:
    def __init__(self, handle: str, config: IndexConfig, resources: EngineResources,
                 flavor: Flavor) -> None:
        assert config.host and config.index_name  # checked by the config loader
        self._handle = handle
        self._flavor = flavor
        names = [config.index_name] if isinstance(config.index_name, str) else config.index_name
        # "a,b" in one name is a multi-target path too: the comma stays a literal comma
        self._indices = ",".join(quote(n, safe="*-_.+,") for n in names)
        self._single = len(names) == 1 and "*" not in names[0] and "," not in names[0]
        self._names = frozenset(part for name in names for part in name.split(","))
        self._denied: list[str] = list(config.raw_query_deny)
        link = open_link(handle, config, resources)
        self._transport = transport(handle=handle, engine=flavor.name, link=link,
                                    headers=flavor.auth_headers(config, link.address),
                                    on_response=self._check_product)
        self._fields = FieldCatalog(configured_nested=FieldMap(config.fields).nested_paths)
        self._fields_due = -math.inf  # monotonic time of the next mapping fetch
        self._fields_lock = asyncio.Lock()
        self._warm_up: asyncio.Task[FieldCatalog] | None = None
        self._product_checked = False

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
        self._warm_up = asyncio.create_task(self._field_catalog())

    async def ping(self) -> None:
        await self._transport.json("POST", f"/{self._indices}/_search", PING_BODY)

    async def close(self) -> None:
        if self._warm_up is not None and not self._warm_up.done():
            self._warm_up.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._warm_up
        self._warm_up = None

    # ------------------------------------------------------------ search

    async def search(self, query: SearchQuery) -> EngineResult:
        fields = await self._field_catalog()
        body = translate.search_body(query, fields)
        content = await self._query_content(f"/{self._indices}/_search", body)
        return self._read(lambda: parse.decode_search(content, query))

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        fields = await self._field_catalog()
        body = translate.facet_values_body(query, fields)
        answer = await self._query(f"/{self._indices}/_search", body)
        match_here = not fields.is_string(query.field)
        return self._read(lambda: parse.facet_values(answer, query, match_here=match_here))

    async def get_document(self, doc_id: str) -> Hit | None:
        if not self._single:  # several indices (or a pattern): search them by id
            answer = await self._query(f"/{self._indices}/_search", translate.ids_body(doc_id))
            return self._read(lambda: parse.first_hit(answer))
        path = f"/{self._indices}/_doc/{quote(doc_id, safe='')}"
        response = await self._transport.send("GET", path)
        if response.status_code == 404:
            answer = self._transport.decode(response)
            if isinstance(answer, Mapping) and answer.get("found") is False:
                return None
        if not response.is_success:
            raise self._transport.failure("GET", path, response)
        answer = self._transport.decode(response)
        return self._read(lambda: parse.document(answer))

    async def get_mapping(self) -> dict[str, Any]:
        answer = await self._transport.json("GET", f"/{self._indices}/_mapping")
        if not isinstance(answer, dict):
            raise self._transport.unreadable()
        return answer

    async def raw_query(self, body: dict[str, Any]) -> bytes:
        path = f"/{self._indices}/_search"
        check_features(body, self._denied)
        response = await self._transport.send("POST", path, scoped_body(body, self._names))
        if not response.is_success:
            raise self._transport.failure("POST", path, response)
        return response.content

    # ------------------------------------------------------------ internals

    async def _query(self, path: str, body: Any) -> Any:
        return self._transport.decode(await self._answer(path, body))

    async def _query_content(self, path: str, body: Any) -> bytes:
        return (await self._answer(path, body)).content

    async def _answer(self, path: str, body: Any) -> Answer:
        try:
            return await self._transport.success("POST", path, body)
        except InvalidQuery:
            self._fields_due = -math.inf  # the mapping may have changed: fetch it again
            raise

    async def _field_catalog(self) -> FieldCatalog:
        """The mapping-backed field catalog, fetched once and refreshed every few minutes
        and after the engine rejects a query. Without it, names are used as given."""
        if time.monotonic() < self._fields_due:
            return self._fields
        async with self._fields_lock:
            if time.monotonic() < self._fields_due:
                return self._fields
            try:
                mapping = await self.get_mapping()
                self._fields = self._fields.with_mapping(mapping)
                self._fields_due = time.monotonic() + MAPPING_TTL
            except SearchportError as exc:
                logger.warning("%s: the mapping could not be read (%s); field names are used "
                               "as given", self._handle, exc.message)
                self._fields_due = time.monotonic() + MAPPING_RETRY
        return self._fields

    def _read(self, parse_answer: Callable[[], T]) -> T:
        try:
            return parse_answer()
        except (parse.UnreadableAnswer, KeyError, TypeError, ValueError, AttributeError) as exc:
            logger.warning("%s: unexpected answer shape: %s", self._handle, exc)
            raise self._transport.unreadable() from None

    def _check_product(self, response: Answer) -> None:
        if self._product_checked:
            return
        self._product_checked = True
        warning = self._flavor.product_warning(response)
        if warning:
            logger.warning("%s: %s", self._handle, warning)
