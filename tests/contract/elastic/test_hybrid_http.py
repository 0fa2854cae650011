"""Hybrid search over a scripted Elasticsearch/OpenSearch, through the real app: the
requests the adapter sends (each held against its engine's specification by the scripted
engine, and sent again to the session's real node, which has the vector field), the hits
it makes of the answers, and the keyword search it falls back to, said degraded, when the
embedder is down."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from searchport.domain.config import BUILTIN_FLOOR
from searchport.domain.fusion import reciprocal_rank_fusion
from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import EngineDouble, EsApp, city_yaml
from tests.contract.scripted import OffSpec
from tests.semantic_model import require_model

VECTOR_FIELD = "embedding"
TEXT = "city of canals"
KEYWORD = ["1", "2", "3"]  # the double's keyword ranking
# and its ranking by meaning, with each record's score: (1 + cosine) / 2 on both engines
MEANING = [("3", 0.9), ("4", 0.85), ("1", 0.7)]
# what searchport fuses: each record's cosine, weighed against the builtin model's floor
BY_MEANING = [(doc_id, 2 * score - 1) for doc_id, score in MEANING]


def vector_mapping(engine: str) -> dict[str, Any]:
    if engine == "opensearch":
        field: dict[str, Any] = {"type": "knn_vector", "dimension": 384, "method": {
            "name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"}}
    else:
        field = {"type": "dense_vector", "dims": 384, "similarity": "cosine"}
    return es.mapping({**es.CITY_PROPERTIES, VECTOR_FIELD: field})


def semantic_yaml(engine: str, semantic: str = f"{{field: {VECTOR_FIELD}}}") -> str:
    return city_yaml(engine, settings=f"semantic: {semantic}")


def _body(request: httpx.Request) -> dict[str, Any]:
    return dict(json.loads(request.content))


def is_vector_search(body: dict[str, Any]) -> bool:
    """The ranking by meaning (OpenSearch's ``neural`` query: the engine embeds the text)."""
    return "knn" in body or "knn" in body.get("query", {}) or "neural" in body.get("query", {})


def answering(double: EngineDouble) -> Callable[[httpx.Request], httpx.Response]:
    """The double's search: the keyword ranking, the ranking by meaning, or the page (the
    records its ``post_filter`` names, in another order than asked, with a facet)."""

    def reply(request: httpx.Request) -> httpx.Response:
        body = _body(request)
        if is_vector_search(body):
            return double.response(200, es.search([es.hit(i, None, score=score)
                                                   for i, score in MEANING]))
        picked = body.get("post_filter", {}).get("ids", {}).get("values")
        if picked is not None:
            answer = es.search([es.hit(i, {"name": f"city {i}"}) for i in reversed(picked)])
            answer["aggregations"] = {"facet_0": es.terms([es.bucket("Europe", 4)])}
            return double.response(200, answer)
        return double.response(200, es.search([es.hit(i, None) for i in KEYWORD]))

    return reply


@pytest.fixture
def semantic_app(engine: str, es_app: Callable[..., EsApp]) -> EsApp:
    require_model()
    double = EngineDouble(engine, mapping=vector_mapping(engine))
    double.search(answering(double))
    return es_app(semantic_yaml(engine), double)


def test_a_hybrid_search_fuses_the_keyword_and_the_vector_search(
        engine: str, semantic_app: EsApp) -> None:
    response = semantic_app.get("/cities/search", params={
        "q": TEXT, "semantic": "0.5", "perPage": "2", "page": "2", "facets": "region",
        "filters": json.dumps({"region": "Europe"})})
    assert response.status_code == 200, response.text
    fused = reciprocal_rank_fusion(KEYWORD, BY_MEANING, 0.5, BUILTIN_FLOOR)
    answer = response.json()
    assert [hit["objectID"] for hit in answer["hits"]] == [k for k, _ in fused[2:4]]
    assert [hit["_score"] for hit in answer["hits"]] == [s for _, s in fused[2:4]]
    assert answer["totalHits"] == 4
    assert answer["facets"]["region"] == [{"value": "Europe", "count": 4}]

    keyword, meaning, page = (_body_of(s) for s in semantic_app.searches())
    if is_vector_search(keyword):
        keyword, meaning = meaning, keyword  # sent at the same time: either comes first
    europe = {"bool": {"filter": [{"term": {"continent": "Europe"}}]}}
    assert (keyword["from"], keyword["size"], keyword["_source"]) == (0, 100, False)
    assert keyword["post_filter"] == europe and "aggs" not in keyword
    if engine == "elasticsearch":
        knn = meaning["knn"]
        assert (knn["field"], knn["k"], knn["num_candidates"]) == (VECTOR_FIELD, 100, 200)
        assert len(knn["query_vector"]) == 384 and knn["filter"] == europe
    else:
        knn = meaning["query"]["knn"][VECTOR_FIELD]
        assert (knn["k"], len(knn["vector"]), knn["filter"]) == (100, 384, europe)
    assert page["query"] == {"bool": {"filter": [{"ids": {"values": [k for k, _ in fused]}}]}}
    assert page["post_filter"] == {"ids": {"values": [k for k, _ in fused[2:4]]}}
    assert page["_source"] == {"excludes": [VECTOR_FIELD]}
    assert page["aggs"]["facet_0"]["terms"]["field"] == "continent"


def _body_of(sent: Any) -> dict[str, Any]:
    return dict(sent.body)


def test_the_keyword_search_of_a_semantic_handle_leaves_the_vectors_out(
        semantic_app: EsApp) -> None:
    response = semantic_app.get("/cities/search", params={"q": TEXT})
    assert response.status_code == 200, response.text
    (sent,) = semantic_app.searches()
    assert sent.body["_source"] == {"excludes": [VECTOR_FIELD]}
    assert "knn" not in json.dumps(sent.body)


def test_a_sorted_hybrid_search_is_refused(semantic_app: EsApp) -> None:
    response = semantic_app.get("/cities/search", params={"q": TEXT, "semantic": "0.5",
                                                          "sort": json.dumps({"people": "asc"})})
    assert response.status_code == 400 and "sorted search" in response.text
    assert semantic_app.searches() == []


def test_an_embedder_that_is_down_leaves_the_keyword_search_said_degraded(
        engine: str, es_app: Callable[..., EsApp]) -> None:
    double = EngineDouble(engine, mapping=vector_mapping(engine))
    double.search((200, es.search([es.hit("1", {"name": "Venice"})])))
    # the embeddings API, on the same scripted network, is down (no specification of the
    # Elasticsearch double's covers it)
    double.on("POST", "/v1/embeddings", OffSpec(httpx.ConnectError("connection refused")))
    app = es_app(semantic_yaml(engine, f"{{field: {VECTOR_FIELD}, embedder: openai, "
                                       "url: 'http://embed.test/v1', model: m}"), double)
    response = app.get("/cities/search", params={"q": TEXT, "semantic": "0.5"})
    assert response.status_code == 200, response.text
    assert response.headers["x-searchport-semantic"] == "degraded"
    assert [hit["objectID"] for hit in response.json()["hits"]] == ["1"]
    (sent,) = app.searches()  # the keyword search alone
    assert not is_vector_search(sent.body) and sent.body["size"] == 20


def test_a_neural_search_index_fuses_on_the_algolia_routes(
        engine: str, es_app: Callable[..., EsApp]) -> None:
    """A handle whose semantic.ratio is above 0 is a NeuralSearch index: an Algolia search
    sends the same three searches as /search with that share, its filters in both halves."""
    require_model()
    double = EngineDouble(engine, mapping=vector_mapping(engine))
    double.search(answering(double))
    app = es_app(semantic_yaml(engine, f"{{field: {VECTOR_FIELD}, ratio: 0.5}}"), double)
    assert app.get("/1/indexes/cities/settings").json()["mode"] == "neuralSearch"
    response = app.post("/1/indexes/cities/query", json={
        "query": TEXT, "hitsPerPage": 2, "page": 1, "facetFilters": ["region:Europe"]})
    assert response.status_code == 200, response.text
    fused = reciprocal_rank_fusion(KEYWORD, BY_MEANING, 0.5, BUILTIN_FLOOR)
    answer = response.json()
    assert [hit["objectID"] for hit in answer["hits"]] == [k for k, _ in fused[2:4]]
    assert answer["nbHits"] == 4 and answer["nbPages"] == 2
    keyword, meaning, _ = (_body_of(s) for s in app.searches())
    if is_vector_search(keyword):
        keyword, meaning = meaning, keyword
    assert "Europe" in json.dumps(keyword["query"]) + json.dumps(keyword.get("post_filter"))
    knn = meaning["knn"] if engine == "elasticsearch" else meaning["query"]["knn"][VECTOR_FIELD]
    assert "Europe" in json.dumps(knn["filter"])
    words = app.post("/1/indexes/cities/query", json={"query": TEXT, "mode": "keywordSearch"})
    assert words.status_code == 200 and not any(
        is_vector_search(s.body) for s in app.searches()[3:])


def test_similar_documents_search_by_the_records_own_vector_without_it(
        engine: str, es_app: Callable[..., EsApp]) -> None:
    """``/documents/:id/similar``: the record read whole (its vector field), then the
    search by meaning alone with that vector, the request's filters, the record excluded."""
    double = EngineDouble(engine, mapping=vector_mapping(engine))
    own = [round(0.001 * i, 3) for i in range(384)]
    double.on("GET", "/cities/_doc/3", (200, es.doc_found(
        "3", {"name": "Venice", "continent": "Europe", VECTOR_FIELD: own}, engine=engine)))
    double.on("GET", "/cities/_doc/nope", (404, es.doc_not_found("nope", engine=engine)))
    double.on("GET", "/cities/_doc/bare", (200, es.doc_found(
        "bare", {"name": "Nowhere"}, engine=engine)))
    near = ["4", "1"]

    def reply(request: httpx.Request) -> httpx.Response:
        body = _body(request)
        if is_vector_search(body):
            return double.response(200, es.search([es.hit(i, None) for i in near]))
        picked = body["post_filter"]["ids"]["values"]
        return double.response(200, es.search([es.hit(i, {"name": f"city {i}"})
                                               for i in picked]))

    double.search(reply)
    app = es_app(semantic_yaml(engine), double)
    response = app.get("/cities/documents/3/similar", params={
        "filters": json.dumps({"region": "Europe"}), "perPage": "5"})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert [hit["objectID"] for hit in answer["hits"]] == near
    assert answer["totalHits"] == 2 and VECTOR_FIELD not in answer["hits"][0]

    meaning, page = (_body_of(s) for s in app.searches())  # no keyword search
    if engine == "elasticsearch":
        knn = meaning["knn"]
        assert knn["query_vector"] == own and knn["field"] == VECTOR_FIELD
        found_filter = knn["filter"]
    else:
        knn = meaning["query"]["knn"][VECTOR_FIELD]
        assert knn["vector"] == own
        found_filter = knn["filter"]
    # the region filter and the record's own id left out, before the nearest are chosen
    sent = json.dumps(found_filter)
    assert '{"term": {"continent": "Europe"}}' in sent, sent
    assert '{"must_not": [{"ids": {"values": ["3"]}}]}' in sent, sent
    assert page["post_filter"] == {"ids": {"values": near}}

    assert app.get("/cities/documents/nope/similar").status_code == 404
    bare = app.get("/cities/documents/bare/similar")
    assert bare.status_code == 400 and VECTOR_FIELD in bare.json()["error"]


# ---------------------------------------------------------------- embedder: engine

MODEL = "minilm-deployed"  # the id of the text-embedding model deployed in the engine
ENGINE_EMBEDS = f"{{field: {VECTOR_FIELD}, embedder: engine, model: {MODEL}, minSimilarity: 0.5}}"


def is_text_search(body: dict[str, Any]) -> bool:
    """A search in which the engine embeds the text: Elasticsearch's ``knn`` with
    ``query_vector_builder``, OpenSearch's ``neural`` query."""
    return "query_vector_builder" in body.get("knn", {}) or "neural" in body.get("query", {})


def text_search_of(engine: str, body: dict[str, Any]) -> dict[str, Any]:
    if engine == "elasticsearch":
        knn = dict(body["knn"])
        assert "query_vector" not in knn
        return knn
    assert "knn" not in body["query"]
    return dict(body["query"]["neural"][VECTOR_FIELD])


@pytest.fixture
def engine_embeds_app(engine: str, es_app: Callable[..., EsApp]) -> EsApp:
    double = EngineDouble(engine, mapping=vector_mapping(engine))
    double.search(answering(double))
    app = es_app(semantic_yaml(engine, ENGINE_EMBEDS), double)
    assert app.container.catalog()["cities"].meanings is None  # searchport embeds nothing
    return app


def test_an_engine_that_embeds_is_sent_the_text_and_the_answers_are_fused(
        engine: str, engine_embeds_app: EsApp) -> None:
    """``embedder: engine``: the meaning half carries the request's ``q`` as typed and the
    handle's ``semantic.model`` (no vector: no embedder is called, and an embeddings
    request would be an unscripted one), the filters in both halves; the knn scores are
    read as cosines against ``minSimilarity`` and fused as with searchport's vectors."""
    app = engine_embeds_app
    typed = "City of  canals"
    response = app.get("/cities/search", params={
        "q": typed, "semantic": "0.5", "perPage": "2", "page": "2", "facets": "region",
        "filters": json.dumps({"region": "Europe"})})
    assert response.status_code == 200, response.text
    assert "x-searchport-semantic" not in response.headers
    # cosines 0.8, 0.7 and 0.4: record 1 is below the floor, brought by words alone
    fused = reciprocal_rank_fusion(KEYWORD, BY_MEANING, 0.5, 0.5)
    assert [k for k, _ in fused] == ["3", "1", "2", "4"]  # 2 and 4 tie: words decide
    answer = response.json()
    assert [hit["objectID"] for hit in answer["hits"]] == [k for k, _ in fused[2:4]]
    assert [hit["_score"] for hit in answer["hits"]] == [s for _, s in fused[2:4]]
    assert answer["totalHits"] == 4
    assert answer["facets"]["region"] == [{"value": "Europe", "count": 4}]

    sent = [_body_of(s) for s in app.searches()]
    assert len(sent) == 3 and [is_text_search(b) for b in sent].count(True) == 1
    (meaning,) = [b for b in sent if is_text_search(b)]
    keyword, page = [b for b in sent if not is_text_search(b)]
    europe = {"bool": {"filter": [{"term": {"continent": "Europe"}}]}}
    assert keyword["post_filter"] == europe and keyword["size"] == 100
    search = text_search_of(engine, meaning)
    if engine == "elasticsearch":
        assert search == {"field": VECTOR_FIELD, "query_vector_builder": {"text_embedding": {
            "model_id": MODEL, "model_text": typed}}, "k": 100, "num_candidates": 200,
            "filter": europe}
    else:
        assert search == {"query_text": typed, "model_id": MODEL, "k": 100, "filter": europe}
    assert (meaning["size"], meaning["_source"]) == (100, False)
    assert page["query"] == {"bool": {"filter": [{"ids": {"values": [k for k, _ in fused]}}]}}
    assert page["post_filter"] == {"ids": {"values": [k for k, _ in fused[2:4]]}}
    assert not app.requests(path="/v1/embeddings")


def test_an_engine_that_embeds_answers_meaning_alone_with_one_search(
        engine: str, engine_embeds_app: EsApp) -> None:
    app = engine_embeds_app
    response = app.get("/cities/search", params={"q": TEXT, "semantic": "1"})
    assert response.status_code == 200, response.text
    # nothing to fuse: the nearest records, every one of them, nearest first
    assert [hit["objectID"] for hit in response.json()["hits"]] == ["3", "4", "1"]
    meaning, _page = (_body_of(s) for s in app.searches())
    assert is_text_search(meaning) and "filter" not in text_search_of(engine, meaning)


def test_an_engine_that_embeds_searches_a_record_by_its_own_vector(
        engine: str, es_app: Callable[..., EsApp]) -> None:
    """Similar documents: the record's stored vector (the one the engine's ingest computed)
    is the query vector, sent as with any embedder."""
    double = EngineDouble(engine, mapping=vector_mapping(engine))
    own = [round(0.002 * i, 3) for i in range(384)]
    double.on("GET", "/cities/_doc/3", (200, es.doc_found(
        "3", {"name": "Venice", VECTOR_FIELD: own}, engine=engine)))
    double.search(answering(double))
    app = es_app(semantic_yaml(engine, ENGINE_EMBEDS), double)
    response = app.get("/cities/documents/3/similar")
    assert response.status_code == 200, response.text
    meaning = _body_of(app.searches()[0])
    assert not is_text_search(meaning)
    vector = meaning["knn"]["query_vector"] if engine == "elasticsearch" \
        else meaning["query"]["knn"][VECTOR_FIELD]["vector"]
    assert vector == own


# what the tests' real nodes, which run no model, answer the meaning half (sent by hand)
NO_MODEL = {
    "elasticsearch": es.error(
        "x_content_parse_exception", "[1:96] [knn] failed to parse field [query_vector_builder]",
        400, root=[{"type": "x_content_parse_exception", "reason": "unknown named object "
                    "category [org.elasticsearch.search.vectors.QueryVectorBuilder]"}]),
    "opensearch": es.error("parsing_exception", "unknown query [neural]", 400,
                           line=1, col=71),
}


def test_an_engine_that_cannot_embed_refuses_the_search(
        engine: str, es_app: Callable[..., EsApp]) -> None:
    """As on Typesense, the engine's embedding is part of its search: an engine that runs no
    such model refuses the hybrid search, and its refusal is the answer (a 400 naming the
    engine's reason, not a keyword search said degraded); a keyword search still works."""
    double = EngineDouble(engine, mapping=vector_mapping(engine))

    def reply(request: httpx.Request) -> httpx.Response:
        body = _body(request)
        if is_text_search(body):
            return double.response(400, NO_MODEL[engine])
        return double.response(200, es.search([es.hit(i, None) for i in KEYWORD]))

    double.search(reply)
    app = es_app(semantic_yaml(engine, ENGINE_EMBEDS), double)
    response = app.get("/cities/search", params={"q": TEXT, "semantic": "0.5"})
    assert response.status_code == 400, response.text
    assert "x-searchport-semantic" not in response.headers
    assert NO_MODEL[engine]["error"]["reason"] in response.json()["error"] or \
        NO_MODEL[engine]["error"]["root_cause"][0]["reason"] in response.json()["error"]
    words = app.get("/cities/search", params={"q": TEXT})
    assert words.status_code == 200, words.text
    assert not any(is_text_search(s.body) for s in app.searches()[2:])


def test_autocomplete_sends_the_engine_q_as_typed(
        engine: str, engine_embeds_app: EsApp) -> None:
    """Autocomplete searches by meaning once a word is complete; the engine embeds ``q`` as
    typed, the word being typed included (as on Typesense and Meilisearch)."""
    app = engine_embeds_app
    assert app.get("/cities/autocomplete", params={"q": "canals", "semantic": "0.5"}) \
        .status_code == 200
    assert not any(is_text_search(s.body) for s in app.searches())  # no complete word yet
    response = app.get("/cities/autocomplete", params={"q": "city of can", "semantic": "0.5"})
    assert response.status_code == 200, response.text
    (meaning,) = [_body_of(s) for s in app.searches() if is_text_search(s.body)]
    search = text_search_of(engine, meaning)
    text = search["query_vector_builder"]["text_embedding"]["model_text"] \
        if engine == "elasticsearch" else search["query_text"]
    assert text == "city of can"
