"""Hybrid search on a real Typesense 0.24.1, through the real app, with the real builtin
model: a collection whose ``float[]`` field holds the places' vectors (computed here by the
model), searched by words and meaning at once. Expected rankings are the cosines of the
vectors loaded (numpy, over the rows of this module), fused by the formula written
out (tests/semantic_model.py); the keyword halves are the plain searches' own answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.domain.config import Config
from searchport.entrypoints.container import create_container
from tests.fakes import in_memory_analytics
from tests.integration.test_semantic_http import Broken, served_with_broken
from tests.integration.test_tantivy_hybrid import PLACES
from tests.semantic_model import fused, require_model
from tests.typesense_server import TypesenseServer, session_server

COLLECTION = "places_hybrid"
DIMENSIONS = 384


def _text(name: str, description: str) -> str:
    return f"{name}. {description}"


@pytest.fixture(scope="module")
def model() -> Any:
    require_model()
    from searchport.adapters.semantic.minilm import MiniLM

    return MiniLM()


@pytest.fixture(scope="module")
def vectors(model: Any) -> dict[str, list[float]]:
    """Each place's vector, as loaded into the collection."""
    found = model.embed([_text(n, d) for _, n, _, d in PLACES])
    return {place[0]: [float(x) for x in row] for place, row in zip(PLACES, found, strict=True)}


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           vectors: dict[str, list[float]]) -> TypesenseServer:
    server = session_server(request.config, tmp_path_factory)
    if not server.has_collection(COLLECTION):
        server.create_collection({"name": COLLECTION, "fields": [
            {"name": "name", "type": "string"},
            {"name": "description", "type": "string"},
            {"name": "region", "type": "string", "facet": True},
            {"name": "embedding", "type": "float[]", "num_dim": DIMENSIONS},
        ]}, [{"id": i, "name": n, "region": r, "description": d, "embedding": vectors[i]}
             for i, n, r, d in PLACES])
    return server


@pytest.fixture(scope="module")
def served(server: TypesenseServer) -> Iterator[tuple[TestClient[Any], Broken]]:
    config = msgspec.convert({"cache": {"backend": "memory"}, "indexes": {"places": {
        "engine": "typesense", "host": server.url, "apiKey": server.api_key,
        "indexName": COLLECTION, "timeout": 5,
        "fields": {"name": {"type": "text", "weight": 3},
                   "description": {"type": "text", "searchable": True},
                   "region": {"type": "keyword"}},
        "semantic": {"field": "embedding", "timeout": 0.5},
    }}}, Config)
    yield from served_with_broken(in_memory_analytics(create_container(config, Path("."))))


@pytest.fixture(scope="module")
def client(served: tuple[TestClient[Any], Broken]) -> TestClient[Any]:
    return served[0]


def search(client: TestClient[Any], **params: Any) -> dict[str, Any]:
    response = client.get("/places/search", params={"perPage": 20, **params})
    assert response.status_code == 200, response.text
    assert "x-searchport-semantic" not in response.headers
    body: dict[str, Any] = response.json()
    return body


def ids(body: dict[str, Any]) -> list[str]:
    return [hit["objectID"] for hit in body["hits"]]


def by_meaning(model: Any, vectors: dict[str, list[float]], text: str,
               region: str | None = None) -> list[tuple[str, float]]:
    """The places' ids (of ``region``) with their cosine to ``text``, nearest first: the
    cosines of the loaded vectors with the model's vector of the query."""
    import numpy as np

    query = model.embed([text])[0]
    scores = {i: float(np.dot(np.asarray(v), query) / (np.linalg.norm(v) *
                                                       np.linalg.norm(query)))
              for i, v in vectors.items()}
    chosen = [p[0] for p in PLACES if region is None or p[2] == region]
    return [(i, scores[i]) for i in sorted(chosen, key=lambda i: -scores[i])]


def order(ranking: list[tuple[str, float]]) -> list[str]:
    return [doc_id for doc_id, _ in ranking]


def test_meaning_finds_what_words_miss(client: TestClient[Any], model: Any,
                                       vectors: dict[str, list[float]]) -> None:
    text = "where are movies made"
    assert search(client, q=text)["totalHits"] == 0
    body = search(client, q=text, semantic=0.5, facets="region")
    # words find nothing: the records meaning brings, those similar enough to weigh in
    expected = fused([], by_meaning(model, vectors, text), 0.5)
    assert order(expected)[0] == "8"  # Mumbai, the centre of India's film industry
    assert ids(body) == order(expected)
    assert body["totalHits"] == len(expected)
    # votes from Typesense's float32 cosine distances (``1 - cosine``)
    assert [hit["_score"] for hit in body["hits"]] == pytest.approx(
        [score for _, score in expected], rel=1e-4)
    assert sum(v["count"] for v in body["facets"]["region"]) == len(expected)
    assert all("embedding" not in hit for hit in body["hits"])  # the vectors stay behind


def test_words_and_meaning_fused(client: TestClient[Any], model: Any,
                                 vectors: dict[str, list[float]]) -> None:
    for text, share in (("oxford", 0.5), ("a city with casinos", 0.3), ("old capital", 0.8)):
        words = ids(search(client, q=text, perPage=100))
        body = search(client, q=text, semantic=share)
        expected = fused(words, by_meaning(model, vectors, text), share)
        assert ids(body) == order(expected), text
        assert [hit["_score"] for hit in body["hits"]] == pytest.approx(
            [score for _, score in expected], rel=1e-4)
    assert ids(search(client, q="oxford", semantic=0.5))[0] == "5"


def test_a_filter_restricts_both_halves(client: TestClient[Any], model: Any,
                                        vectors: dict[str, list[float]]) -> None:
    filters = json.dumps({"region": "Asia"})
    body = search(client, q="where are movies made", semantic=1, filters=filters,
                  facets="region")
    assert ids(body) == order(by_meaning(model, vectors, "where are movies made", "Asia"))
    assert body["totalHits"] == 2
    assert body["facets"]["region"] == [{"value": "Asia", "count": 2}]
    text = "a town with a university"
    words = ids(search(client, q=text, filters=json.dumps({"region": "Europe"}),
                       perPage=100))
    body = search(client, q=text, semantic=0.6, filters=json.dumps({"region": "Europe"}))
    expected = fused(words, by_meaning(model, vectors, text, "Europe"), 0.6)
    assert ids(body) == order(expected)


def test_meaning_alone_and_pages(client: TestClient[Any], model: Any,
                                 vectors: dict[str, list[float]]) -> None:
    text = "snow and mountains"
    expected = order(by_meaning(model, vectors, text))
    assert ids(search(client, q=text, semantic=1)) == expected
    second = search(client, q=text, semantic=1, perPage=3, page=2)
    assert ids(second) == expected[3:6] and second["totalHits"] == len(PLACES)


def test_semantic_0_is_the_keyword_search(client: TestClient[Any]) -> None:
    for text in ("oxford", "city", "where are movies made"):
        plain = search(client, q=text, facets="region")
        assert search(client, q=text, semantic=0, facets="region") == plain
        assert all("embedding" not in hit for hit in plain["hits"])
    assert ids(search(client, q="oxford")) == ["5"]


def test_what_a_hybrid_search_refuses(client: TestClient[Any]) -> None:
    sorted_ = client.get("/places/search", params={"q": "city", "semantic": 0.5,
                                                    "sort": "name:asc"})
    assert sorted_.status_code == 400 and "sort" in sorted_.json()["error"]
    far = client.get("/places/search", params={"q": "city", "semantic": 0.5,
                                                "page": 30, "perPage": 10})
    assert far.status_code == 400 and "250" in far.json()["error"]


def test_a_failing_embedder_degrades_to_words(
        served: tuple[TestClient[Any], Broken]) -> None:
    client, broken = served
    query = {"q": "a desert city with casinos", "semantic": "0.7"}
    words = client.get("/places/search", params={"q": query["q"]})
    broken.down = True
    try:
        degraded = client.get("/places/search", params=query)
    finally:
        broken.down = False
    assert degraded.status_code == 200
    assert degraded.headers["x-searchport-semantic"] == "degraded"
    assert degraded.headers["cache-control"] == "no-store"
    assert degraded.json()["hits"] == words.json()["hits"]
    recovered = client.get("/places/search", params=query)
    assert "x-searchport-semantic" not in recovered.headers
    assert recovered.json()["hits"][0]["objectID"] == "4"  # Las Vegas


@pytest.mark.parametrize(("field", "said"), [
    ("embedding", "ok      places (typesense)"),
    ("name", "FAILED  places (typesense): Cannot search by meaning on 'name' "
             "(semantic.field): it is not a vector field"),
])
def test_check_reads_the_vector_field_in_the_schema(
        server: TypesenseServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        field: str, said: str) -> None:
    from searchport.entrypoints.cli.main import main

    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"analytics": {"backend": "none"}, "indexes": {"places": {
        "engine": "typesense", "host": server.url, "apiKey": server.api_key,
        "indexName": COLLECTION, "semantic": {"field": field}}}}), "utf-8")
    assert main(["check", "--config", str(config)]) == (0 if field == "embedding" else 1)
    assert said in capsys.readouterr().out


def _nearest_to(vectors: dict[str, list[float]], doc: str, region: str | None = None
                ) -> list[str]:
    """The other places (of ``region``), nearest the vector loaded for ``doc`` first."""
    import numpy as np

    own = np.asarray(vectors[doc])
    others = [i for i, _, r, _ in PLACES if i != doc and region in (None, r)]

    def cosine(other: str) -> float:
        vector = np.asarray(vectors[other])
        return float(vector @ own / (np.linalg.norm(vector) * np.linalg.norm(own)))

    return sorted(others, key=lambda other: -cosine(other))


def test_similar_documents(client: TestClient[Any], vectors: dict[str, list[float]]) -> None:
    """``/documents/:id/similar``: the record's own vector, read from the collection, as
    the query of a search by meaning alone, the record left out."""
    response = client.get("/places/documents/1/similar", params={"perPage": 20})
    assert response.status_code == 200, response.text
    assert ids(response.json()) == _nearest_to(vectors, "1")
    assert response.json()["totalHits"] == len(PLACES) - 1
    assert "embedding" not in response.json()["hits"][0]
    europe = client.get("/places/documents/1/similar", params={
        "filters": json.dumps({"region": "Europe"}), "fields": "name"})
    assert ids(europe.json()) == _nearest_to(vectors, "1", "Europe")
    assert set(europe.json()["hits"][0]) == {"objectID", "_index", "_score", "_highlights",
                                             "name"}
    assert client.get("/places/documents/nope/similar").status_code == 404
