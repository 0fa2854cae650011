"""``MeilisearchEngine``: one handle over one Meilisearch index, over HTTP.

Needs Meilisearch 1.9 or later (``matchingStrategy: frequency``). Each hit's ``objectID`` is
the index's primary key, read once from ``GET /indexes/{uid}``; when that is refused (a
search-only API key) or the index has none yet, the handle's ``idField`` (default ``id``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

from searchport.adapters.meilisearch import parse, translate
from searchport.adapters.meilisearch.api import ENGINE, open_api
from searchport.adapters.network.api import within_timeout
from searchport.adapters.network.refreshed import Refreshed
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig
from searchport.domain.errors import Forbidden, InvalidRequest, SearchportError
from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery, SortClause
from searchport.domain.ranking import custom_ranking
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.domain.semantic import stored_vector

T = TypeVar("T")
logger = logging.getLogger("searchport.meilisearch")

CAPABILITIES = Capabilities(suggest=False, boosts=False, histogram=False, geo_grid=False,
                            geo_radius=True, geo_area=True, nested=False, multi_index=False,
                            raw_query=True)
KEY_RETRY = 30.0  # seconds before a failed primary-key lookup is tried again
# Meilisearch document ids: ASCII letters, digits, '-' and '_', at most 511 bytes
DOCUMENT_ID = re.compile(r"[A-Za-z0-9_-]{1,511}")
MISSING_DOCUMENT = frozenset({"document_not_found", "invalid_document_id"})
FACET_SEARCH_OFF = "facet_search_disabled"  # the index's facetSearch setting is false


class MeilisearchEngine:
    def __init__(self, handle: str, config: IndexConfig, resources: EngineResources) -> None:
        assert config.host and config.index_name  # checked by the config loader
        self._handle = handle
        self._uid = config.index_name if isinstance(config.index_name, str) \
            else config.index_name[0]
        self._api = open_api(handle=handle, config=config, resources=resources)
        self._fallback_key = config.id_field
        self._ranking = custom_ranking(config)
        self._dates = frozenset(spec.field or name for name, spec in config.fields.items()
                                if spec.type == "date")
        semantic = config.semantic
        self._meaning = None if semantic is None or not semantic.field else translate.Meaning(
            embedder=semantic.field, sends_vector=semantic.embedder != "engine")
        self._key: Refreshed[str] = Refreshed(
            self._read_key, ttl=math.inf, retry=KEY_RETRY, on_failure=self._key_failed,
            default=self._fallback_key)

    @property
    def name(self) -> str:
        return ENGINE

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Nothing to open: the pool connects on first use. The primary key is read in the
        background, so an engine that is down never delays startup."""
        self._key.start()

    async def ping(self) -> None:
        """A search for nothing: it needs only the ``search`` action, like the handle."""
        await self._api.json("POST", self._path("/search"), {"limit": 0})

    async def close(self) -> None:
        await self._key.close()

    # ------------------------------------------------------------ endpoints

    @within_timeout
    async def search(self, query: SearchQuery) -> EngineResult:
        key = await self._key.get()
        plan = translate.search_plan(query, self._uid, key, self._dates, self._ranking,
                                     self._meaning)
        try:
            answer = await self._api.json("POST", plan.path, plan.body)
        except InvalidRequest as exc:
            if self._ranking and not query.sort and "sort" in str(exc).lower():
                raise InvalidRequest(ranking_refused(self._ranking, str(exc))) from None
            raise
        return self._read(lambda: parse.search_result(answer, plan, query, uid=self._uid,
                                                      primary_key=key, dates=self._dates))

    @within_timeout
    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        """Without ``text``: the field's ``facetDistribution``. With it: the distribution
        and Meilisearch's facet search (prefix, strings only, beyond ``maxValuesPerFacet``)
        together, keeping the values that contain ``text`` ignoring case. On a date field
        (Unix seconds) the text is matched against the ISO-8601 values of the distribution
        alone: the facet search would match the digits of the seconds."""
        searched = self._api.json("POST", self._path("/search"),
                                        translate.distribution_body(query, self._dates))
        if not query.text or query.field in self._dates:
            answer = await searched
            values = self._read(lambda: parse.distribution(answer, query.field, self._dates))
            needle = query.text.casefold()
            return [v for v in values if needle in v.value.casefold()]
        answer, found = await asyncio.gather(searched, self._facet_search(query))
        values = self._read(lambda: parse.distribution(answer, query.field)
                            + (parse.facet_hits(found) if found is not None else []))
        needle = query.text.casefold()
        unique = {v.value: v for v in reversed(values)}  # the distribution's count wins
        return [v for v in unique.values() if needle in v.value.casefold()]

    @within_timeout
    async def get_document(self, doc_id: str) -> Hit | None:
        found = await self._document(doc_id)
        return None if found is None else found[0]

    async def _document(self, doc_id: str, params: dict[str, str] | None = None
                        ) -> tuple[Hit, Any] | None:
        """The document and the engine's answer (``params``: ``retrieveVectors``)."""
        if not DOCUMENT_ID.fullmatch(doc_id):
            return None  # Meilisearch cannot hold a document with that id
        key = await self._key.get()
        path = self._path(f"/documents/{doc_id}")
        response = await self._api.send("GET", path, params=params)
        if response.status_code in (400, 404):
            code = parse.error_code(self._api.error_body(response))
            if code in MISSING_DOCUMENT:
                return None
        if not response.is_success:
            raise self._api.failure("GET", path, response)
        answer = self._api.decode(response)
        return self._read(lambda: parse.document(answer, uid=self._uid, primary_key=key,
                                                 doc_id=doc_id)), answer

    @within_timeout
    async def record_vector(self, doc_id: str) -> tuple[float, ...] | None:
        """The record's vector for the handle's embedder: ``GET .../documents/{id}``
        with ``retrieveVectors`` (Meilisearch 1.9 and later)."""
        meaning = self._meaning
        if meaning is None:
            raise InvalidRequest(f"{self._handle} searches by meaning nowhere: give it a "
                                 "semantic section with its embedder (docs/semantic.md)")
        if not meaning.sends_vector:
            raise InvalidRequest("Similar documents on Meilisearch need the records' own "
                                 "vectors (embedder: builtin or openai, a userProvided "
                                 "embedder): not an engine embedder, for now")
        found = await self._document(doc_id, {"retrieveVectors": "true"})
        if found is None:
            return None
        vectors = found[1].get("_vectors") if isinstance(found[1], dict) else None
        value = vectors.get(meaning.embedder) if isinstance(vectors, dict) else None
        if isinstance(value, dict):  # {"embeddings": [[..]], "regenerate": ..} (1.9+)
            value = value.get("embeddings")
            if isinstance(value, list) and value and isinstance(value[0], list):
                value = value[0]
        return stored_vector(value, f"_vectors.{meaning.embedder}", doc_id)

    async def get_mapping(self) -> dict[str, Any]:
        answer = await self._api.json("GET", self._path("/settings"))
        if not isinstance(answer, dict):
            raise self._api.unreadable()
        return answer

    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        if filters:  # never sent: raw_query_filters is off
            raise Forbidden("A raw query cannot keep forced filters on this engine")
        path = self._path("/search")
        response = await self._api.send("POST", path, translate.raw_body(body))
        if not response.is_success:
            raise self._api.failure("POST", path, response)
        return response.content

    # ------------------------------------------------------------ internals

    async def _facet_search(self, query: FacetValuesQuery) -> Any:
        """The facet search's answer; ``None`` when the index turned facet search off."""
        path = self._path("/facet-search")
        body = translate.facet_search_body(query, self._dates)
        response = await self._api.send("POST", path, body)
        if response.status_code == 400 and parse.error_code(
            self._api.error_body(response)
        ) == FACET_SEARCH_OFF:
            return None
        if not response.is_success:
            raise self._api.failure("POST", path, response)
        return self._api.decode(response)

    def _path(self, suffix: str) -> str:
        return translate.index_path(self._uid, suffix)

    async def _read_key(self) -> str | None:
        """The index's primary key, read once; the fallback until it can be read (refused,
        unreachable, or no document yet)."""
        info = await self._api.json("GET", self._path(""))
        key = info.get("primaryKey") if isinstance(info, dict) else None
        return key if isinstance(key, str) and key else None

    def _key_failed(self, exc: SearchportError) -> None:
        logger.warning("%s: the primary key could not be read (%s); objectID comes from %r",
                       self._handle, exc.message, self._fallback_key)

    def _read(self, parse_answer: Callable[[], T]) -> T:
        try:
            return parse_answer()
        except (parse.UnreadableAnswer, KeyError, TypeError, ValueError, AttributeError) as exc:
            logger.warning("%s: unexpected answer shape: %s", self._handle, exc)
            raise self._api.unreadable() from None


def ranking_refused(ranking: tuple[SortClause, ...], reason: str) -> str:
    """The 400 of a search the index refused to sort by the handle's custom ranking."""
    names = ", ".join(key.field for key in ranking)
    return (f"customRanking sorts by {names}: the Meilisearch index must list "
            f"{'them' if len(ranking) > 1 else 'it'} in sortableAttributes and keep \"sort\" "
            f"in its rankingRules after the relevance rules (words, typo, proximity, "
            f"attribute); {reason}")
