"""Hybrid search on Meilisearch, through the real app over a scripted index that searches
by meaning (``vector_index.py``): the ``hybrid`` and ``vector`` parameters sent (held
against ``tests/specs/meilisearch.json``), the engine's merged ranking read back, filters
and facets, ``semantic=0`` as the keyword search, ``embedder: engine``, and an embedder
that is down.

The handle's embedder is a table of small vectors (``Table``) in place of the model: the
expectations are the cosines of those vectors, worked out here by hand."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

import searchport.entrypoints.container as container_module
from searchport.domain.errors import EngineUnavailable
from tests.contract.meilisearch.conftest import (
    SEARCH,
    MeiliApp,
    MeiliDouble,
    books_yaml,
    q,
)
from tests.contract.meilisearch.vector_index import VectorIndex, cosine

EMBEDDER = "places-minilm"
# four places and their vectors (two axes of meaning: film, snow; then sea, faith)
PLACES: list[dict[str, Any]] = [
    {"id": "1", "name": "Mumbai", "region": "Asia",
     "description": "The centre of India's film industry", "_vectors": {EMBEDDER: [1, 0, 0.2, 0]}},
    {"id": "2", "name": "Zermatt", "region": "Europe",
     "description": "An alpine village below the Matterhorn", "_vectors": {EMBEDDER: [0, 1, 0, 0]}},
    {"id": "3", "name": "Venice", "region": "Europe",
     "description": "A city of canals, and of a film festival",
     "_vectors": {EMBEDDER: [0.6, 0, 1, 0]}},
    {"id": "4", "name": "Kyoto", "region": "Asia",
     "description": "The old capital of temples", "_vectors": {EMBEDDER: [0.1, 0.2, 0, 1]}},
]
QUERIES = {"where are movies made": [1, 0, 0, 0], "temples": [0, 0, 0, 1],
           "film": [0.9, 0, 0.5, 0]}
FIELDS = """\
    fields:
      name: {weight: 2}
      description: {searchable: true}
      region: {}
"""


class Table:
    """The handle's embedder: each known text's vector (``down``: it fails)."""

    model = "table"

    def __init__(self) -> None:
        self.down = False

    async def start(self) -> None:
        return None

    async def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        if self.down:
            raise EngineUnavailable("The embedder is down")
        return [tuple(float(x) for x in QUERIES[t]) for t in texts]

    async def close(self) -> None:
        return None


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Table:
    found = Table()
    monkeypatch.setattr(container_module, "create_embedder", lambda handle, index, resources:
                        None if index.semantic.embedder == "engine" else found)
    return found


@pytest.fixture
def index() -> VectorIndex:
    return VectorIndex(PLACES, searchable=("name", "description"),
                       embedders={EMBEDDER: {"source": "userProvided", "dimensions": 4}},
                       embed=lambda text: list(QUERIES[text]))


def hybrid_yaml(embedder: str = "builtin", ratio: str = "") -> str:
    return books_yaml(settings=f"""
        semantic:
          embedder: {embedder}
          field: {EMBEDDER}
          {ratio}
    """, fields=FIELDS)


@pytest.fixture
def places(meili_app: Callable[..., MeiliApp], index: VectorIndex, table: Table,
           double: MeiliDouble) -> Iterator[MeiliApp]:
    double.search(index.search).multi(index.multi)
    yield meili_app(hybrid_yaml(), double)


def search(app: MeiliApp, **params: Any) -> dict[str, Any]:
    response = app.get("/books/search", params=q(**params))
    assert response.status_code == 200, response.text
    assert "x-searchport-semantic" not in response.headers
    body: dict[str, Any] = response.json()
    return body


def ids(body: dict[str, Any]) -> list[str]:
    return [hit["objectID"] for hit in body["hits"]]


def similarity(doc: dict[str, Any], text: str) -> float:
    return (1 + cosine(doc["_vectors"][EMBEDDER], QUERIES[text])) / 2


def test_the_query_vector_and_the_embedder_are_sent(places: MeiliApp) -> None:
    body = search(places, q="where are movies made", semantic=0.5)
    sent = places.last()
    assert sent.path == SEARCH
    assert sent.body["hybrid"] == {"embedder": EMBEDDER, "semanticRatio": 0.5}
    assert sent.body["vector"] == [1.0, 0.0, 0.0, 0.0]
    assert sent.body["q"] == "where are movies made" and "sort" not in sent.body
    # no word of the query is in any place: every hit comes from meaning, nearest first
    by_meaning = sorted(PLACES, key=lambda d: -similarity(d, "where are movies made"))
    assert ids(body) == [d["id"] for d in by_meaning] == ["1", "3", "4", "2"]
    assert [hit["_score"] for hit in body["hits"]] == pytest.approx(
        [similarity(d, "where are movies made") for d in by_meaning])
    assert body["totalHits"] == len(PLACES)
    assert all("_vectors" not in hit for hit in body["hits"])


def test_words_and_meaning_merge_by_weighted_score(places: MeiliApp) -> None:
    # "film" is a word of Mumbai's and Venice's descriptions (keyword score 1 each) and
    # near both in meaning; with a ratio of 0.8 the semantic scores, weighted 0.8, outrank
    # the keyword ones, weighted 0.2: the order is meaning's
    body = search(places, q="film", semantic=0.8)
    near = sorted(PLACES, key=lambda d: -similarity(d, "film"))
    assert ids(body) == [d["id"] for d in near] == ["1", "3", "4", "2"]
    # with a ratio of 0.2 the keyword scores (0.8 once weighted) outrank every semantic
    # one (at most 0.2): Mumbai and Venice first in the keyword search's order, then the
    # others by meaning
    assert ids(search(places, q="film", semantic=0.2)) == ["1", "3", "4", "2"]
    words_only = search(places, q="film")
    assert ids(words_only) == ["1", "3"] and words_only["totalHits"] == 2


def test_a_filter_restricts_both_searches(places: MeiliApp) -> None:
    body = search(places, q="where are movies made", semantic=0.5,
                  filters={"region": "Europe"}, facets="region")
    main, counts = places.last().body["queries"]  # region's own count leaves its filter out
    assert main["filter"] == ['region = "Europe"'] and "filter" not in counts
    assert main["hybrid"] == {"embedder": EMBEDDER, "semanticRatio": 0.5}
    # the hybrid search's candidates are every record passing the filters: counted by a
    # placeholder search
    assert "q" not in counts and "hybrid" not in counts and "vector" not in counts
    assert ids(body) == ["3", "2"] and body["totalHits"] == 2
    assert {v["value"]: v["count"] for v in body["facets"]["region"]} == {"Asia": 2,
                                                                         "Europe": 2}


def test_meaning_alone(places: MeiliApp) -> None:
    body = search(places, q="temples", semantic=1, filters={"region": "Asia"})
    sent = places.last().body
    assert sent["hybrid"] == {"embedder": EMBEDDER, "semanticRatio": 1}
    assert sent["vector"] == [0.0, 0.0, 0.0, 1.0]
    assert ids(body) == ["4", "1"] and body["totalHits"] == 2


def test_semantic_0_is_the_keyword_search(places: MeiliApp) -> None:
    plain = search(places, q="film")
    first = places.last().body
    zero = search(places, q="film", semantic=0)
    assert zero == plain and places.last().body == first
    assert "hybrid" not in first and "vector" not in first


def test_a_sort_is_refused(places: MeiliApp) -> None:
    response = places.get("/books/search", params=q(q="film", semantic=0.5, sort="name:asc"))
    assert response.status_code == 400 and "sort" in response.json()["error"]


def test_an_embedder_that_is_down_degrades_to_words(places: MeiliApp, table: Table) -> None:
    table.down = True
    response = places.get("/books/search", params=q(q="film", semantic=0.5))
    assert response.status_code == 200
    assert response.headers["x-searchport-semantic"] == "degraded"
    assert "hybrid" not in places.last().body
    assert ids(response.json()) == ["1", "3"]


def test_the_engine_embeds_the_text_itself(meili_app: Callable[..., MeiliApp],
                                           double: MeiliDouble, table: Table) -> None:
    index = VectorIndex(PLACES, searchable=("name", "description"),
                        embedders={EMBEDDER: {"source": "huggingFace"}},
                        embed=lambda text: list(QUERIES[text]))
    double.search(index.search)
    app = meili_app(hybrid_yaml("engine", "ratio: 0.5"), double)
    assert app.container.catalog()["books"].meanings is None  # nothing embedded here
    body = search(app, q="where are movies made")
    sent = app.last().body
    assert sent["hybrid"] == {"embedder": EMBEDDER, "semanticRatio": 0.5}
    assert "vector" not in sent
    assert ids(body) == ["1", "3", "4", "2"]


def test_an_embedder_the_index_lacks_is_meilisearchs_400(
        meili_app: Callable[..., MeiliApp], double: MeiliDouble, table: Table) -> None:
    index = VectorIndex(PLACES, searchable=("name",), embedders={"other": {
        "source": "userProvided", "dimensions": 4}})
    double.search(index.search)
    app = meili_app(hybrid_yaml(), double)
    response = app.get("/books/search", params=q(q="film", semantic=0.5))
    assert response.status_code == 400
    assert f"Cannot find embedder with name `{EMBEDDER}`" in json.dumps(response.json())


def test_a_neural_search_index_on_the_algolia_routes(
        meili_app: Callable[..., MeiliApp], index: VectorIndex, table: Table,
        double: MeiliDouble) -> None:
    """semantic.ratio above 0: NeuralSearch on the Algolia routes, Meilisearch's hybrid
    search with that share and the Algolia filters; keywordSearch and a down embedder by
    words (the latter said degraded)."""
    double.search(index.search).multi(index.multi)
    app = meili_app(hybrid_yaml(ratio="ratio: 0.5"), double)
    assert app.get("/1/indexes/books/settings").json()["mode"] == "neuralSearch"
    found = app.post("/1/indexes/books/query", json={"query": "where are movies made",
                                                     "filters": "region:Europe"})
    assert found.status_code == 200, found.text
    sent = app.last().body
    assert sent["hybrid"] == {"embedder": EMBEDDER, "semanticRatio": 0.5}
    assert sent["vector"] == [1.0, 0.0, 0.0, 0.0] and sent["filter"]
    assert ids(found.json()) == ["3", "2"] and found.json()["nbHits"] == 2
    words = app.post("/1/indexes/books/query", json={"query": "film",
                                                     "mode": "keywordSearch"})
    assert "hybrid" not in app.last().body and ids(words.json()) == ["1", "3"]
    table.down = True
    degraded = app.post("/1/indexes/books/query", json={"query": "film"})
    assert degraded.headers["x-searchport-semantic"] == "degraded"
    assert "hybrid" not in app.last().body and ids(degraded.json()) == ["1", "3"]


def test_similar_documents_search_by_the_records_own_vector(
        meili_app: Callable[..., MeiliApp], index: VectorIndex, table: Table,
        double: MeiliDouble) -> None:
    """``/documents/:id/similar``: the record's vectors read back (``retrieveVectors``),
    then Meilisearch's search by meaning alone with that vector, the record filtered out."""
    double.search(index.search).multi(index.multi)
    for doc in PLACES:
        double.on("GET", f"/indexes/books/documents/{doc['id']}", index.document)
    double.on("GET", "/indexes/books/documents/9", index.document)
    app = meili_app(hybrid_yaml(), double)
    response = app.get("/books/documents/1/similar")
    assert response.status_code == 200, response.text
    own = PLACES[0]["_vectors"][EMBEDDER]

    def near(doc: dict[str, Any]) -> float:
        return (1 + cosine(doc["_vectors"][EMBEDDER], own)) / 2

    expected = sorted(PLACES[1:], key=lambda d: -near(d))
    assert ids(response.json()) == [d["id"] for d in expected] == ["3", "4", "2"]
    assert response.json()["totalHits"] == 3
    sent = app.last()
    assert sent.body["hybrid"] == {"embedder": EMBEDDER, "semanticRatio": 1.0}
    assert sent.body["vector"] == own and not sent.body.get("q")
    assert sent.body["filter"] == ['id NOT IN ["1"]']  # the record itself left out
    asia = app.get("/books/documents/1/similar",
                   params={"filters": json.dumps({"region": "Asia"})})
    assert ids(asia.json()) == ["4"]
    assert app.get("/books/documents/9/similar").status_code == 404


def test_similar_documents_with_an_engine_embedder_is_a_400_for_now(
        meili_app: Callable[..., MeiliApp], double: MeiliDouble, table: Table) -> None:
    app = meili_app(hybrid_yaml("engine"), double)
    response = app.get("/books/documents/1/similar")
    assert response.status_code == 400 and "engine embedder" in response.json()["error"]
    assert app.data_requests() == []  # nothing asked of Meilisearch
