"""Hybrid search on a Typesense collection that embeds its records itself (an auto-embedding
field, ``embed``, Typesense 0.25 or later): with ``semantic.embedder: engine`` searchport
sends the text and Typesense embeds it. The tests' real Typesense is 0.24.1, which has no
such field (and its built-in models are downloaded), so a scripted Typesense answers here,
every exchange held against Typesense's published API specification (``tests/specs``).

The meaning half is ``q: <text>, query_by: <field>`` bounded by ``vector_query:
"<field>:([], k: N)"`` (Typesense's semantic search on an auto-embedding field); its hits
come back with ``vector_distance``, nearest first, and are fused with the keyword half's."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.contract.scripted import ScriptedEngine, StartedApp, started

HOST = "http://typesense.test:8108"
COLLECTION = "places"
K = 60
PLACES = {
    "1": {"name": "Mumbai", "description": "The centre of India's film industry"},
    "2": {"name": "Zermatt", "description": "An alpine village below the Matterhorn"},
    "3": {"name": "Venice", "description": "A city of canals and a film festival"},
}
# the distances the scripted collection answers for each text, nearest first
NEAREST = {"where are movies made": [("1", 0.31), ("3", 0.52), ("2", 0.97)],
           "film": [("3", 0.28), ("1", 0.33), ("2", 0.91)]}
# the keyword half: the records holding a word of the text, best first
WORDS = {"where are movies made": [], "film": ["1", "3"]}


def schema(embedded: bool = True) -> dict[str, Any]:
    vector: dict[str, Any] = {"name": "embedding", "type": "float[]", "facet": False,
                              "optional": False, "index": True, "sort": False,
                              "infix": False, "locale": "", "num_dim": 384}
    if embedded:
        vector["embed"] = {"from": ["name", "description"],
                           "model_config": {"model_name": "ts/all-MiniLM-L12-v2"}}
    text = {"type": "string", "facet": False, "optional": False, "index": True,
            "sort": False, "infix": False, "locale": ""}
    return {"name": COLLECTION, "num_documents": len(PLACES), "created_at": 1700000000,
            "default_sorting_field": "", "enable_nested_fields": False,
            "symbols_to_index": [], "token_separators": [],
            "fields": [{"name": "name", **text}, {"name": "description", **text}, vector]}


def result(search: dict[str, Any], hits: list[dict[str, Any]]) -> dict[str, Any]:
    return {"facet_counts": [], "found": len(hits), "hits": hits, "out_of": len(PLACES),
            "page": 1, "search_time_ms": 0,
            "request_params": {"collection_name": COLLECTION, "per_page": search["per_page"],
                               "q": search["q"]}}


class ScriptedTypesense(ScriptedEngine):
    engine = "typesense"

    def __init__(self, embedded: bool = True) -> None:
        super().__init__()
        self.searches: list[dict[str, Any]] = []
        self.on("GET", f"/collections/{COLLECTION}", (200, schema(embedded)))
        self.on("POST", "/multi_search", self.multi_search)

    def multi_search(self, request: httpx.Request) -> httpx.Response:
        searches = json.loads(request.content)["searches"]
        self.searches.extend(searches)
        return self.response(200, {"results": [self.answer(s) for s in searches]})

    def answer(self, search: dict[str, Any]) -> dict[str, Any]:
        if search["q"] == "*":  # a record's own vector (similar documents)
            hidden = search.get("hidden_hits", "").split(",")
            return result(search, [
                {"document": {"id": i, **PLACES[i]}, "highlights": [], "vector_distance": d}
                for i, d in NEAREST["film"] if i not in hidden])
        if search.get("query_by") == "embedding":  # a semantic search: Typesense embeds q
            return result(search, [
                {"document": {"id": i, **PLACES[i]}, "highlights": [], "vector_distance": d}
                for i, d in NEAREST[search["q"]]])
        return result(search, [
            {"document": {"id": i, **PLACES[i]}, "highlights": [], "text_match": 100 - n}
            for n, i in enumerate(WORDS[search["q"]])])


def config(embedder: str = "engine") -> str:
    return textwrap.dedent(f"""\
        indexes:
          places:
            engine: typesense
            host: {HOST}
            apiKey: search-key
            indexName: {COLLECTION}
            semantic:
              embedder: {embedder}
              field: embedding
        """)


@pytest.fixture
def scripted() -> ScriptedTypesense:
    return ScriptedTypesense()


@pytest.fixture
def app(scripted: ScriptedTypesense) -> Iterator[StartedApp]:
    with started(StartedApp, config(), scripted, warm_up=lambda _: 1) as app:
        yield app


def test_the_text_is_sent_for_typesense_to_embed(app: StartedApp,
                                                 scripted: ScriptedTypesense) -> None:
    assert app.container.catalog()["places"].meanings is None  # nothing embedded here
    response = app.get("/places/search", params={"q": "where are movies made",
                                                  "semantic": "0.5"})
    assert response.status_code == 200, response.text
    keyword, meaning = scripted.searches
    assert meaning == {"collection": COLLECTION, "q": "where are movies made",
                       "query_by": "embedding", "prefix": "false",
                       "vector_query": "embedding:([], k: 100)", "page": 1, "per_page": 100,
                       "exclude_fields": "embedding"}
    assert keyword["q"] == "where are movies made" and "vector_query" not in keyword
    assert keyword["query_by"] == "name,description"  # the vector field is not a text
    body = response.json()
    assert [h["objectID"] for h in body["hits"]] == ["1", "3", "2"]
    assert [h["_score"] for h in body["hits"]] == pytest.approx(
        [0.5 / (K + r) for r in (1, 2, 3)])


def test_similar_documents_search_by_the_vector_typesense_computed(
        app: StartedApp, scripted: ScriptedTypesense) -> None:
    """The record's auto-embedded vector, read with its document, is the query vector."""
    own = [0.25] * 384
    scripted.on("GET", f"/collections/{COLLECTION}/documents/1",
                (200, {"id": "1", **PLACES["1"], "embedding": own}))
    response = app.get("/places/documents/1/similar")
    assert response.status_code == 200, response.text
    assert [h["objectID"] for h in response.json()["hits"]] == ["3", "2"]
    (meaning,) = scripted.searches
    assert meaning["q"] == "*" and "query_by" not in meaning
    assert meaning["vector_query"].startswith("embedding:([0.25,0.25,")
    assert meaning["vector_query"].endswith("], k: 100)")
    assert meaning["hidden_hits"] == "1"


def test_words_and_meaning_fused(app: StartedApp) -> None:
    body = app.get("/places/search", params={"q": "film", "semantic": "0.5"}).json()
    # Mumbai: words 1st, meaning 2nd; Venice: words 2nd, meaning 1st; Zermatt: meaning 3rd
    mumbai = 0.5 / (K + 1) + 0.5 / (K + 2)
    zermatt = 0.5 / (K + 3)
    assert [h["objectID"] for h in body["hits"]] == ["1", "3", "2"]  # a tie: words decide
    assert [h["_score"] for h in body["hits"]] == pytest.approx([mumbai, mumbai, zermatt])
    assert body["totalHits"] == 3


def test_a_field_typesense_does_not_embed_is_a_400() -> None:
    with started(StartedApp, config(), ScriptedTypesense(embedded=False),
                 warm_up=lambda _: 1) as app:
        response = app.get("/places/search", params={"q": "film", "semantic": "0.5"})
        assert response.status_code == 400
        assert "does not embed it" in response.json()["error"]
        # the keyword search is untouched
        assert app.get("/places/search", params={"q": "film"}).status_code == 200


def test_an_unreadable_meaning_half_is_a_502() -> None:
    from tests.contract.scripted import OffSpec

    scripted = ScriptedTypesense()
    broken = {"results": [result({"per_page": 100, "q": "film"}, []),
                          {"found": 1, "hits": [{"highlights": []}]}]}
    scripted.on("POST", "/multi_search", OffSpec((200, broken)))
    with started(StartedApp, config(), scripted, warm_up=lambda _: 1) as app:
        response = app.get("/places/search", params={"q": "film", "semantic": "0.5"})
        assert response.status_code == 502
