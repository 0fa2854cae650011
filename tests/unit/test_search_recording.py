"""What the search use cases leave in the query log, through a real recorder over a fake
store: one record per search (each query of an Algolia multi-query), nothing with
``analytics=false``, a ``queryID`` in the answer with ``clickAnalytics``; the engines behind
the cache, as the container wires them."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import msgspec
import pytest

from searchport.adapters.cache.engine_cache import EngineCache
from searchport.domain.access import Access, filters_by_handle
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.analytics.records import Refinement, Tracking, Visitor, pseudonym
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import FieldConfig, IndexConfig
from searchport.domain.results import EngineResult, Hit
from searchport.domain.search_request import SearchRequest
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.autocomplete import Autocomplete, AutocompleteRequest
from searchport.domain.usecases.search import Search
from searchport.entrypoints.algolia.requests import multi_queries
from tests.fakes import FakeAnalyticsStore, FakeCache, FakeEngine

pytestmark = pytest.mark.anyio

FIELDS = {"name": FieldConfig(weight=3), "genre": FieldConfig(field="genre_kw"),
          "year": FieldConfig(type="integer")}
RESULT = EngineResult(hits=[Hit(id=str(n), index="books", source={"name": f"n{n}"})
                            for n in range(3)], total=42)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def setup(cache: FakeCache | None = None) -> tuple[Catalog, AnalyticsRecorder,
                                                   FakeAnalyticsStore, list[FakeEngine]]:
    config = IndexConfig(engine="tantivy", path="idx", fields=FIELDS)
    engines = [FakeEngine(result=RESULT) for _ in range(2)]
    kept = EngineCache(cache=cache or FakeCache(status="disabled"))
    catalog = Catalog({h: IndexEntry(h, config, kept.around(engine, h, config))
                       for h, engine in zip(("books", "films"), engines, strict=True)})
    store = FakeAnalyticsStore()
    recorder = AnalyticsRecorder(store=store)
    return catalog, recorder, store, engines


def body(answer: object) -> dict[str, object]:
    """An answer as the HTTP layer sends it."""
    decoded: dict[str, object] = msgspec.json.decode(msgspec.json.encode(answer))
    return decoded


def today_salt() -> bytes:
    return f"salt-{datetime.now(UTC).date()}".encode()


async def test_a_search_is_logged_with_its_refinements() -> None:
    catalog, recorder, store, _ = setup()
    search = Search(catalog=catalog, recorder=recorder)
    visitor = Visitor(client="198.51.100.9", started=None)
    answer = await search(SearchRequest(
        handle="books", q="  The DUNE ", page=2, per_page=5,
        filters='{"genre": ["sf", "space"], "year": {"min": 1960}}',
        tracking=Tracking(tags=("web",))), Access(), visitor)
    assert "queryID" not in body(answer)
    (record,) = store.searches
    assert (record.handle, record.query, record.nb_hits, record.page, record.tags,
            record.query_id) == ("books", "the dune", 42, 1, ("web",), None)
    assert record.refinements == (Refinement("genre", ":", "sf"),
                                  Refinement("genre", ":", "space"),
                                  Refinement("year", ">=", "1960"))
    assert record.user_token == pseudonym("198.51.100.9", record.day, today_salt())


async def test_forced_filters_are_not_the_users_refinements() -> None:
    catalog, recorder, store, engines = setup()
    search = Search(catalog=catalog, recorder=recorder)
    restricted = Access(forced=filters_by_handle({"*": {"genre": "sf"}}), filtered=True)
    await search(SearchRequest(handle="books", q="x"), restricted)
    assert store.searches[0].refinements == ()
    engine_query = engines[0].queries[-1]
    assert engine_query.filters  # the forced filter did reach the engine


async def test_click_analytics_gives_a_query_id_in_the_answer_and_the_log() -> None:
    catalog, recorder, store, _ = setup()
    search = Search(catalog=catalog, recorder=recorder)
    tracked = Tracking(click_analytics=True, user_token="user-7")
    first = body(await search(SearchRequest(handle="books", q="a", tracking=tracked)))
    second = body(await search(SearchRequest(handle="books", q="a", tracking=tracked)))
    assert first["totalHits"] == 42 and len(first["queryID"]) == 32
    assert first["queryID"] != second["queryID"]
    assert [(r.query_id, r.user_token) for r in store.searches] == [
        (first["queryID"], "user-7"), (second["queryID"], "user-7")]


async def test_the_query_id_is_the_last_member_of_every_search_answer() -> None:
    """The queryID is a field of the answer, encoded last: the JSON API's, the
    autocomplete's and the Algolia answer are otherwise the answer without it."""
    catalog, recorder, store, _ = setup()
    search = Search(catalog=catalog, recorder=recorder)
    autocomplete = Autocomplete(catalog=catalog, recorder=recorder)
    algolia = AlgoliaSearch(catalog=catalog, recorder=recorder)
    tracked = Tracking(click_analytics=True)
    for plain, mine in [
        (body(await search(SearchRequest(handle="books", q="a"))),
         body(await search(SearchRequest(handle="books", q="a", tracking=tracked)))),
        (body(await autocomplete(AutocompleteRequest(handle="films", q="dun"))),
         body(await autocomplete(AutocompleteRequest(handle="films", q="dun",
                                                     tracking=tracked)))),
    ]:
        assert list(mine)[-1] == "queryID" and len(str(mine.pop("queryID"))) == 32
        assert mine == plain
    asked: dict[str, list[dict[str, str]]] = {
        "requests": [{"indexName": "books", "query": "dune"}]}
    (plain_answer,) = await algolia(multi_queries(json.dumps(asked).encode()).queries)
    asked["requests"][0]["params"] = "clickAnalytics=true"
    (mine_answer,) = await algolia(multi_queries(json.dumps(asked).encode()).queries)
    mine, plain = body(mine_answer), body(plain_answer)
    assert list(mine)[-1] == "queryID" and len(str(mine.pop("queryID"))) == 32
    assert plain.pop("params") != mine.pop("params")  # clickAnalytics echoed
    mine.pop("processingTimeMS"), plain.pop("processingTimeMS")
    assert mine == plain
    assert [r.query_id is not None for r in store.searches] == [
        False, True, False, True, False, True]


async def test_identical_searches_at_once_each_get_a_query_id_of_their_own() -> None:
    """Searches that share one engine call (single flight) each get and log their own
    queryID; with a cache, what is stored is the engine's answer, which holds none."""
    for cache in (None, FakeCache(status="memory")):
        catalog, recorder, store, engines = setup(cache)
        search = Search(catalog=catalog, recorder=recorder)
        tracked = Tracking(click_analytics=True)
        answers = await asyncio.gather(*(
            search(SearchRequest(handle="books", q="same", tracking=tracked))
            for _ in range(4)))
        ids = [body(a)["queryID"] for a in answers]
        assert len(set(ids)) == 4 and all(len(str(i)) == 32 for i in ids)
        assert len(engines[0].queries) == 1
        assert sorted(r.query_id or "" for r in store.searches) == sorted(map(str, ids))
        if cache is not None:
            (stored,) = cache.entries.values()
            assert b"queryID" not in stored


async def test_analytics_false_logs_nothing_but_still_gives_a_query_id() -> None:
    catalog, recorder, store, _ = setup()
    search = Search(catalog=catalog, recorder=recorder)
    answer = body(await search(SearchRequest(handle="books", q="a", tracking=Tracking(
        analytics=False, click_analytics=True))))
    assert store.searches == [] and len(str(answer["queryID"])) == 32


async def test_a_cached_answer_is_logged_with_its_hit_count() -> None:
    catalog, recorder, store, engines = setup(FakeCache(status="memory"))
    search = Search(catalog=catalog, recorder=recorder)
    await search(SearchRequest(handle="books", q="a"))
    await search(SearchRequest(handle="books", q="a"))
    assert len(engines[0].queries) == 1  # the second answered from the cache
    assert [r.nb_hits for r in store.searches] == [42, 42]


async def test_the_header_token_and_an_invalid_token() -> None:
    catalog, recorder, store, _ = setup()
    search = Search(catalog=catalog, recorder=recorder)
    await search(SearchRequest(handle="books", q="a"), visitor=Visitor(user_token="hdr-1"))
    await search(SearchRequest(handle="books", q="a", tracking=Tracking(user_token="param-2")),
                 visitor=Visitor(user_token="hdr-1"))
    await search(SearchRequest(handle="books", q="a", tracking=Tracking(user_token="a b")),
                 visitor=Visitor(client="203.0.113.1"))
    tokens = [r.user_token for r in store.searches]
    assert tokens[:2] == ["hdr-1", "param-2"]  # the parameter wins over the header
    assert tokens[2] == pseudonym("203.0.113.1", store.searches[2].day, today_salt())


async def test_autocomplete_is_logged() -> None:
    catalog, recorder, store, _ = setup()
    autocomplete = Autocomplete(catalog=catalog, recorder=recorder)
    answer = body(await autocomplete(AutocompleteRequest(
        handle="films", q="Dun", tracking=Tracking(click_analytics=True))))
    (record,) = store.searches
    assert (record.handle, record.query, record.nb_hits, record.query_id) == (
        "films", "dun", 42, answer["queryID"])


async def test_each_query_of_an_algolia_multi_query_is_logged() -> None:
    catalog, recorder, store, _ = setup()
    algolia = AlgoliaSearch(catalog=catalog, recorder=recorder)
    call = multi_queries(json.dumps({"requests": [
        {"indexName": "books", "params": "query=Dune&page=1&hitsPerPage=2&clickAnalytics=true"
                                         "&analyticsTags=%5B%22web%22%5D&userToken=u-1"},
        {"indexName": "films", "query": "Alien", "facetFilters": [["genre:sf"]]},
        {"indexName": "books", "query": "quiet", "analytics": False},
        {"indexName": "books", "type": "facet", "facet": "genre", "facetQuery": "s"},
    ]}).encode())
    answers = [body(a) for a in await algolia(call.queries,
                                              visitor=Visitor(client="192.0.2.5"))]
    assert len(answers[0]["queryID"]) == 32
    assert all("queryID" not in a for a in answers[1:])
    logged = [(r.handle, r.query, r.page, r.nb_hits, r.tags, r.query_id, r.refinements)
              for r in store.searches]
    assert logged == [
        ("books", "dune", 1, 42, ("web",), answers[0]["queryID"], ()),
        ("films", "alien", 0, 42, (), None, (Refinement("genre", ":", "sf"),)),
    ]
    assert store.searches[0].user_token == "u-1"


async def test_a_disabled_recorder_gives_no_query_id() -> None:
    catalog, _, store, _ = setup()
    recorder = AnalyticsRecorder(store=store, enabled=False)
    search = Search(catalog=catalog, recorder=recorder)
    answer = body(await search(SearchRequest(handle="books", q="a", tracking=Tracking(
        click_analytics=True))))
    assert "queryID" not in answer and store.searches == []
