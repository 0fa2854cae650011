"""Hybrid search (docs/semantic.md) on a real Elasticsearch/OpenSearch node, through the
real app: ten places indexed with the builtin model's vector of their name and description
(``dense_vector`` / ``knn_vector``, 384 dimensions), searched by words and meaning at once.

Every expectation is computed here from the rows: the set a keyword search matches (any
word of the query in the name or the description), the ranking by meaning (the model's
cosines, over the rows), and their weighted reciprocal rank fusion written out. A second
handle's embedder is an embeddings API that is down: its searches are the keyword search,
said degraded.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.domain.config import BUILTIN_FLOOR
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.contract.elastic import live
from tests.integration.test_tantivy_hybrid import PLACES
from tests.semantic_model import fused as fusion
from tests.semantic_model import nearest, require_model

REGION = {i: r for i, _, r, _ in PLACES}
VECTOR_FIELD = "embedding"
# the real nodes: Elasticsearch's dense_vector and knn are in its server module; the
# OpenSearch node runs the k-NN plugin (its Lucene engine: pure Java)
NODES: dict[str, Callable[[pytest.Config], live.Target]] = {
    "elasticsearch-node": live.elasticsearch_node_target,
    "opensearch-node": live.node_target}
Client = TestClient[Any]


def _mapping(engine: str) -> dict[str, Any]:
    text = {"type": "text"}
    if engine == "opensearch":
        vector: dict[str, Any] = {"type": "knn_vector", "dimension": 384, "method": {
            "name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"}}
    else:  # exact HNSW, not the quantized default of 384 dimensions
        vector = {"type": "dense_vector", "dims": 384, "similarity": "cosine",
                  "index_options": {"type": "hnsw"}}
    return {"dynamic": "strict", "properties": {
        "id": {"type": "keyword"}, "name": text, "description": text,
        "region": {"type": "keyword"}, VECTOR_FIELD: vector}}


@pytest.fixture(scope="module")
def model() -> Any:
    require_model()
    from searchport.adapters.semantic.minilm import MiniLM

    return MiniLM(threads=1)


@pytest.fixture(scope="module", params=sorted(NODES))
def target(request: pytest.FixtureRequest) -> live.Target:
    return NODES[request.param](request.config)


@pytest.fixture(scope="module")
def index_name(target: live.Target, model: Any) -> Iterator[str]:
    vectors = model.embed([f"{n}. {d}" for _, n, _, d in PLACES])
    docs = [{"id": i, "name": n, "region": r, "description": d,
             VECTOR_FIELD: [float(x) for x in vectors[row]]}
            for row, (i, n, r, d) in enumerate(PLACES)]
    name = f"searchport-hybrid-{uuid.uuid4().hex[:12]}"
    settings: dict[str, Any] = {"number_of_shards": 1, "number_of_replicas": 0}
    if target.engine == "opensearch":
        settings["knn"] = True
    with live._client(target) as http:
        live._ok(http.put(f"/{name}", json={"settings": settings,
                                             "mappings": _mapping(target.engine)}),
                 f"creating index {name}")
        try:
            answer = live._ok(http.post(f"/{name}/_bulk", content=live.bulk_body(docs),
                                        headers={"Content-Type": "application/x-ndjson"}),
                              "bulk indexing")
            assert not answer.get("errors"), json.dumps(answer)[:1000]
            live._ok(http.post(f"/{name}/_refresh"), "refreshing")
            yield name
        finally:
            http.delete(f"/{name}")


@pytest.fixture(scope="module")
def api(target: live.Target, index_name: str,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    handle = {"engine": target.engine, "host": target.url, "indexName": index_name,
              "timeout": 30, "fields": {"name": {"weight": 3},
                                        "description": {"searchable": True}}}
    config = {"indexes": {
        "places": {**handle, "semantic": {"field": VECTOR_FIELD}},
        # an embeddings API nobody listens to: every search by meaning is degraded
        "down": {**handle, "semantic": {"field": VECTOR_FIELD, "embedder": "openai",
                                        "url": "http://127.0.0.1:9/v1", "model": "m"}}}}
    parsed = parse_config(yaml.safe_dump(config), {})
    app = create_app(create_container(parsed, Path(tmp_path_factory.mktemp("hybrid"))))
    with TestClient(app) as client:
        yield client


def search(api: Client, handle: str = "places", **params: Any) -> Any:
    query = {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in params.items()}
    response = api.get(f"/{handle}/search", params=query)
    assert response.status_code == 200, response.text
    return response.json()


def ids(answer: Any) -> list[str]:
    return [hit["objectID"] for hit in answer["hits"]]


def nearness(model: Any, text: str, region: str | None = None) -> list[tuple[str, float]]:
    """The places' ids with their cosine to ``text``, nearest first."""
    return nearest(model, PLACES, text, region)


def by_meaning(model: Any, text: str, region: str | None = None) -> list[str]:
    """The places' ids, nearest in meaning to ``text`` first."""
    return [doc_id for doc_id, _ in nearness(model, text, region)]


def by_words(text: str, region: str | None = None) -> set[str]:
    """The places a keyword search matches: any word of ``text`` in the name or the
    description (the last one as a prefix)."""
    rows = [{"name": n, "description": d, "id": i} for i, n, r, d in PLACES
            if region is None or r == region]
    return {row["id"] for row in rows
            if live.text_matches(row, text, fields=("name", "description"))}


def fused(keyword: list[str], meaning: list[tuple[str, float]], share: float) -> list[str]:
    """The fusion's order (tests/semantic_model.py)."""
    return [doc_id for doc_id, _ in fusion(keyword, meaning, share)]


def test_a_paraphrase_finds_the_place_by_meaning(api: Client, model: Any) -> None:
    text = "where are movies made"
    assert by_words(text) == set() and search(api, q=text)["totalHits"] == 0
    answer = search(api, q=text, semantic=0.5, perPage=20)
    # words find nothing: the places meaning brings, those similar enough to weigh in
    near = [doc_id for doc_id, cosine in nearness(model, text) if cosine > BUILTIN_FLOOR]
    assert ids(answer) == near and answer["totalHits"] == len(near)
    assert ids(answer)[0] == "8"  # Mumbai
    assert all(VECTOR_FIELD not in hit for hit in answer["hits"])  # the vector stays out
    assert ids(search(api, q=text, semantic=1, perPage=3)) == by_meaning(model, text)[:3]


def test_hybrid_is_the_fusion_of_both_rankings(api: Client, model: Any) -> None:
    text = "ski resort in the mountains"
    words = search(api, q=text, perPage=20)
    keyword = ids(words)
    assert set(keyword) == by_words(text) and len(keyword) >= 3
    for share in (0.3, 0.5, 0.8):
        answer = search(api, q=text, semantic=share, perPage=20)
        expected = fused(keyword, nearness(model, text), share)
        assert ids(answer) == expected
        assert answer["totalHits"] == len(expected)
        scores = [hit["_score"] for hit in answer["hits"]]
        assert scores == sorted(scores, reverse=True)
    # pages of the fused list
    expected = fused(keyword, nearness(model, text), 0.5)
    assert ids(search(api, q=text, semantic=0.5, perPage=3, page=2)) == expected[3:6]


def test_the_page_marks_the_words_and_returns_the_fields_asked(api: Client) -> None:
    answer = search(api, q="ski slopes", semantic=0.5, highlight="true", fields="name",
                    perPage=3)
    first = answer["hits"][0]
    assert first["objectID"] == "9" and set(first) - {"_highlights"} == {
        "objectID", "_index", "_score", "name"}  # Aspen
    assert "<mark>ski</mark>" in json.dumps(first["_highlights"])


def test_words_win_on_a_name(api: Client) -> None:
    assert ids(search(api, q="oxford")) == ["5"]
    assert ids(search(api, q="oxford", semantic=0.5, perPage=3))[0] == "5"


def test_a_filter_restricts_both_halves_and_facets_count_the_fused_records(
        api: Client, model: Any) -> None:
    text = "ski resort in the mountains"
    filters = {"region": "Americas"}
    words = search(api, q=text, filters=filters, perPage=20)
    keyword = ids(words)
    assert set(keyword) == by_words(text, "Americas")
    answer = search(api, q=text, semantic=0.5, filters=filters, facets="region",
                    perPage=20)
    expected = fused(keyword, nearness(model, text, "Americas"), 0.5)
    assert ids(answer) == expected and {REGION[i] for i in ids(answer)} == {"Americas"}
    assert answer["facets"]["region"] == [{"value": "Americas", "count": len(expected)}]
    # by meaning only: the Americas' places, nearest first
    meaning = search(api, q="where are movies made", semantic=1, filters={"region": "Asia"})
    assert ids(meaning) == by_meaning(model, "where are movies made", "Asia")


def test_no_share_of_meaning_is_the_keyword_search(api: Client) -> None:
    for text in ("ski resort in the mountains", "old town", "where are movies made"):
        plain = search(api, q=text, perPage=20, facets="region")
        assert search(api, q=text, perPage=20, facets="region", semantic=0) == plain
        assert set(ids(plain)) == by_words(text)


def test_an_embedder_that_is_down_leaves_the_keyword_search_said_degraded(
        api: Client) -> None:
    text = "ski resort in the mountains"
    response = api.get("/down/search", params={"q": text, "semantic": "0.5",
                                                "perPage": "20"})
    assert response.status_code == 200, response.text
    assert response.headers["x-searchport-semantic"] == "degraded"
    assert response.json() == search(api, "down", q=text, perPage=20)
    assert set(ids(response.json())) == by_words(text)


def test_similar_documents_on_the_real_node(api: Client, model: Any) -> None:
    """``/documents/:id/similar``: the record's stored vector as the knn query, the record
    itself left out, the filter a pre-filter (the HNSW graph of ten records is exact)."""
    vectors = model.embed([f"{n}. {d}" for _, n, _, d in PLACES])

    def nearest(doc: str, region: str | None = None) -> list[str]:
        own = vectors[[p[0] for p in PLACES].index(doc)]
        rows = [(i, p) for i, p in enumerate(PLACES)
                if p[0] != doc and region in (None, p[2])]
        return [p[0] for i, p in sorted(rows, key=lambda r: -float(vectors[r[0]] @ own))]

    response = api.get("/places/documents/2/similar", params={"perPage": 20})
    assert response.status_code == 200, response.text
    assert ids(response.json()) == nearest("2")
    assert response.json()["totalHits"] == len(PLACES) - 1
    assert VECTOR_FIELD not in response.json()["hits"][0]
    asia = api.get("/places/documents/2/similar",
                   params={"filters": json.dumps({"region": "Asia"})})
    assert ids(asia.json()) == nearest("2", "Asia")
    assert api.get("/places/documents/nope/similar").status_code == 404
