"""Algolia's NeuralSearch on the Algolia routes, and autocomplete by meaning, through the
real app over a real tantivy index with the real builtin model: a handle whose
``semantic.ratio`` is above 0 reports ``mode: neuralSearch`` and answers a paraphrase by
meaning (the expected records are the model's own cosines over the rows, computed here);
filters narrow it, ``mode: keywordSearch`` and browse search by words, a replica keeps its
own order, and an embedder that fails degrades the answer to words with
``X-Searchport-Semantic: degraded``. Every answer is held against Algolia's published
specification (``tests/specs/algolia.json``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.entrypoints.container import create_container
from tests.integration.test_semantic_http import Broken, served_with_broken
from tests.integration.test_tantivy_hybrid import PLACES
from tests.semantic_model import ranking_by_meaning, require_model
from tests.specs import checker

PARAPHRASE = "where are movies made"  # no place holds any of these words
RATIO = 0.5
# ten short descriptions: a lower floor than the builtin default lets several weigh in
FLOOR = 0.2


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient[Any], Broken]]:
    require_model()
    base = tmp_path_factory.mktemp("neural")
    source = base / "places.jsonl"
    source.write_text("".join(json.dumps({"id": i, "name": n, "region": r, "description": d})
                              + "\n" for i, n, r, d in PLACES), "utf-8")
    config = parse_config(json.dumps({
        "cache": {"backend": "memory"}, "analytics": {"backend": "none"},
        "indexes": {
            "places": {
                "engine": "tantivy", "path": str(base / "index"), "source": str(source),
                "fields": {"name": {"type": "text", "weight": 3},
                           "description": {"type": "text", "searchable": True},
                           "region": {"type": "keyword"}},
                "semantic": {"fields": ["name", "description"], "ratio": RATIO,
                             "timeout": 0.3, "minSimilarity": FLOOR},
            },
            "places-by-region": {"replicaOf": "places",
                               "sort": [{"field": "region", "order": "asc"}]},
            "words": {
                "engine": "tantivy", "path": str(base / "words"), "source": str(source),
                "fields": {"name": {"type": "text", "weight": 3},
                           "description": {"type": "text", "searchable": True},
                           "region": {"type": "keyword"}},
            },
        },
    }), {}, base)
    yield from served_with_broken(create_container(config, base))


@pytest.fixture(scope="module")
def by_meaning() -> Any:
    """The places' names, nearest in meaning to a text first (tests/semantic_model.py)."""
    return ranking_by_meaning(PLACES)


def query(client: TestClient[Any], handle: str, **params: Any) -> Any:
    response = client.post(f"/1/indexes/{handle}/query", json=params)
    assert response.status_code == 200, response.text
    checker.check("algolia", "search.request", params)
    checker.check("algolia", "search.response", response.json(), what=handle)
    return response


def names(response: Any) -> list[str]:
    return [hit["name"] for hit in response.json()["hits"]]


def test_get_settings_says_neural_search(served: tuple[TestClient[Any], Broken]) -> None:
    client, _ = served
    modes = checker.document("algolia")["$defs"]["common.schemas.IndexSettings:mode"]["enum"]
    found = {h: client.get(f"/1/indexes/{h}/settings").json()["mode"]
             for h in ("places", "places-by-region", "words")}
    assert found == {"places": "neuralSearch", "places-by-region": "keywordSearch",
                     "words": "keywordSearch"}
    assert set(found.values()) <= set(modes)
    assert client.get("/places/fields").json()["semantic"] == RATIO
    assert "semantic" not in client.get("/words/fields").json()


def test_a_paraphrase_is_found_by_meaning(served: tuple[TestClient[Any], Broken],
                                          by_meaning: Any) -> None:
    client, _ = served
    words = query(client, "words", query=PARAPHRASE)
    assert words.json()["nbHits"] == 0
    neural = query(client, "places", query=PARAPHRASE, hitsPerPage=2)
    # no record matches the words: the fused ranking is the ranking by meaning, of the
    # records similar enough to weigh in
    weighing_in = by_meaning(PARAPHRASE, None, FLOOR)
    assert len(weighing_in) >= 4 and names(neural) == weighing_in[:2]
    assert names(neural)[0] == "Mumbai"
    assert neural.json()["nbHits"] == len(weighing_in) < len(PLACES)
    assert "x-searchport-semantic" not in neural.headers
    page = query(client, "places", query=PARAPHRASE, hitsPerPage=2, page=1)
    assert names(page) == weighing_in[2:4]


def test_multi_queries_search_each_handle_in_its_mode(
        served: tuple[TestClient[Any], Broken], by_meaning: Any) -> None:
    client, _ = served
    body = {"requests": [{"indexName": "places", "query": PARAPHRASE, "hitsPerPage": 2},
                         {"indexName": "words", "query": PARAPHRASE}]}
    response = client.post("/1/indexes/*/queries", json=body)
    assert response.status_code == 200, response.text
    checker.check("algolia", "multi.response", response.json())
    neural, words = response.json()["results"]
    assert [h["name"] for h in neural["hits"]] == by_meaning(PARAPHRASE, None, FLOOR)[:2]
    assert words["nbHits"] == 0


def test_filters_and_facets_narrow_both_halves(served: tuple[TestClient[Any], Broken],
                                               by_meaning: Any) -> None:
    client, _ = served
    found = query(client, "places", query=PARAPHRASE, filters="region:Americas",
                  facets=["region"])
    expected = by_meaning(PARAPHRASE, "Americas", FLOOR)
    assert expected and names(found) == expected
    assert found.json()["nbHits"] == len(expected)
    assert found.json()["facets"] == {"region": {"Americas": len(expected)}}
    faceted = query(client, "places", query=PARAPHRASE, facetFilters=[["region:Asia"]])
    assert names(faceted) == by_meaning(PARAPHRASE, "Asia", FLOOR)


def test_ranking_info_stays_within_the_specification(
        served: tuple[TestClient[Any], Broken]) -> None:
    client, _ = served
    found = query(client, "places", query=PARAPHRASE, getRankingInfo=True)
    # Algolia's rankingInfo defines no score of meaning; an organic hit carries none
    assert all("_rankingInfo" not in hit for hit in found.json()["hits"])
    assert "getRankingInfo=true" in found.json()["params"]


def test_keyword_mode_browse_and_replicas_search_by_words(
        served: tuple[TestClient[Any], Broken]) -> None:
    client, _ = served
    assert query(client, "places", query=PARAPHRASE, mode="keywordSearch").json()[
        "nbHits"] == 0
    assert query(client, "places-by-region", query=PARAPHRASE).json()["nbHits"] == 0
    sorted_words = query(client, "places-by-region", query="city")
    regions = [hit["region"] for hit in sorted_words.json()["hits"]]
    assert len(regions) > 1 and regions == sorted(regions)
    browsed = client.post("/1/indexes/places/browse", json={"query": PARAPHRASE})
    assert browsed.status_code == 200 and browsed.json()["nbHits"] == 0
    bad = client.post("/1/indexes/places/query", json={"query": "x", "mode": "vectors"})
    assert bad.status_code == 400 and "mode" in bad.json()["message"]
    # NeuralSearch's event sources train Algolia's model: accepted, nothing to change
    same = query(client, "places", query=PARAPHRASE, semanticSearch={"eventSources": None})
    assert names(same)[0] == "Mumbai"


def test_sorted_json_searches_rank_by_their_sort_unless_they_ask_for_meaning(
        served: tuple[TestClient[Any], Broken]) -> None:
    """The handle's ratio is the default of an unsorted search on the primary: a sorted
    search (its own sort, or a sorted replica's) goes by words, and only a ``semantic`` it
    sends itself is refused."""
    client, _ = served
    replica = client.get("/places-by-region/search", params={"q": "city"})
    assert replica.status_code == 200, replica.text
    regions = [hit["region"] for hit in replica.json()["hits"]]
    assert len(regions) > 1 and regions == sorted(regions)
    by_region = json.dumps({"region": "desc"})
    mine = client.get("/places/search", params={"q": "city", "sort": by_region})
    assert mine.status_code == 200, mine.text
    regions = [hit["region"] for hit in mine.json()["hits"]]
    assert len(regions) > 1 and regions == sorted(regions, reverse=True)
    asked = client.get("/places/search", params={"q": "city", "sort": by_region,
                                                 "semantic": "0.5"})
    assert asked.status_code == 400 and "sort" in asked.json()["error"]


@pytest.mark.parametrize("how", ["down", "late"])
def test_a_failing_embedder_answers_by_words_with_a_header(
        served: tuple[TestClient[Any], Broken], how: str) -> None:
    client, broken = served
    text = f"a city with casinos {how}"
    words = query(client, "places", query=text, mode="keywordSearch")
    broken.down, broken.delay = how == "down", 1.0 if how == "late" else 0.0
    try:
        degraded = client.post("/1/indexes/places/query", json={"query": text})
        multi = client.post("/1/indexes/*/queries", json={"requests": [
            {"indexName": "words", "query": "oxford"}, {"indexName": "places", "query": text}]})
    finally:
        broken.down, broken.delay = False, 0.0
    for response in (degraded, multi):
        assert response.status_code == 200, response.text
        assert response.headers["x-searchport-semantic"] == "degraded"
        assert response.headers["cache-control"] == "no-store"
    checker.check("algolia", "search.response", degraded.json())
    assert degraded.json()["hits"] == words.json()["hits"]
    assert multi.json()["results"][1]["hits"] == words.json()["hits"]
    recovered = client.post("/1/indexes/places/query", json={"query": text})
    assert "x-searchport-semantic" not in recovered.headers


# ------------------------------------------------------------------ autocomplete


def autocomplete(client: TestClient[Any], handle: str, **params: Any) -> Any:
    response = client.get(f"/{handle}/autocomplete", params=params)
    assert response.status_code == 200, response.text
    return response


def test_autocomplete_searches_the_complete_words_by_meaning(
        served: tuple[TestClient[Any], Broken], by_meaning: Any) -> None:
    client, _ = served
    typed = "where are movies ma"  # "ma" is being typed: only its prefix matches
    found = autocomplete(client, "places", q=typed, semantic=1, perPage=3)
    assert [h["name"] for h in found.json()["hits"]] == by_meaning("where are movies")[:3]
    # the handle's ratio when the request does not say; a complete text by meaning whole
    default = autocomplete(client, "places", q=PARAPHRASE + " ")
    assert default.json()["hits"][0]["name"] == "Mumbai"
    # one unfinished word: by words alone, never embedded
    assert autocomplete(client, "places", q="mumb", semantic=1).json() == autocomplete(
        client, "places", q="mumb", semantic=0).json()


@pytest.mark.parametrize(("handle", "value"), [("places", "1.5"), ("places", "-1"),
                                               ("words", "0.5")])
def test_autocomplete_refuses_a_share_it_cannot_give(
        served: tuple[TestClient[Any], Broken], handle: str, value: str) -> None:
    client, _ = served
    response = client.get(f"/{handle}/autocomplete", params={"q": "a b", "semantic": value})
    assert response.status_code == 400
    assert "semantic" in response.text


def test_autocomplete_degrades_to_words_with_a_header(
        served: tuple[TestClient[Any], Broken]) -> None:
    client, broken = served
    params = {"q": "a city with casinos ", "semantic": "0.8"}
    words = autocomplete(client, "places", **{**params, "semantic": "0"})
    broken.down = True
    try:
        degraded = autocomplete(client, "places", **params)
        again = autocomplete(client, "places", **params)
    finally:
        broken.down = False
    for response in (degraded, again):  # the second one was not served from a cache
        assert response.headers["x-searchport-semantic"] == "degraded"
        assert response.headers["cache-control"] == "no-store"
        assert response.json()["hits"] == words.json()["hits"]
    assert "x-searchport-semantic" not in autocomplete(client, "places", **params).headers
