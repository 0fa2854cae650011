"""What the search use cases leave in the query log, through a real recorder over a fake
store: one record per search (each query of an Algolia multi-query), nothing with
``analytics=false``, a ``queryID`` in the answer with ``clickAnalytics``."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest

from searchport.domain.access import Access, filters_by_handle
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.analytics.records import (
    Refinement,
    Tracking,
    Visitor,
    pseudonym,
    with_query_id,
)
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import FieldConfig, IndexConfig
from searchport.domain.response_cache import ResponseCache
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
                                                   FakeAnalyticsStore, ResponseCache]:
    config = IndexConfig(engine="tantivy", path="idx", fields=FIELDS)
    catalog = Catalog({h: IndexEntry(h, config, FakeEngine(result=RESULT))
                       for h in ("books", "films")})
    store = FakeAnalyticsStore()
    recorder = AnalyticsRecorder(store=store)
    responses = ResponseCache(cache=cache or FakeCache(status="disabled"))
    return catalog, recorder, store, responses


def today_salt() -> bytes:
    return f"salt-{datetime.now(UTC).date()}".encode()


async def test_a_search_is_logged_with_its_refinements() -> None:
    catalog, recorder, store, responses = setup()
    search = Search(catalog=catalog, responses=responses, recorder=recorder)
    visitor = Visitor(client="198.51.100.9", started=None)
    encoded = await search(SearchRequest(
        handle="books", q="  The DUNE ", page=2, per_page=5,
        filters='{"genre": ["sf", "space"], "year": {"min": 1960}}',
        tracking=Tracking(tags=("web",))), Access(), visitor)
    assert "queryID" not in json.loads(encoded.body)
    (record,) = store.searches
    assert (record.handle, record.query, record.nb_hits, record.page, record.tags,
            record.query_id) == ("books", "the dune", 42, 1, ("web",), None)
    assert record.refinements == (Refinement("genre", ":", "sf"),
                                  Refinement("genre", ":", "space"),
                                  Refinement("year", ">=", "1960"))
    assert record.user_token == pseudonym("198.51.100.9", record.day, today_salt())


async def test_forced_filters_are_not_the_users_refinements() -> None:
    catalog, recorder, store, responses = setup()
    search = Search(catalog=catalog, responses=responses, recorder=recorder)
    restricted = Access(forced=filters_by_handle({"*": {"genre": "sf"}}), filtered=True)
    await search(SearchRequest(handle="books", q="x"), restricted)
    assert store.searches[0].refinements == ()
    engine_query = catalog["books"].engine.queries[-1]  # type: ignore[attr-defined]
    assert engine_query.filters  # the forced filter did reach the engine


async def test_click_analytics_gives_a_query_id_in_the_answer_and_the_log() -> None:
    catalog, recorder, store, responses = setup()
    search = Search(catalog=catalog, responses=responses, recorder=recorder)
    tracked = Tracking(click_analytics=True, user_token="user-7")
    first = json.loads((await search(SearchRequest(handle="books", q="a",
                                                   tracking=tracked))).body)
    second = json.loads((await search(SearchRequest(handle="books", q="a",
                                                    tracking=tracked))).body)
    assert first["totalHits"] == 42 and len(first["queryID"]) == 32
    assert first["queryID"] != second["queryID"]
    assert [(r.query_id, r.user_token) for r in store.searches] == [
        (first["queryID"], "user-7"), (second["queryID"], "user-7")]


async def test_a_query_id_encoded_with_the_answer_is_where_it_is_added_to_shared_bytes(
) -> None:
    """The answer of a search alone is encoded with its queryID: the JSON API's and the
    autocomplete's are the same bytes as the shared answer with it added at the end; the
    Algolia answer has it last too, and is otherwise the answer without it."""
    catalog, recorder, store, responses = setup()
    search = Search(catalog=catalog, responses=responses, recorder=recorder)
    autocomplete = Autocomplete(catalog=catalog, responses=responses, recorder=recorder)
    algolia = AlgoliaSearch(catalog=catalog, responses=responses, recorder=recorder)
    tracked = Tracking(click_analytics=True)
    plain = (await search(SearchRequest(handle="books", q="a"))).body
    mine = await search(SearchRequest(handle="books", q="a", tracking=tracked))
    assert mine.alone
    assert mine.body == with_query_id(plain, json.loads(mine.body)["queryID"])
    plain = (await autocomplete(AutocompleteRequest(handle="films", q="dun"))).body
    mine = await autocomplete(AutocompleteRequest(handle="films", q="dun", tracking=tracked))
    assert mine.alone
    assert mine.body == with_query_id(plain, json.loads(mine.body)["queryID"])
    asked = {"requests": [{"indexName": "books", "query": "dune"}]}
    (plain,) = await algolia(multi_queries(json.dumps(asked).encode()).queries)
    asked["requests"][0]["params"] = "clickAnalytics=true"
    (mine,) = await algolia(multi_queries(json.dumps(asked).encode()).queries)
    mine_answer, plain_answer = json.loads(mine), json.loads(plain)
    assert list(mine_answer)[-1] == "queryID" and len(mine_answer.pop("queryID")) == 32
    assert plain_answer.pop("params") != mine_answer.pop("params")  # clickAnalytics echoed
    assert mine_answer == plain_answer
    assert [r.query_id is not None for r in store.searches] == [
        False, True, False, True, False, True]


async def test_identical_searches_at_once_each_get_a_query_id_of_their_own() -> None:
    """Searches that share one computation (single flight) each get and log their own
    queryID, added to the shared bytes; with a cache, what is stored holds none."""
    for cache in (None, FakeCache(status="memory")):
        catalog, recorder, store, responses = setup(cache)
        search = Search(catalog=catalog, responses=responses, recorder=recorder)
        engine = catalog["books"].engine
        tracked = Tracking(click_analytics=True)
        answers = await asyncio.gather(*(
            search(SearchRequest(handle="books", q="same", tracking=tracked))
            for _ in range(4)))
        ids = [json.loads(a.body)["queryID"] for a in answers]
        assert len(set(ids)) == 4 and all(len(i) == 32 for i in ids)
        assert len(engine.queries) == 1  # type: ignore[attr-defined]
        assert sorted(r.query_id or "" for r in store.searches) == sorted(ids)
        if cache is not None:
            (stored,) = cache.entries.values()
            assert "queryID" not in json.loads(stored)


async def test_analytics_false_logs_nothing_but_still_gives_a_query_id() -> None:
    catalog, recorder, store, responses = setup()
    search = Search(catalog=catalog, responses=responses, recorder=recorder)
    body = json.loads((await search(SearchRequest(handle="books", q="a", tracking=Tracking(
        analytics=False, click_analytics=True)))).body)
    assert store.searches == [] and len(body["queryID"]) == 32


async def test_a_cached_answer_is_logged_with_its_hit_count() -> None:
    catalog, recorder, store, responses = setup(FakeCache(status="memory"))
    search = Search(catalog=catalog, responses=responses, recorder=recorder)
    first = await search(SearchRequest(handle="books", q="a"))
    second = await search(SearchRequest(handle="books", q="a"))
    assert (first.cache, second.cache) == ("miss", "hit")
    assert [r.nb_hits for r in store.searches] == [42, 42]


async def test_the_header_token_and_an_invalid_token() -> None:
    catalog, recorder, store, responses = setup()
    search = Search(catalog=catalog, responses=responses, recorder=recorder)
    await search(SearchRequest(handle="books", q="a"), visitor=Visitor(user_token="hdr-1"))
    await search(SearchRequest(handle="books", q="a", tracking=Tracking(user_token="param-2")),
                 visitor=Visitor(user_token="hdr-1"))
    await search(SearchRequest(handle="books", q="a", tracking=Tracking(user_token="a b")),
                 visitor=Visitor(client="203.0.113.1"))
    tokens = [r.user_token for r in store.searches]
    assert tokens[:2] == ["hdr-1", "param-2"]  # the parameter wins over the header
    assert tokens[2] == pseudonym("203.0.113.1", store.searches[2].day, today_salt())


async def test_autocomplete_is_logged() -> None:
    catalog, recorder, store, responses = setup()
    autocomplete = Autocomplete(catalog=catalog, responses=responses, recorder=recorder)
    body = json.loads((await autocomplete(AutocompleteRequest(
        handle="films", q="Dun", tracking=Tracking(click_analytics=True)))).body)
    (record,) = store.searches
    assert (record.handle, record.query, record.nb_hits, record.query_id) == (
        "films", "dun", 42, body["queryID"])


async def test_each_query_of_an_algolia_multi_query_is_logged() -> None:
    catalog, recorder, store, responses = setup()
    algolia = AlgoliaSearch(catalog=catalog, responses=responses, recorder=recorder)
    call = multi_queries(json.dumps({"requests": [
        {"indexName": "books", "params": "query=Dune&page=1&hitsPerPage=2&clickAnalytics=true"
                                         "&analyticsTags=%5B%22web%22%5D&userToken=u-1"},
        {"indexName": "films", "query": "Alien", "facetFilters": [["genre:sf"]]},
        {"indexName": "books", "query": "quiet", "analytics": False},
        {"indexName": "books", "type": "facet", "facet": "genre", "facetQuery": "s"},
    ]}).encode())
    answers = [json.loads(a) for a in await algolia(call.queries,
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
    catalog, _, store, responses = setup()
    recorder = AnalyticsRecorder(store=store, enabled=False)
    search = Search(catalog=catalog, responses=responses, recorder=recorder)
    body = json.loads((await search(SearchRequest(handle="books", q="a", tracking=Tracking(
        click_analytics=True)))).body)
    assert "queryID" not in body and store.searches == []
