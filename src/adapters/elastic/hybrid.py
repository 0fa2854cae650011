"""A hybrid search on Elasticsearch and OpenSearch: words and meaning at once
(docs/semantic.md).

searchport fuses the two rankings itself, by the reciprocal rank fusion the embedded engine
uses (``domain/fusion.py``), weighted by the query's share of meaning: Elasticsearch's own
``rrf`` retriever needs a paid licence on some versions, its ``knn`` beside ``query`` adds
scores (a linear combination, not a fusion of ranks), and OpenSearch's ``hybrid`` query
needs the neural-search plugin and a search pipeline. Three requests, to ``_search``:

1. the keyword ranking (``keyword_body``): the keyword search exactly as ``/search`` sends
   it, filters, ``post_filter`` and suggestions included, its best ``window`` ids only (no
   ``_source``, no aggregations); not sent when the share of meaning is 1;
2. the ranking by meaning (``meaning_body``), sent at the same time: the ``window`` records
   nearest the query's vector among those that pass every filter (the query's and the
   ``post_filter``'s alike), in the engine's dialect: Elasticsearch's top-level ``knn``
   (``field``, ``query_vector``, ``k``, ``num_candidates``, ``filter``), OpenSearch's k-NN
   plugin's ``knn`` query (``{field: {vector, k, filter}}``). With ``embedder: engine``
   the engine embeds the query's text (``q`` as typed) with the model ``semantic.model``
   deployed in it, and searchport computes no vector: Elasticsearch's ``knn`` with
   ``query_vector_builder.text_embedding`` (``model_id``, ``model_text``) in place of
   ``query_vector``, the neural-search plugin's ``neural`` query on OpenSearch
   (``{field: {query_text, model_id, k, filter}}``). A query that brings its own vector (a
   record's, for similar documents) is searched by that vector on every embedder. An
   engine that cannot embed (no such model deployed, no neural-search plugin) refuses the
   search, and the refusal is the answer (as on Typesense: the engine's embedding is part
   of its search, not a step searchport can skip);
3. the page and the counts (``page_body``): an ``ids`` query over every fused record (each
   passes every filter), the page's records picked by ``post_filter``; aggregations ignore
   ``post_filter``, so facets, stats, histograms and the geo grid describe exactly the fused
   records (a facet's own filter narrows its counts too, both halves were filtered by it).
   Not sent when there is neither a page nor a count to read.

The fused records are keyed by ``(_index, _id)``, so a handle over several indices keeps
two records of the same id apart. A sort is refused (a sorted search ranks by its sort).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from searchport.adapters.elastic import parse
from searchport.adapters.elastic.fields import FieldCatalog
from searchport.adapters.elastic.filters import all_of
from searchport.adapters.elastic.translate import (
    aggregations,
    filter_clauses,
    highlight,
    search_body,
    text_query,
)
from searchport.domain.errors import EngineUnavailable, InvalidRequest
from searchport.domain.fusion import meaning_complete, reciprocal_rank_fusion, words_complete
from searchport.domain.query import SearchQuery, SortClause
from searchport.domain.results import EngineResult, Hit

Json = dict[str, Any]
Key = tuple[str, str]  # (_index, _id)
# the body of a search for the ``k`` records nearest ``vector`` in ``field`` among those
# matching every one of ``clauses``, in one engine's dialect
VectorSearch = Callable[[str, Sequence[float], int, list[Json]], Json]
# the same for the vector of a text the engine embeds itself: (field, model, text, k,
# clauses), ``model`` the id of the engine's deployed model
TextSearch = Callable[[str, str, str, int, list[Json]], Json]

WINDOW = 100  # records each half brings to the fusion (more when the page ends further)
MAX_WINDOW = 10_000  # the engines' own bound on k, num_candidates and from + size
CANDIDATES = 2  # Elasticsearch's num_candidates per shard: this many times k


def window(query: SearchQuery) -> int:
    return min(MAX_WINDOW, max(WINDOW, query.offset + query.limit))


def elasticsearch_knn(field: str, vector: Sequence[float], k: int,
                      clauses: list[Json]) -> Json:
    """Elasticsearch's top-level ``knn`` search (its specification's ``KnnSearch``): the
    ``k`` nearest of the documents matching ``filter``, itself a pre-filter (approximate
    search among the documents that pass it, not a cut after it)."""
    knn: Json = {"field": field, "query_vector": list(vector), "k": k,
                 "num_candidates": min(MAX_WINDOW, CANDIDATES * k)}
    if clauses:
        knn["filter"] = all_of(clauses)
    return {"size": k, "_source": False, "track_total_hits": False, "knn": knn}


def elasticsearch_text_knn(field: str, model: str, text: str, k: int,
                           clauses: list[Json]) -> Json:
    """``elasticsearch_knn`` for a text Elasticsearch embeds itself: ``query_vector_builder``
    with ``text_embedding`` (its specification's ``QueryVectorBuilder`` and
    ``TextEmbedding``: ``model_id``, ``model_text``) in place of ``query_vector``, the way
    Elasticsearch documents for a ``dense_vector`` field with a deployed text-embedding
    model. The hits are scored as any ``knn`` hit, ``(1 + cosine) / 2`` for ``cosine`` and
    ``dot_product`` fields: the query vector is built before the search, which then runs
    as with a ``query_vector``."""
    knn: Json = {"field": field,
                 "query_vector_builder": {"text_embedding": {"model_id": model,
                                                             "model_text": text}},
                 "k": k, "num_candidates": min(MAX_WINDOW, CANDIDATES * k)}
    if clauses:
        knn["filter"] = all_of(clauses)
    return {"size": k, "_source": False, "track_total_hits": False, "knn": knn}


def opensearch_knn(field: str, vector: Sequence[float], k: int,
                   clauses: list[Json]) -> Json:
    """The OpenSearch k-NN plugin's ``knn`` query (its specification's ``KnnQuery``):
    ``filter`` is the plugin's efficient filtering (the Lucene and Faiss engines search
    the documents that pass it)."""
    knn: Json = {"vector": list(vector), "k": k}
    if clauses:
        knn["filter"] = all_of(clauses)
    return {"size": k, "_source": False, "track_total_hits": False,
            "query": {"knn": {field: knn}}}


def opensearch_neural(field: str, model: str, text: str, k: int,
                      clauses: list[Json]) -> Json:
    """The neural-search plugin's ``neural`` query (the OpenSearch API specification's
    ``NeuralQuery``: ``query_text``, ``model_id``, ``k``, ``filter``): OpenSearch embeds
    ``text`` with the deployed model ``model`` and runs the k-NN plugin's ``knn`` query on
    ``field`` with that vector (the plugin rewrites the one into the other), so the hits
    are scored as ``opensearch_knn``'s, ``(1 + cosine) / 2`` in the ``cosinesimil`` space,
    and ``filter`` is the same efficient pre-filter."""
    neural: Json = {"query_text": text, "model_id": model, "k": k}
    if clauses:
        neural["filter"] = all_of(clauses)
    return {"size": k, "_source": False, "track_total_hits": False,
            "query": {"neural": {field: neural}}}


def keyword_body(query: SearchQuery, catalog: FieldCatalog,
                 ranking: tuple[SortClause, ...], size: int) -> Json:
    """The keyword search as ``/search`` sends it, its best ``size`` ids only."""
    body = search_body(msgspec.structs.replace(
        query, offset=0, limit=size, highlight=False, semantic=0.0, vector=None),
        catalog, ranking)
    body.pop("aggs", None)  # counted over the fused records (``page_body``)
    body["_source"] = False
    body["track_total_hits"] = False
    return body


@dataclass(frozen=True)
class EngineEmbeds:
    """The engine embeds the query's text itself (``embedder: engine``): its dialect of a
    search by text, and the id of the model deployed in it (``semantic.model``)."""

    search: TextSearch
    model: str


def meaning_body(query: SearchQuery, catalog: FieldCatalog, dialect: VectorSearch,
                 field: str, size: int, embeds: EngineEmbeds | None = None) -> Json:
    """The ``size`` records nearest the query's vector among those that pass every filter;
    without a vector, the vector the engine makes of the query's text (``embeds``)."""
    main, post = filter_clauses(query, catalog)
    clauses = [*main, *(clause for clauses in post.values() for clause in clauses)]
    if query.vector is None:
        assert embeds is not None
        return embeds.search(field, embeds.model, query.text, size, clauses)
    return dialect(field, query.vector, size, clauses)


def page_body(query: SearchQuery, catalog: FieldCatalog, fused: list[Key],
              page: list[Key], hidden: str) -> Json:
    """The page's records and the counts of every fused record (``hidden``: the vector
    field, left out of ``_source`` unless the query names the fields to return)."""
    body: Json = {"from": 0, "size": len(page), "track_total_hits": False,
                  "query": {"bool": {"filter": [ids_clause(fused)]}}}
    if page:
        body["post_filter"] = ids_clause(page)
        body["_source"] = list(query.fields) if query.fields is not None \
            else {"excludes": [hidden]}
        if query.highlight:
            body["highlight"] = {**highlight(query),
                                 "highlight_query": text_query(query, catalog)}
    aggs = aggregations(query, catalog, {})
    if aggs:
        body["aggs"] = aggs
    return body


def ids_clause(keys: list[Key]) -> Json:
    """The records of ``keys``: an ``ids`` query, per index when they come from several."""
    by_index: dict[str, list[str]] = {}
    for index, doc_id in keys:
        by_index.setdefault(index, []).append(doc_id)
    if len(by_index) == 1:
        return {"ids": {"values": next(iter(by_index.values()))}}
    return {"bool": {"should": [
        {"bool": {"filter": [{"term": {"_index": index}}, {"ids": {"values": ids}}]}}
        for index, ids in by_index.items()], "minimum_should_match": 1}}


def _wants_counts(query: SearchQuery) -> bool:
    return bool(query.facets or query.stats or query.histograms or query.geo_grid is not None)


Send = Callable[[Json], Awaitable[bytes]]


async def run_hybrid(query: SearchQuery, catalog: FieldCatalog, *, send: Send,
                     dialect: VectorSearch, field: str | None,
                     ranking: tuple[SortClause, ...] = (), floor: float = 0.0,
                     embeds: EngineEmbeds | None = None) -> EngineResult:
    """The fused search (see the module's docstring); ``send`` posts a body to the
    handle's ``_search``; ``embeds``: the engine embeds the text of a query without a
    vector. Raises ``parse.UnreadableAnswer`` on an answer of the wrong shape."""
    if field is None or (query.vector is None and embeds is None):
        raise EngineUnavailable("this index has no vector field to search by meaning")
    if query.sort or query.geo_sort is not None:
        raise InvalidRequest("A sorted search ranks by its sort: leave out semantic (or "
                             "the sort) to rank by meaning")
    share, size = query.semantic, window(query)
    bodies = [meaning_body(query, catalog, dialect, field, size, embeds)]
    if share < 1:
        bodies.insert(0, keyword_body(query, catalog, ranking, size))
    # both halves at once; every outcome awaited, the first failure raised
    outcomes = await asyncio.gather(*(send(body) for body in bodies), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    answers = [outcome for outcome in outcomes if isinstance(outcome, bytes)]
    by_meaning = _ranked(answers[-1], SearchQuery())
    keyword = _ranked(answers[0], query) if share < 1 else None
    meaning = [((hit.index, hit.id), cosine(hit.score)) for hit in by_meaning.hits]
    fused = reciprocal_rank_fusion(_keys(keyword.hits) if keyword else [], meaning, share,
                                   floor)
    page = fused[query.offset:query.offset + query.limit]
    result = EngineResult(hits=[], total=len(fused),
                          complete_total=(keyword is None
                                          or words_complete(len(keyword.hits), size))
                          and meaning_complete([c for _, c in meaning], size, share, floor),
                          facets={name: [] for name in query.facets},
                          histograms={spec.field: [] for spec in query.histograms},
                          geo_clusters=[] if query.geo_grid is not None else None,
                          suggestions=keyword.suggestions if keyword else [])
    if not fused or not (page or _wants_counts(query)):
        return result
    keys = [key for key, _ in fused]
    content = await send(page_body(query, catalog, keys, [key for key, _ in page], field))
    found = parse.decode_search(content, msgspec.structs.replace(query, suggest_field=None))
    by_key = {(hit.index, hit.id): hit for hit in found.hits}
    result.hits = [_scored(by_key[key], score) for key, score in page if key in by_key]
    result.facets, result.stats = {**result.facets, **found.facets}, found.stats
    result.histograms = {**result.histograms, **found.histograms}
    if query.geo_grid is not None:
        result.geo_clusters = found.geo_clusters or []
    return result


def cosine(score: float | None) -> float:
    """The cosine of a record's vector with the query's, from its score in the ranking by
    meaning: both engines score a cosine ``c`` as ``(1 + c) / 2`` (Elasticsearch's
    ``cosine`` and ``dot_product`` similarities, OpenSearch's ``cosinesimil`` space), the
    similarities text embeddings are searched by; the same whether searchport sent the
    vector or the engine embedded the text (a ``knn`` with ``query_vector_builder``, a
    ``neural`` query: each runs the same k-NN search once it has the vector)."""
    return -1.0 if score is None else 2 * score - 1


def _ranked(content: bytes, query: SearchQuery) -> EngineResult:
    return parse.decode_search(content, msgspec.structs.replace(
        query, facets=(), stats=(), histograms=(), geo_grid=None))


def _keys(hits: list[Hit]) -> list[Key]:
    return [(hit.index, hit.id) for hit in hits]


def _scored(hit: Hit, score: float) -> Hit:
    hit.score = score
    return hit
