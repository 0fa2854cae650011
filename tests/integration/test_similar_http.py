"""``GET /:handle/documents/:id/similar`` through the real app, over a real tantivy index
with the real builtin model: the nearest records computed here independently (the model's
cosines over the rows, in numpy), filters, paging and fields, the record itself never
among them, ids with '/' (and one ending in '/similar'), and the 404 and 400 answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.domain.config import Config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.integration.test_tantivy_hybrid import PLACES
from tests.semantic_model import require_model
from tests.specs.checker import check

ROWS = [*PLACES,
        ("eu/11", "Lisbon", "Europe", "A hilly coastal capital with trams and tiled houses."),
        ("12/similar", "Nice", "Europe", "A seaside resort on the Riviera with a pebble "
                                         "beach and a promenade."),
        ("12", "Porto", "Europe", "A river city of port wine cellars and bridges.")]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Any]]:
    require_model()
    base = tmp_path_factory.mktemp("similar-http")
    source = base / "places.jsonl"
    source.write_text("".join(json.dumps({"id": i, "name": n, "region": r, "description": d})
                              + "\n" for i, n, r, d in ROWS), "utf-8")
    fields = {"name": {"type": "text", "weight": 3},
              "description": {"type": "text", "searchable": True},
              "region": {"type": "keyword"}}
    config = msgspec.convert({
        "cache": {"backend": "memory"}, "analytics": {"backend": "none"},
        "indexes": {
            "places": {"engine": "tantivy", "path": str(base / "index"),
                       "source": str(source), "fields": fields,
                       "semantic": {"fields": ["name", "description"]}},
            "plain": {"engine": "tantivy", "path": str(base / "plain"),
                      "source": str(source), "fields": fields},
        },
    }, Config)
    with TestClient(create_app(create_container(config, base))) as served:
        yield served


@pytest.fixture(scope="module")
def cosines() -> dict[str, dict[str, float]]:
    """Every pair's cosine, from the model's vectors of the rows' text (name. description)."""
    import numpy as np

    from searchport.adapters.semantic.minilm import MiniLM

    vectors = np.asarray(MiniLM().embed([f"{n}. {d}" for _, n, _, d in ROWS]))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    products = vectors @ vectors.T
    ids = [row[0] for row in ROWS]
    return {a: {b: float(products[i, j]) for j, b in enumerate(ids)}
            for i, a in enumerate(ids)}


def nearest(cosines: dict[str, dict[str, float]], doc: str,
            keep: Any = lambda row: True) -> list[str]:
    """The other rows that ``keep`` keeps, nearest ``doc`` first."""
    others = [row[0] for row in ROWS if row[0] != doc and keep(row)]
    return sorted(others, key=lambda other: -cosines[doc][other])


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [hit["objectID"] for hit in response.json()["hits"]]


def test_the_nearest_records_in_order_without_the_record_itself(
        client: TestClient[Any], cosines: dict[str, dict[str, float]]) -> None:
    response = client.get("/places/documents/1/similar", params={"perPage": 20})
    expected = nearest(cosines, "1")
    assert ids(response) == expected
    body = response.json()
    assert body["totalHits"] == len(ROWS) - 1
    assert body["page"] == 1 and body["perPage"] == 20 and body["totalPages"] == 1
    hit = body["hits"][0]
    assert {"objectID", "_index", "_score", "_highlights", "name", "region"} <= set(hit)
    assert [h["_score"] for h in body["hits"]] == sorted(
        (h["_score"] for h in body["hits"]), reverse=True)
    assert expected[0] == "12/similar"  # Nice: the other seaside resort with a pebble beach


def test_filters_restrict_before_the_nearest_are_chosen(
        client: TestClient[Any], cosines: dict[str, dict[str, float]]) -> None:
    response = client.get("/places/documents/1/similar",
                          params={"filters": json.dumps({"region": ["Asia", "Americas"]})})
    expected = nearest(cosines, "1", lambda row: row[2] in ("Asia", "Americas"))
    assert ids(response) == expected
    assert response.json()["totalHits"] == len(expected) == 5
    own = client.get("/places/documents/1/similar",
                     params={"filters": json.dumps({"region": "Europe"})})
    assert "1" not in ids(own)
    assert ids(own) == nearest(cosines, "1", lambda row: row[2] == "Europe")


def test_pages_and_fields(client: TestClient[Any],
                          cosines: dict[str, dict[str, float]]) -> None:
    expected = nearest(cosines, "8")
    page = client.get("/places/documents/8/similar",
                      params={"perPage": 3, "page": 2, "fields": "name"})
    assert ids(page) == expected[3:6]
    body = page.json()
    assert body["totalHits"] == len(ROWS) - 1 and body["totalPages"] == 4
    assert all(set(hit) == {"objectID", "_index", "_score", "_highlights", "name"}
               for hit in body["hits"])


def test_ids_with_a_slash(client: TestClient[Any],
                          cosines: dict[str, dict[str, float]]) -> None:
    assert client.get("/places/documents/eu/11").json()["name"] == "Lisbon"
    assert ids(client.get("/places/documents/eu/11/similar",
                          params={"perPage": 20})) == nearest(cosines, "eu/11")
    assert ids(client.get("/places/documents/eu%2F11/similar",
                          params={"perPage": 20})) == nearest(cosines, "eu/11")


def test_an_id_ending_in_slash_similar(client: TestClient[Any],
                                       cosines: dict[str, dict[str, float]]) -> None:
    # its last '/' sent as %2F, "/similar" is part of the id: the document itself (asked
    # first, so that a response cache keyed by the decoded path would answer it again)
    for _ in range(2):
        document = client.get("/places/documents/12%2Fsimilar")
        assert document.status_code == 200, document.text
        assert (document.json()["objectID"], document.json()["name"]) == ("12/similar",
                                                                          "Nice")
    # a literal /similar asks for the similar documents: of "12" (Porto)
    assert ids(client.get("/places/documents/12/similar")) == nearest(cosines, "12")
    assert client.get("/places/documents/12").json()["name"] == "Porto"
    assert ids(client.get("/places/documents/12%2Fsimilar/similar",
                          params={"perPage": 20})) == nearest(cosines, "12/similar")
    # a document whose id is "similar" itself stays a document
    assert client.get("/places/documents/similar").status_code == 404


def test_an_unknown_id_is_a_404(client: TestClient[Any]) -> None:
    response = client.get("/places/documents/nope/similar")
    assert response.status_code == 404, response.text


def test_a_handle_without_semantic_is_a_400_naming_it(client: TestClient[Any]) -> None:
    response = client.get("/plain/documents/1/similar")
    assert response.status_code == 400, response.text
    assert "semantic section" in response.json()["error"]
    assert client.get("/plain/documents/1").status_code == 200


def test_bad_parameters_are_400s(client: TestClient[Any]) -> None:
    assert client.get("/places/documents/1/similar",
                      params={"filters": "{"}).status_code == 400
    assert client.get("/places/documents/1/similar",
                      params={"perPage": "many"}).status_code == 400


def test_the_route_is_in_the_openapi_document(client: TestClient[Any]) -> None:
    paths = client.get("/openapi/json").json()["paths"]
    similar = paths["/{handle}/documents/{doc_id}/similar"]["get"]
    assert similar["summary"] == "Similar documents"
    names = {parameter["name"] for parameter in similar["parameters"]}
    assert {"handle", "doc_id", "page", "perPage", "filters", "fields"} <= names


# Algolia Recommend's looking-similar model, held to Algolia's Recommend specification

def recommend(client: TestClient[Any], **request: Any) -> Any:
    body = {"requests": [{"indexName": "places", "model": "looking-similar",
                          "threshold": 0, **request}]}
    check("recommend", "recommendations.request", body)
    return client.post("/1/indexes/*/recommendations", json=body)


def test_looking_similar_answers_the_nearest_records_with_their_score(
        client: TestClient[Any], cosines: dict[str, dict[str, float]]) -> None:
    response = recommend(client, objectID="1", maxRecommendations=4)
    assert response.status_code == 200, response.text
    check("recommend", "recommendations.response", response.json())
    (result,) = response.json()["results"]
    expected = nearest(cosines, "1")[:4]
    assert [hit["objectID"] for hit in result["hits"]] == expected
    assert [hit["_score"] for hit in result["hits"]] == pytest.approx(
        [round(100 * cosines["1"][other], 2) for other in expected], abs=0.02)
    first = result["hits"][0]
    assert set(first) == {"objectID", "id", "name", "region", "description", "_score"}
    assert (result["nbHits"], result["page"], result["nbPages"], result["hitsPerPage"]) == (
        4, 0, 1, 4)


def test_looking_similar_threshold_filters_and_attributes(
        client: TestClient[Any], cosines: dict[str, dict[str, float]]) -> None:
    cut = sorted(100 * cosines["1"][other] for other in nearest(cosines, "1"))[-3]
    response = recommend(client, objectID="1", threshold=round(cut - 0.05, 2))
    assert response.status_code == 200, response.text
    assert [hit["objectID"] for hit in response.json()["results"][0]["hits"]] == \
        nearest(cosines, "1")[:3]
    filtered = recommend(client, objectID="8", queryParameters={
        "filters": "region:Americas", "attributesToRetrieve": ["name"]})
    assert filtered.status_code == 200, filtered.text
    check("recommend", "recommendations.response", filtered.json())
    hits = filtered.json()["results"][0]["hits"]
    assert [hit["objectID"] for hit in hits] == nearest(cosines, "8",
                                                        lambda row: row[2] == "Americas")
    assert all(set(hit) == {"objectID", "name", "_score"} for hit in hits)


def test_looking_similar_refusals(client: TestClient[Any]) -> None:
    other = client.post("/1/indexes/*/recommendations", json={"requests": [
        {"indexName": "places", "model": "related-products", "objectID": "1",
         "threshold": 0}]})
    assert other.status_code == 400 and "looking-similar" in other.json()["message"]
    check("recommend", "error.response", other.json())
    assert recommend(client, objectID="nope").status_code == 404
    plain = client.post("/1/indexes/*/recommendations", json={"requests": [
        {"indexName": "plain", "model": "looking-similar", "objectID": "1", "threshold": 0}]})
    assert plain.status_code == 400 and "semantic section" in plain.json()["message"]
    no_threshold = client.post("/1/indexes/*/recommendations", json={"requests": [
        {"indexName": "places", "model": "looking-similar", "objectID": "1"}]})
    assert no_threshold.status_code == 400 and "threshold" in no_threshold.json()["message"]
    unsupported = recommend(client, objectID="1", queryParameters={"optionalFilters": ["a:b"]})
    assert unsupported.status_code == 400 and "optionalFilters" in unsupported.text


def searched(client: TestClient[Any], **params: Any) -> list[str]:
    """The ids the Algolia search route answers for ``params``, in its order."""
    response = client.post("/1/indexes/places/query", json={"hitsPerPage": 50, **params})
    assert response.status_code == 200, response.text
    return [hit["objectID"] for hit in response.json()["hits"]]


def test_fallback_parameters_fill_what_the_recommendations_leave(
        client: TestClient[Any], cosines: dict[str, dict[str, float]]) -> None:
    # no record is as near as the threshold asks: the fallback search answers alone, the
    # record itself left out
    response = recommend(client, objectID="5", threshold=100, maxRecommendations=3,
                         fallbackParameters={"query": "town"})
    assert response.status_code == 200, response.text
    check("recommend", "recommendations.response", response.json())
    (result,) = response.json()["results"]
    towns = [i for i, n, _, d in ROWS if "town" in f"{n} {d}".lower().split()]
    assert sorted(towns) == ["1", "5", "9"]  # Brighton, Oxford, Aspen
    assert [hit["objectID"] for hit in result["hits"]] == \
        [i for i in searched(client, query="town") if i != "5"]
    assert sorted(hit["objectID"] for hit in result["hits"]) == ["1", "9"]
    assert all("_score" not in hit and "_highlightResult" not in hit
               for hit in result["hits"])
    assert (result["nbHits"], result["nbPages"], result["hitsPerPage"]) == (2, 1, 3)

    # two recommendations in Asia, then Europe's records as the fallback search ranks them
    # (neither the record nor a recommendation), with the attributes queryParameters asks
    response = recommend(client, objectID="2", maxRecommendations=4, queryParameters={
        "filters": "region:Asia", "attributesToRetrieve": ["name", "region"]},
        fallbackParameters={"filters": "region:Europe"})
    assert response.status_code == 200, response.text
    check("recommend", "recommendations.response", response.json())
    hits = response.json()["results"][0]["hits"]
    asia = nearest(cosines, "2", lambda row: row[2] == "Asia")
    assert [hit["objectID"] for hit in hits] == \
        [*asia, *[i for i in searched(client, filters="region:Europe") if i != "2"][:2]]
    assert all("_score" in hit for hit in hits[:2]) and len(asia) == 2
    assert all(set(hit) == {"objectID", "name", "region"} and hit["region"] == "Europe"
               for hit in hits[2:])

    # enough recommendations: no fallback
    enough = recommend(client, objectID="1", maxRecommendations=3,
                       fallbackParameters={"query": "town"})
    assert ids_of(enough) == nearest(cosines, "1")[:3]
    assert all("_score" in hit for hit in enough.json()["results"][0]["hits"])


def ids_of(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [hit["objectID"] for hit in response.json()["results"][0]["hits"]]


def test_fallback_parameters_refusals(client: TestClient[Any]) -> None:
    # not a fallback parameter of the specification either (the request is not checked)
    paged = client.post("/1/indexes/*/recommendations", json={"requests": [
        {"indexName": "places", "model": "looking-similar", "objectID": "1", "threshold": 100,
         "fallbackParameters": {"query": "town", "hitsPerPage": 5}}]})
    assert paged.status_code == 400
    assert "requests[0].fallbackParameters.hitsPerPage" in paged.json()["message"]
    check("recommend", "error.response", paged.json())
    not_object = client.post("/1/indexes/*/recommendations", json={"requests": [
        {"indexName": "places", "model": "looking-similar", "objectID": "1", "threshold": 0,
         "fallbackParameters": "query=town"}]})
    assert not_object.status_code == 400
    assert "fallbackParameters must be an object" in not_object.json()["message"]
    unknown = recommend(client, objectID="1", threshold=100,
                        fallbackParameters={"filters": "nosuch:x"})
    assert unknown.status_code == 400, unknown.text
    assert unknown.json()["message"].startswith("requests[0].fallbackParameters: ")
    assert "nosuch" in unknown.json()["message"]


def _hits_kept(client: TestClient[Any]) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith('searchport_cache_lookups_total{result="hit"}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_similar_answers_are_kept_as_searches_documents_are_not(
        client: TestClient[Any]) -> None:
    before = _hits_kept(client)
    first = client.get("/places/documents/5/similar", params={"perPage": 4})
    again = client.get("/places/documents/5/similar", params={"perPage": 4})
    assert again.content == first.content
    assert _hits_kept(client) == before + 1  # the second answer was the kept one
    client.get("/places/documents/5")
    client.get("/places/documents/5")
    assert _hits_kept(client) == before + 1  # cache.documents is off


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Any]]:
    """The places behind keys: ``europe`` reads only the European ones."""
    require_model()
    base = tmp_path_factory.mktemp("similar-keys")
    source = base / "places.jsonl"
    source.write_text("".join(json.dumps({"id": i, "name": n, "region": r, "description": d})
                              + "\n" for i, n, r, d in ROWS), "utf-8")
    config = msgspec.convert({
        "analytics": {"backend": "none"}, "apiKey": "admin-key",
        "keys": {"europe": {"key": "europe-key",
                            "filters": {"places": {"region": "Europe"}}}},
        "indexes": {"places": {
            "engine": "tantivy", "path": str(base / "index"), "source": str(source),
            "fields": {"name": {"type": "text", "weight": 3},
                       "description": {"type": "text", "searchable": True},
                       "region": {"type": "keyword"}},
            "semantic": {"fields": ["name", "description"]}}},
    }, Config)
    with TestClient(create_app(create_container(config, base))) as served:
        yield served


def test_a_keys_forced_filters_hold(keyed: TestClient[Any],
                                    cosines: dict[str, dict[str, float]]) -> None:
    europe = {"Authorization": "Bearer europe-key"}
    hidden = keyed.get("/places/documents/4/similar", headers=europe)  # Las Vegas
    assert hidden.status_code == 404, hidden.text
    shown = keyed.get("/places/documents/1/similar", headers=europe, params={"perPage": 20})
    assert ids(shown) == nearest(cosines, "1", lambda row: row[2] == "Europe")
    admin = keyed.get("/places/documents/4/similar", params={"perPage": 20},
                      headers={"Authorization": "Bearer admin-key"})
    assert ids(admin) == nearest(cosines, "4")
    body = {"requests": [{"indexName": "places", "model": "looking-similar",
                          "objectID": "1", "threshold": 0}]}
    recommended = keyed.post("/1/indexes/*/recommendations", json=body, headers=europe)
    assert [hit["objectID"] for hit in recommended.json()["results"][0]["hits"]] == \
        nearest(cosines, "1", lambda row: row[2] == "Europe")
    # the fallback search is held to the key's filters too: of the towns (Brighton, Oxford,
    # Aspen), Oxford alone is another European one
    fallback = {"requests": [{"indexName": "places", "model": "looking-similar",
                              "objectID": "1", "threshold": 100,
                              "fallbackParameters": {"query": "town"}}]}
    filled = keyed.post("/1/indexes/*/recommendations", json=fallback, headers=europe)
    assert [hit["objectID"] for hit in filled.json()["results"][0]["hits"]] == ["5"]
    body["requests"][0]["objectID"] = "4"
    assert keyed.post("/1/indexes/*/recommendations", json=body,
                      headers=europe).status_code == 404
