"""A suggestion's figures are those of the search a user sends for it: for a query of
several words, the Algolia search where every word must match. Built for real on each
engine the tests run (tantivy, a real Typesense server, a real OpenSearch node), from
searches logged in a real SQLite store; the expected totals and facet counts are computed
here in plain Python from the rows."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from searchport.adapters.config_loader import parse_config
from searchport.domain.analytics.records import SearchRecord
from searchport.domain.responses import SearchResponse
from searchport.domain.search_request import SearchRequest
from searchport.entrypoints.container import Container, create_container
from tests.edit_distance import edit_distance
from tests.servers import opensearch
from tests.typesense_server import TypesenseServer, session_server

pytestmark = pytest.mark.anyio

# no word is a prefix of another, nor within two typos of one
WORDS = ("castle", "garden", "river", "temple", "harbor", "lantern")
MEDIA = ("oil", "ink", "woodblock", "bronze", "photograph")
SEARCHED = {"castle garden": 5, "river temple lantern": 4, "harbor": 3}  # query -> times
AMOUNT = 3
SOURCE, SUGGESTIONS = "art", "art_query_suggestions"


def artworks() -> list[dict[str, Any]]:
    chance = random.Random(43)
    return [{"id": f"a{i}", "title": " ".join(chance.sample(WORDS, chance.randint(1, 3))),
             "medium": chance.choice(MEDIA)} for i in range(150)]


ROWS = artworks()


def matching(query: str, *, every_word: bool = True) -> list[dict[str, Any]]:
    asked = set(query.split())
    return [r for r in ROWS
            if (asked <= set(r["title"].split()) if every_word
                else asked & set(r["title"].split()))]


def figures(found: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    """The total and the top ``AMOUNT`` media (most frequent first, ties by value)."""
    counts = Counter(r["medium"] for r in found)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:AMOUNT]
    return len(found), [{"value": v, "count": c} for v, c in top]


def test_the_rows_tell_every_word_from_any_word() -> None:
    """The words cannot reach each other by prefix or typo, and a query of several words
    counts differently when every word must match."""
    for a, b in combinations(WORDS, 2):
        assert not a.startswith(b) and not b.startswith(a)
        assert edit_distance(a, b) > 2
    for query in SEARCHED:
        if len(query.split()) > 1:
            assert figures(matching(query)) != figures(matching(query, every_word=False))
            assert matching(query)


# ------------------------------------------------------------------ the source, per engine


@pytest.fixture(scope="module")
def typesense(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    server: TypesenseServer = session_server(request.config, tmp_path_factory)
    collection = "suggestion_facets"
    server.drop_collection(collection)
    server.create_collection({"name": collection, "fields": [
        {"name": "title", "type": "string"},
        {"name": "medium", "type": "string", "facet": True},
    ]}, ROWS)
    yield {"engine": "typesense", "host": server.url, "apiKey": server.api_key,
           "indexName": collection, "timeout": 5}
    server.drop_collection(collection)


@pytest.fixture(scope="module")
def opensearch_node(request: pytest.FixtureRequest) -> dict[str, Any]:
    node = opensearch.session_server(request.config)
    index = "suggestion_facets"
    with httpx.Client(base_url=node.url, timeout=30) as http:
        http.delete(f"/{index}")
        http.put(f"/{index}", json={
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {"properties": {"title": {"type": "text"},
                                        "medium": {"type": "keyword"}}},
        }).raise_for_status()
        lines = "".join(json.dumps({"index": {"_id": row["id"]}}) + "\n" + json.dumps(row)
                        + "\n" for row in ROWS)
        http.post(f"/{index}/_bulk", params={"refresh": "true"}, content=lines,
                  headers={"Content-Type": "application/x-ndjson"}).raise_for_status()
    return {"engine": "opensearch", "host": node.url, "indexName": index, "timeout": 5}


@pytest.fixture(params=["tantivy", "typesense", "opensearch"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    if request.param == "typesense":
        settings: dict[str, Any] = request.getfixturevalue("typesense")
        return settings
    if request.param == "opensearch":
        settings = request.getfixturevalue("opensearch_node")
        return settings
    data = tmp_path / "art.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return {"engine": "tantivy", "path": "indexes/art", "source": str(data), "idField": "id",
            "fields": {"title": {"type": "text"}, "medium": {"type": "keyword"}}}


@pytest.fixture
async def container(source: dict[str, Any], tmp_path: Path) -> AsyncIterator[Container]:
    config = parse_config(json.dumps({
        "indexes": {
            SOURCE: {**source, "typoTolerance": {"enabled": False}},
            SUGGESTIONS: {"engine": "querySuggestions", "source": SOURCE, "minCount": 2,
                          "minHits": 1, "facets": [{"attribute": "medium",
                                                    "amount": AMOUNT}]},
        },
        "analytics": {"backend": "sqlite"},
    }), {})
    made = create_container(config, tmp_path)
    for entry in made.catalog().values():
        await entry.engine.start()
    await made.analytics_store().open()
    try:
        yield made
    finally:
        for entry in made.catalog().values():
            await entry.engine.close()
        await made.analytics_store().close()


def logged(now: float) -> list[SearchRecord]:
    return [SearchRecord(at=now - 60 - i, handle=SOURCE, query=query, nb_hits=len(ROWS),
                         page=0, refinements=(), tags=(), user_token=f"user-{i}",
                         latency_ms=1.0, query_id=None)
            for query, times in SEARCHED.items() for i in range(times)]


async def test_suggestion_facets_are_those_of_the_search_for_the_suggestion(
        container: Container) -> None:
    await container.analytics_store().write_searches(logged(time.time()))
    (refresher,) = container.suggestions()
    assert await refresher.refresh()
    answer = await container.search()(SearchRequest(handle=SUGGESTIONS, per_page=100,
                                                    highlight="false"))
    assert isinstance(answer, SearchResponse)
    hits = msgspec.to_builtins(answer.hits)
    made = {hit["query"]: (hit[SOURCE]["exact_nb_hits"],
                           hit[SOURCE]["facets"]["exact_matches"]["medium"]) for hit in hits}
    assert made == {query: figures(matching(query)) for query in SEARCHED}
