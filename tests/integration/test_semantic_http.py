"""``GET /:handle/search?semantic=`` through the real app, over a real tantivy index with
the real builtin model: a hybrid answer, the parameter's bounds, a request without it as
before, and an embedder that fails or is late degrading the answer to words with
``X-Searchport-Semantic: degraded`` (never a 5xx), kept by no cache."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.domain.config import Config
from searchport.domain.errors import EngineUnavailable
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.integration.test_tantivy_hybrid import PLACES
from tests.semantic_model import require_model


class Broken:
    """An embedder that is down (``delay``: or late) for the test's switch."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.down = False
        self.delay = 0.0

    @property
    def model(self) -> str:
        return str(self.real.model)

    async def start(self) -> None:
        await self.real.start()

    async def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.down:
            raise EngineUnavailable("The embedder is down")
        return list(await self.real.embed(texts))

    async def close(self) -> None:
        await self.real.close()


def served_with_broken(container: Any, handle: str = "places"
                       ) -> Iterator[tuple[TestClient[Any], Broken]]:
    """The app over ``container``, ``handle``'s embedder behind a ``Broken`` switch."""
    meanings = container.catalog()[handle].meanings
    assert meanings is not None
    broken = Broken(meanings.embedder)
    meanings.embedder = broken
    with TestClient(create_app(container)) as client:
        yield client, broken


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient[Any], Broken]]:
    require_model()
    base = tmp_path_factory.mktemp("semantic-http")
    source = base / "places.jsonl"
    source.write_text("".join(json.dumps({"id": i, "name": n, "region": r, "description": d})
                              + "\n" for i, n, r, d in PLACES), "utf-8")
    config = msgspec.convert({
        "cache": {"backend": "memory"}, "analytics": {"backend": "none"},
        "indexes": {"places": {
            "engine": "tantivy", "path": str(base / "index"), "source": str(source),
            "fields": {"name": {"type": "text", "weight": 3},
                       "description": {"type": "text", "searchable": True},
                       "region": {"type": "keyword"}},
            "semantic": {"fields": ["name", "description"], "timeout": 0.3},
        }},
    }, Config)
    yield from served_with_broken(create_container(config, base))


def names(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [hit["name"] for hit in response.json()["hits"]]


def test_a_hybrid_search_finds_by_meaning(served: tuple[TestClient[Any], Broken]) -> None:
    client, _ = served
    words = client.get("/places/search", params={"q": "where are movies made"})
    assert words.json()["totalHits"] == 0
    hybrid = client.get("/places/search", params={"q": "where are movies made",
                                                   "semantic": "0.5", "facets": "region"})
    assert names(hybrid)[0] == "Mumbai"
    assert "x-searchport-semantic" not in hybrid.headers
    body = hybrid.json()
    # words find nothing: the places similar enough to weigh in (the builtin floor), and
    # meaning alone brings every place
    assert 0 < body["totalHits"] < len(PLACES)
    assert sum(v["count"] for v in body["facets"]["region"]) == body["totalHits"]
    alone = client.get("/places/search", params={"q": "where are movies made",
                                                  "semantic": "1", "perPage": "20"})
    assert names(alone)[0] == "Mumbai" and alone.json()["totalHits"] == len(PLACES)


def test_a_search_without_semantic_is_the_keyword_search(
        served: tuple[TestClient[Any], Broken]) -> None:
    client, _ = served
    plain = client.get("/places/search", params={"q": "oxford"})
    zero = client.get("/places/search", params={"q": "oxford", "semantic": "0"})
    assert plain.json() == zero.json()
    assert names(plain) == ["Oxford"] and plain.json()["totalHits"] == 1


@pytest.mark.parametrize("value", ["-0.1", "1.5", "much"])
def test_a_share_outside_0_to_1_is_a_400(served: tuple[TestClient[Any], Broken],
                                         value: str) -> None:
    client, _ = served
    response = client.get("/places/search", params={"q": "x", "semantic": value})
    assert response.status_code == 400
    assert "semantic" in response.json()["error"]


@pytest.mark.parametrize("how", ["down", "late"])
def test_a_failing_embedder_degrades_to_words_with_a_header(
        served: tuple[TestClient[Any], Broken], how: str) -> None:
    client, broken = served
    query = {"q": f"a city with casinos {how}", "semantic": "0.7"}
    words = client.get("/places/search", params={"q": query["q"]})
    broken.down, broken.delay = how == "down", 1.0 if how == "late" else 0.0
    try:
        degraded = client.get("/places/search", params=query)
        again = client.get("/places/search", params=query)
    finally:
        broken.down, broken.delay = False, 0.0
    for response in (degraded, again):  # the second one was not served from a cache
        assert response.status_code == 200
        assert response.headers["x-searchport-semantic"] == "degraded"
        assert response.headers["cache-control"] == "no-store"
        assert response.json()["hits"] == words.json()["hits"]
    recovered = client.get("/places/search", params=query)
    assert "x-searchport-semantic" not in recovered.headers
    assert names(recovered)[0] == "Las Vegas"
