"""The stock Python ``algoliasearch`` client's Recommend client (v4) against a real
``searchport serve`` with the builtin embedder: ``get_recommendations`` with the
looking-similar model reads the records nearest in meaning, ``fallbackParameters`` fill
the rest with a search's hits, and a model searchport does not serve is an error the client
reports."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from algoliasearch.http.exceptions import RequestException
from algoliasearch.http.hosts import Host, HostsCollection
from algoliasearch.recommend.client import RecommendClientSync
from algoliasearch.recommend.config import RecommendConfig

from tests.e2e.conftest import Server
from tests.integration.test_tantivy_hybrid import PLACES
from tests.semantic_model import require_model


@pytest.fixture(scope="module")
def client(server_factory: Callable[..., Server],
           tmp_path_factory: pytest.TempPathFactory) -> RecommendClientSync:
    require_model()
    base: Path = tmp_path_factory.mktemp("recommend")
    source = base / "places.jsonl"
    source.write_text("".join(json.dumps({"id": i, "name": n, "region": r, "description": d})
                              + "\n" for i, n, r, d in PLACES), "utf-8")
    server = server_factory(f"""
analytics: {{backend: none}}
indexes:
  places:
    engine: tantivy
    path: {base / "index"}
    source: {source}
    fields:
      name: {{type: text, weight: 3}}
      description: {{type: text, searchable: true}}
      region: {{type: keyword}}
    semantic:
      fields: [name, description]
""")
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    config = RecommendConfig("any-app-id", "any-key")
    config.hosts = HostsCollection([Host(url=host, port=int(port), scheme="http")])
    return RecommendClientSync.create_with_config(config)


def test_get_recommendations_looking_similar(client: RecommendClientSync) -> None:
    answer = client.get_recommendations({"requests": [
        {"indexName": "places", "model": "looking-similar", "objectID": "2",
         "threshold": 0, "maxRecommendations": 3},
        {"indexName": "places", "model": "looking-similar", "objectID": "2",
         "threshold": 0, "queryParameters": {"filters": "region:Asia"}},
    ]})
    first, asia = answer.results
    ids = [hit.actual_instance.object_id for hit in first.hits]
    assert len(ids) == 3 and "2" not in ids
    assert "9" in ids  # Aspen's ski slopes, near Zermatt's skiing
    scores = [hit.actual_instance.score for hit in first.hits]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 100 for s in scores)
    assert first.nb_hits == 3 and first.hits_per_page == 3
    assert {hit.actual_instance.object_id for hit in asia.hits} == {"8", "10"}


def test_a_model_not_served_is_a_400(client: RecommendClientSync) -> None:
    with pytest.raises(RequestException) as caught:
        client.get_recommendations({"requests": [
            {"indexName": "places", "model": "bought-together", "objectID": "2",
             "threshold": 0}]})
    assert caught.value.status_code == 400 and "looking-similar" in str(caught.value)


def test_fallback_parameters_fill_the_recommendations(client: RecommendClientSync) -> None:
    # Zermatt (2): its two nearest in Asia, then the fallback search's records of Europe
    # (the record itself left out), as many as maxRecommendations leaves room for
    answer = client.get_recommendations({"requests": [
        {"indexName": "places", "model": "looking-similar", "objectID": "2",
         "threshold": 0, "maxRecommendations": 5,
         "queryParameters": {"filters": "region:Asia"},
         "fallbackParameters": {"filters": "region:Europe"}},
        {"indexName": "places", "model": "looking-similar", "objectID": "5",
         "threshold": 100, "maxRecommendations": 3,
         "fallbackParameters": {"query": "town"}},
    ]})
    filled, towns = answer.results
    hits = [hit.actual_instance for hit in filled.hits]
    europe = {i for i, _, region, _ in PLACES if region == "Europe"} - {"2"}
    assert {hit.object_id for hit in hits[:2]} == {"8", "10"}
    assert all(hit.score is not None and hit.score > 0 for hit in hits[:2])
    assert len(hits) == 5 and {hit.object_id for hit in hits[2:]} <= europe
    assert all(hit.score is None for hit in hits[2:])
    assert filled.nb_hits == 5
    # no record is as near as a threshold of 100: the search for "town" alone, but Oxford
    town = {i for i, n, _, d in PLACES if "town" in f"{n} {d}".lower().split()} - {"5"}
    assert {hit.actual_instance.object_id for hit in towns.hits} == town == {"1", "9"}
