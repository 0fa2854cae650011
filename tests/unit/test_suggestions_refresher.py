"""``SuggestionsRefresher`` and ``BuildSuggestions`` over fakes: what is asked of the
source, what reaches the index, and what a failing store or source leaves served."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from searchport.adapters.config_loader import parse_config
from searchport.domain.analytics.records import SearchRecord
from searchport.domain.errors import EngineUnavailable
from searchport.domain.results import EngineResult
from searchport.domain.suggestions.records import Suggestion
from searchport.domain.suggestions.refresher import SuggestionsRefresher
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.build_suggestions import BuildSuggestions
from searchport.entrypoints.algolia.suggestions import SuggestionSearch
from searchport.ports.analytics import AnalyticsStore
from searchport.ports.suggestions import SuggestionsIndex
from tests.fakes import FailingEngine, FakeAnalyticsStore, FakeEngine, fake_catalog

pytestmark = pytest.mark.anyio
NOW = 1_790_000_000.0

CONFIG = parse_config("""
indexes:
  books:
    engine: tantivy
    path: p
  books_query_suggestions:
    engine: querySuggestions
    source: books
    minCount: 2
    minHits: 3
""", {})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeSuggestionsIndex:
    """A ``SuggestionsIndex`` in a list."""

    def __init__(self, built: float | None = None) -> None:
        self.served: list[Suggestion] = []
        self.built = built
        self.reopened = 0

    async def built_at(self) -> float | None:
        return self.built

    async def reopen(self) -> None:
        self.reopened += 1

    async def replace(self, suggestions: Sequence[Suggestion]) -> None:
        self.served = list(suggestions)
        self.built = NOW


def searched(*queries: str, hits: int = 9) -> list[SearchRecord]:
    return [SearchRecord(at=NOW - 60, handle="books", query=q, nb_hits=hits, page=0,
                         refinements=(), tags=(), user_token="u", latency_ms=1.0,
                         query_id=None) for q in queries]


def refresher(store: AnalyticsStore, source: FakeEngine, index: SuggestionsIndex,
              interval: float = 60.0) -> SuggestionsRefresher:
    catalog = fake_catalog(CONFIG, {"books": source, "books_query_suggestions": FakeEngine()})
    build = BuildSuggestions(catalog=catalog, store=store,
                             search=SuggestionSearch(AlgoliaSearch(catalog=catalog)),
                             clock=lambda: NOW)
    return SuggestionsRefresher(handle="books_query_suggestions", index=index, build=build,
                                interval=interval, clock=lambda: NOW)


async def test_the_source_is_asked_once_per_candidate_unlogged() -> None:
    store = FakeAnalyticsStore()
    store.searches = searched("dune", "dune", "dune", "emma", "emma", "solo", "zzz", "zzz")
    source = FakeEngine(result=EngineResult(hits=[], total=4))
    index = FakeSuggestionsIndex()
    assert await refresher(store, source, index).refresh()
    # "solo" searched once, "zzz" too short: only the others are asked, as Algolia's
    # search asks them (every word must match)
    assert sorted(q.text for q in source.queries) == ["dune", "emma"]
    assert all(q.all_words for q in source.queries)
    assert [(s.query, s.popularity, s.exact_nb_hits) for s in index.served] == [
        ("dune", 3, 4), ("emma", 2, 4)]
    assert len(store.searches) == 8  # the build's own searches are not logged


async def test_too_few_hits_in_the_source_or_the_log_leave_a_query_out() -> None:
    store = FakeAnalyticsStore()
    store.searches = [*searched("dune", "dune"), *searched("emma", "emma", hits=2)]
    source = FakeEngine(result=EngineResult(hits=[], total=2))
    index = FakeSuggestionsIndex()
    assert await refresher(store, source, index).refresh()
    assert [q.text for q in source.queries] == ["dune"]  # emma never found 3
    assert index.served == []  # dune finds 2 now


async def test_a_failing_store_or_source_keeps_what_is_served() -> None:
    store = FakeAnalyticsStore()
    store.searches = searched("dune", "dune")
    index = FakeSuggestionsIndex()
    ok = refresher(store, FakeEngine(result=EngineResult(hits=[], total=5)), index)
    assert await ok.refresh()
    served = list(index.served)
    assert served
    index.built = None  # due again
    store.failing = True
    assert not await ok.refresh()
    store.failing = False
    down = refresher(store, FailingEngine(EngineUnavailable("the engine is down")), index)
    assert not await down.refresh()
    assert index.served == served


async def test_an_index_built_recently_elsewhere_is_reopened_not_rebuilt() -> None:
    store = FakeAnalyticsStore()
    store.searches = searched("dune", "dune")
    index = FakeSuggestionsIndex(built=NOW - 10)
    source = FakeEngine(result=EngineResult(hits=[], total=5))
    assert await refresher(store, source, index, interval=60).refresh()
    assert (index.reopened, index.served, source.queries) == (1, [], [])


async def test_the_background_loop_survives_failures_and_stops_on_close() -> None:
    store = FakeAnalyticsStore()
    store.searches = searched("dune", "dune")
    store.failing = True
    index = FakeSuggestionsIndex()
    loop = refresher(store, FakeEngine(result=EngineResult(hits=[], total=5)), index,
                     interval=0.01)
    loop.start()
    await asyncio.sleep(0.05)
    assert index.served == []  # the store is down: nothing built, the loop goes on
    store.failing = False
    for _ in range(200):
        if index.served:
            break
        await asyncio.sleep(0.01)
    await loop.close()
    assert [s.query for s in index.served] == ["dune"]
