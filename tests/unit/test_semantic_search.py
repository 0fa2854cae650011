"""The search use case with a handle that searches by meaning: when a query's vector is
computed, what the engine is asked, the cache of query vectors, and a failing or late
embedder degrading the search to words alone (fakes of the engine and the embedder)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import msgspec
import pytest

from searchport.adapters.cache.engine_cache import EngineCache
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import FieldConfig, IndexConfig, SemanticConfig
from searchport.domain.errors import EngineUnavailable, InvalidRequest
from searchport.domain.query import SearchQuery
from searchport.domain.responses import SearchResponse
from searchport.domain.results import EngineResult, Hit
from searchport.domain.search_request import SearchRequest
from searchport.domain.semantic import MeaningUnavailable, QueryMeanings
from searchport.domain.usecases.search import Search
from tests.fakes import FakeCache, FakeEmbedder, FakeEngine

T = TypeVar("T")


def sync(test: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    """An async test run to its end on a loop of its own."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> T:
        return asyncio.run(test(*args, **kwargs))

    return run


FIELDS = {"name": FieldConfig(type="text", weight=2), "region": FieldConfig(type="keyword")}


def _search(embedder: FakeEmbedder | None, *, ratio: float = 0.0, timeout: float = 1.0,
            cache: FakeCache | None = None) -> tuple[Search, FakeEngine]:
    semantic = None if embedder is None else SemanticConfig(fields=["name"], ratio=ratio,
                                                            timeout=timeout)
    config = IndexConfig(engine="tantivy", path="idx", fields=FIELDS, semantic=semantic)
    hit = Hit(id="1", index="places", source={"name": "abc"})
    engine = FakeEngine(result=EngineResult(hits=[hit], total=1))
    meanings = None if embedder is None else QueryMeanings(embedder, timeout=timeout)
    # with a cache, the engine behind it as the container wires it (CachedEngine)
    served = engine if cache is None else EngineCache(cache=cache).around(engine, "places",
                                                                          config)
    catalog = Catalog({"places": IndexEntry("places", config, served, meanings=meanings)})
    return Search(catalog=catalog), engine


def _sent(engine: FakeEngine) -> list[SearchQuery]:
    return [q for q in engine.queries if isinstance(q, SearchQuery)]


@sync
async def test_a_search_that_does_not_ask_for_meaning_computes_no_vector() -> None:
    embedder = FakeEmbedder()
    search, engine = _search(embedder)
    answer = await search(SearchRequest(handle="places", q="abc"))
    assert embedder.calls == []
    (query,) = _sent(engine)
    assert query.semantic == 0.0 and query.vector is None
    assert answer.degraded == ()


@sync
async def test_the_share_asked_for_and_the_query_vector_reach_the_engine() -> None:
    embedder = FakeEmbedder()
    search, engine = _search(embedder)
    await search(SearchRequest(handle="places", q="a bad cab", semantic=0.25))
    (query,) = _sent(engine)
    assert query.semantic == 0.25
    assert query.vector == FakeEmbedder.vector_of("a bad cab")
    assert embedder.calls == [["a bad cab"]]


@sync
async def test_the_handles_ratio_is_the_default_share() -> None:
    search, engine = _search(FakeEmbedder(), ratio=0.7)
    await search(SearchRequest(handle="places", q="cab"))
    await search(SearchRequest(handle="places", q="cab", semantic=0))
    first, second = _sent(engine)
    assert first.semantic == 0.7 and first.vector is not None
    assert second.semantic == 0.0 and second.vector is None


@sync
async def test_a_search_without_words_has_nothing_to_mean() -> None:
    embedder = FakeEmbedder()
    search, engine = _search(embedder, ratio=1.0)
    await search(SearchRequest(handle="places", q="  "))
    assert _sent(engine)[0].semantic == 0.0 and embedder.calls == []


@sync
async def test_a_query_text_is_embedded_once() -> None:
    embedder = FakeEmbedder()
    search, engine = _search(embedder)
    for page in (1, 2, 1):
        await search(SearchRequest(handle="places", q="cab", page=page, semantic=0.5))
    assert embedder.calls == [["cab"]]
    assert len(_sent(engine)) == 3
    # the kept vector is the one computed, to the last digit
    assert {q.vector for q in _sent(engine)} == {FakeEmbedder.vector_of("cab")}


@sync
async def test_the_vectors_kept_are_bounded() -> None:
    embedder = FakeEmbedder()
    meanings = QueryMeanings(embedder, timeout=1.0, size=2)
    for text in ("a", "b", "c", "a"):
        await meanings.vector(text)
    assert embedder.calls == [["a"], ["b"], ["c"], ["a"]]  # "a" was the oldest, let go


@pytest.mark.parametrize("embedder", [
    FakeEmbedder(fail=EngineUnavailable("The embeddings engine cannot be reached")),
    FakeEmbedder(fail=RuntimeError("a bug")),
    FakeEmbedder(delay=0.5),
], ids=["unavailable", "bug", "late"])
@sync
async def test_an_embedder_that_fails_or_is_late_degrades_to_words(
        embedder: FakeEmbedder) -> None:
    search, engine = _search(embedder, timeout=0.05)
    answer = await search(SearchRequest(handle="places", q="cab", semantic=0.5))
    assert answer.degraded == ("semantic",)
    (query,) = _sent(engine)
    assert query.semantic == 0.0 and query.vector is None  # the keyword search, as before
    assert isinstance(answer, SearchResponse) and answer.total_hits == 1


@sync
async def test_a_degraded_answer_is_not_kept_as_the_hybrid_one() -> None:
    cache = FakeCache()
    embedder = FakeEmbedder(fail=EngineUnavailable("down"))
    search, engine = _search(embedder, cache=cache)
    first = await search(SearchRequest(handle="places", q="cab", semantic=0.5))
    embedder.fail = None
    second = await search(SearchRequest(handle="places", q="cab", semantic=0.5))
    assert first.degraded == ("semantic",) and second.degraded == ()
    assert [q.semantic for q in _sent(engine)] == [0.0, 0.5]
    # the words-only answer was kept under the words-only key: a keyword search reuses it
    # (the engine behind the cache is not asked again)
    third = await search(SearchRequest(handle="places", q="cab"))
    assert len(_sent(engine)) == 2 and third.degraded == ()


@sync
async def test_an_answer_kept_for_a_text_serves_it_again_and_no_other_text() -> None:
    cache = FakeCache()
    search, engine = _search(FakeEmbedder(), cache=cache)
    for q in ("cab", "cab", "bad"):
        await search(SearchRequest(handle="places", q=q, semantic=0.5))
    await search(SearchRequest(handle="places", q="cab", semantic=0.5, page=2))
    assert [(q.text, q.offset) for q in _sent(engine)] == [("cab", 0), ("bad", 0),
                                                             ("cab", 20)]
    assert len(cache.entries) == 3


@sync
async def test_meaning_on_a_handle_without_semantic_is_a_400() -> None:
    search, _ = _search(None)
    with pytest.raises(InvalidRequest, match="semantic search is not configured"):
        await search(SearchRequest(handle="places", q="cab", semantic=0.5))
    await search(SearchRequest(handle="places", q="cab", semantic=0))  # 0 asks for nothing


@pytest.mark.parametrize("share", [-0.1, 1.5])
@sync
async def test_a_share_outside_0_to_1_is_a_400(share: float) -> None:
    search, _ = _search(FakeEmbedder())
    with pytest.raises(InvalidRequest, match="from 0"):
        await search(SearchRequest(handle="places", q="cab", semantic=share))


@sync
async def test_query_meanings_raise_meaning_unavailable_not_the_embedders_error() -> None:
    meanings = QueryMeanings(FakeEmbedder(fail=EngineUnavailable("down")), timeout=1.0)
    with pytest.raises(MeaningUnavailable):
        await meanings.vector("x")


@sync
async def test_joined_requests_share_one_embedding() -> None:
    embedder = FakeEmbedder(delay=0.05)
    search, _ = _search(embedder)
    request = SearchRequest(handle="places", q="cab", semantic=0.5)
    answers = await asyncio.gather(*(search(request) for _ in range(5)))
    assert embedder.calls == [["cab"]]
    assert len({msgspec.json.encode(a) for a in answers}) == 1


def test_a_query_with_a_vector_stays_a_msgspec_struct() -> None:
    query = SearchQuery(text="x", semantic=0.5, vector=(1.0, 0.0))
    assert msgspec.json.decode(msgspec.json.encode(query), type=SearchQuery) == query
