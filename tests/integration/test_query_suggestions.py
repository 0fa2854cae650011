"""Query Suggestions built for real: searches logged in a real store (an SQLite file, and a
real PostgreSQL server), the source a real embedded index of the sample cities, the
suggestions built into the embedded engine and searched back through the Search use case.
Every expected suggestion is computed here, in plain Python, from the logged rows and the
source rows."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any

import msgspec
import pytest

from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.adapters.config_loader import parse_config
from searchport.adapters.suggestions import QuerySuggestionsEngine
from searchport.domain.analytics.records import SearchRecord
from searchport.domain.config import Config
from searchport.domain.search_request import SearchRequest
from searchport.domain.suggestions.records import Suggestion
from searchport.domain.suggestions.refresher import SuggestionsRefresher
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.build_suggestions import BuildSuggestions
from searchport.entrypoints.algolia.suggestions import SuggestionSearch
from searchport.entrypoints.container import Container, create_container
from searchport.ports.analytics import AnalyticsStore
from searchport.ports.suggestions import SuggestionsIndex
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.anyio

SAMPLE = Path(__file__).parents[1] / "e2e" / "cities_sample.jsonl"
SOURCE_ROWS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
MIN_COUNT, MIN_HITS, MIN_LETTERS, PERIOD, AMOUNT = 3, 2, 4, 7, 2
EXCLUDE = ["port", "^ciu"]
# query -> times searched today; the prefixes typed on the way are logged as often
TODAY_SEARCHES = {
    "santa": 9, "sant": 9, "san": 12, "san antonio": 5, "san miguel": 4, "pamplona": 3,
    "pamplo": 3, "london": 6, "nowhere": 7, "port": 8, "ciudad": 5, "santo domingo": 2,
    "de": 10, "santa cruz": 3,
}


def config_text(analytics: str) -> str:
    return f"""
indexes:
  cities:
    engine: tantivy
    path: indexes/cities
    source: {json.dumps(str(SAMPLE))}
    idField: id
    prefixSearch: false
    typoTolerance: {{ enabled: false }}
    fields:
      name: {{ type: text, weight: 1 }}
      country: {{ type: keyword }}
  cities_query_suggestions:
    engine: querySuggestions
    source: cities
    minCount: {MIN_COUNT}
    minHits: {MIN_HITS}
    minLetters: {MIN_LETTERS}
    period: {PERIOD}
    exclude: {json.dumps(EXCLUDE)}
    facets: [{{ attribute: country, amount: {AMOUNT} }}]
analytics:
{analytics}
"""


def logged_rows(now: float) -> list[SearchRecord]:
    """Today's searches of cities, the same queries on another handle, and searches of
    cities older than the period: only the first count. Each logged with the hits its
    query finds in the sample (one fewer every other search), but "san miguel", whose
    searches found one record or none (as when they were refined), though the source finds
    more for it."""
    rows = []
    old = now - (PERIOD + 2) * 86_400
    for n, (query, times) in enumerate(TODAY_SEARCHES.items()):
        hits = 1 if query == "san miguel" else len(source_hits(query))
        for i in range(times):
            rows.append(record(now - 60 - i, "cities", query, n, hits - i % 2))
        rows.append(record(now - 30, "films", query, n, 100))
        rows.extend(record(old - i, "cities", query, n, 100) for i in range(5))
    rows.extend(record(old, "cities", "zanzibar", 0, 100) for _ in range(20))
    return rows


def record(at: float, handle: str, query: str, n: int, hits: int = 0) -> SearchRecord:
    return SearchRecord(at=at, handle=handle, query=query, nb_hits=hits, page=0,
                        refinements=(), tags=(), user_token=f"user-{n}", latency_ms=1.0,
                        query_id=None)


def source_hits(query: str) -> list[dict[str, Any]]:
    """The sample rows the search for the query finds (Algolia's, as a user's client sends
    it): those holding every word of the query."""
    return [r for r in SOURCE_ROWS if set(words(query)) <= set(words(r["name"]))]


def average(values: list[int]) -> int:
    """Rounded half up, as the log reports averages."""
    return int(Fraction(sum(values), len(values)) + Fraction(1, 2))


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def expected(rows: list[SearchRecord], now: float) -> list[dict[str, Any]]:
    """The suggestions, by brute force over the rows, most popular first."""
    first_day = datetime.fromtimestamp(now, UTC).date() - timedelta(days=PERIOD - 1)
    mine = [r for r in rows if r.handle == "cities" and r.day >= first_day and r.query]
    counts = Counter(r.query for r in mine)
    logged_hits = {q: average([r.nb_hits for r in mine if r.query == q]) for q in counts}
    popular = {q: n for q, n in counts.items() if n >= MIN_COUNT}
    made = []
    for query, count in popular.items():
        if any(other != query and other.startswith(query) and n >= count
               for other, n in popular.items()):
            continue  # only ever typed on the way to a longer query
        if sum(c.isalnum() for c in query) < MIN_LETTERS:
            continue
        if any(words(query)[i:i + 1] == [word] for word in EXCLUDE if word.isalpha()
               for i in range(len(words(query)))) or re.search("^ciu", query):
            continue
        if logged_hits[query] < MIN_HITS:
            continue  # its searches found too few on average: not asked again
        found = source_hits(query)
        if len(found) < MIN_HITS:
            continue
        countries = Counter(r["country"] for r in found)
        top = sorted(countries.items(), key=lambda kv: (-kv[1], kv[0]))[:AMOUNT]
        made.append({
            "objectID": query, "query": query, "popularity": count,
            "nb_words": len(query.split()),
            "cities": {"exact_nb_hits": len(found), "facets": {"exact_matches": {
                "country": [{"value": v, "count": c} for v, c in top]}}},
        })
    return sorted(made, key=lambda s: (-s["popularity"], s["query"]))


@pytest.fixture(params=["sqlite", "postgres"])
def config(request: pytest.FixtureRequest) -> Config:
    if request.param == "sqlite":
        return parse_config(config_text("  backend: sqlite"), {})
    server: PostgresServer = request.getfixturevalue("postgres")
    return parse_config(config_text(f"  backend: postgres\n  url: {server.create_database()}"),
                        {})


@pytest.fixture
async def container(config: Config, tmp_path: Path) -> AsyncIterator[Container]:
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


async def served(container: Container, q: str = "", per_page: int = 100) -> list[dict[str, Any]]:
    """The suggestions as the Search use case answers them, highlights left aside."""
    answer = await container.search()(SearchRequest(
        handle="cities_query_suggestions", q=q, per_page=per_page, highlight="false"))
    return [{k: v for k, v in hit.items() if not k.startswith("_")}
            for hit in msgspec.to_builtins(answer.hits)]


async def test_the_suggestions_are_the_popular_queries_of_the_log(container: Container
                                                                  ) -> None:
    now = time.time()
    rows = logged_rows(now)
    await container.analytics_store().write_searches(rows)
    assert await served(container) == []  # nothing before the first build
    (refresher,) = container.suggestions()
    assert await refresher.refresh()
    want = expected(rows, now)
    queries = [s["query"] for s in want]
    assert len(queries) >= 3 and queries[0] == "santa"
    # each rule left one out: typed on the way, too short, too few hits, excluded, too rare
    assert not {"sant", "pamplo", "san", "de", "nowhere", "port", "ciudad",
                "santo domingo", "zanzibar", "san miguel"} & set(queries)
    assert await served(container) == want


async def test_the_suggestions_answer_prefix_queries_most_popular_first(
        container: Container) -> None:
    rows = logged_rows(time.time())
    await container.analytics_store().write_searches(rows)
    (refresher,) = container.suggestions()
    assert await refresher.refresh()
    found = await served(container, "san")
    assert [s["query"] for s in found] == [s["query"] for s in expected(rows, time.time())
                                           if s["query"].startswith("san")]
    answer = await container.search()(SearchRequest(handle="cities_query_suggestions",
                                                    q="pampl", highlight="true"))
    hit = answer.hits[0]
    assert hit["query"] == "pamplona"
    assert hit["_highlights"]["query"] == ["<mark>pampl</mark>ona"]


async def test_a_store_that_is_down_keeps_the_suggestions_served(
        container: Container, config: Config, tmp_path: Path,
        request: pytest.FixtureRequest) -> None:
    rows = logged_rows(time.time())
    await container.analytics_store().write_searches(rows)
    (refresher,) = container.suggestions()
    assert await refresher.refresh()
    before = await served(container)
    assert before
    def due_again(store: AnalyticsStore) -> SuggestionsRefresher:
        return SuggestionsRefresher(
            handle="cities_query_suggestions", index=index_of(container),
            build=BuildSuggestions(
                catalog=container.catalog(), store=store,
                search=SuggestionSearch(AlgoliaSearch(catalog=container.catalog())),
                clock=time.time),
            interval=0.001, clock=time.time)

    again = due_again(container.analytics_store())
    if config.analytics.backend == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres")
        server.stop()
        try:
            assert not await again.refresh()
            assert await served(container) == before
        finally:
            server.start()
    else:
        # an analytics file that cannot be opened (a folder is in its place)
        (tmp_path / "unusable.sqlite3").mkdir()
        broken = SqliteAnalyticsStore(tmp_path / "unusable.sqlite3", timeout=1.0)
        try:
            assert not await due_again(broken).refresh()
        finally:
            await broken.close()
        assert await served(container) == before


def index_of(container: Container) -> QuerySuggestionsEngine:
    engine = container.engines()["cities_query_suggestions"]
    assert isinstance(engine, QuerySuggestionsEngine)
    return engine


def suggestions(prefix: str, n: int) -> list[Suggestion]:
    return [Suggestion(query=f"{prefix} {i:04d}", popularity=n - i, nb_words=2,
                       exact_nb_hits=i + 1) for i in range(n)]


async def test_a_search_during_a_rebuild_answers_from_a_whole_index(container: Container
                                                                    ) -> None:
    """Rebuilds swap sets of 300 and 200 suggestions while searches run: every answer is
    one whole set, never a part, never an error."""
    index: SuggestionsIndex = index_of(container)
    first, second = suggestions("alpha", 300), suggestions("beta", 200)
    await index.replace(first)
    seen: Counter[int] = Counter()
    done = asyncio.Event()

    async def search() -> None:
        while not done.is_set():
            answer = await container.search()(SearchRequest(
                handle="cities_query_suggestions", per_page=1, highlight="false"))
            total = answer.total_hits
            seen[total] += 1

    searching = [asyncio.create_task(search()) for _ in range(4)]
    for _ in range(3):
        await index.replace(second)
        await index.replace(first)
    done.set()
    await asyncio.gather(*searching)
    assert set(seen) <= {300, 200}
    assert seen[200] > 0 and seen[300] > 0


async def test_another_process_build_is_opened_not_rebuilt(config: Config, tmp_path: Path
                                                           ) -> None:
    """Two processes on one index folder: the second opens what the first just built."""
    one, two = create_container(config, tmp_path), create_container(config, tmp_path)
    for made in (one, two):
        for entry in made.catalog().values():
            await entry.engine.start()
        await made.analytics_store().open()
    try:
        await one.analytics_store().write_searches(logged_rows(time.time()))
        assert await one.suggestions()[0].refresh()
        built = await index_of(one).built_at()
        assert built is not None
        assert await two.suggestions()[0].refresh()
        assert await index_of(two).built_at() == built
        assert await served(two) == await served(one) != []
    finally:
        for made in (one, two):
            for entry in made.catalog().values():
                await entry.engine.close()
            await made.analytics_store().close()


async def test_popular_queries_are_counted_and_ordered_by_the_store(container: Container
                                                                    ) -> None:
    """Most searched first, ties by query (code point order), at least ``min_count``, the
    empty query left out, at most ``limit``."""
    now = time.time()
    rows = logged_rows(now)
    rows += [record(now - 5, "cities", q, 0, n) for n, q in enumerate(
        ("", "", "", "", "zürich", "zurich", "zürich", "zurich", "zürich", "zurich"))]
    store = container.analytics_store()
    await store.write_searches(rows)
    today = datetime.fromtimestamp(now, UTC).date()
    first = today - timedelta(days=PERIOD - 1)
    counts = Counter(r.query for r in rows
                     if r.handle == "cities" and first <= r.day <= today and r.query)
    most = {q: average([r.nb_hits for r in rows if r.query == q and r.handle == "cities"
                        and first <= r.day <= today]) for q in counts}
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    for min_count, limit in ((1, 100), (3, 100), (3, 4), (9, 100)):
        found = await store.popular_queries("cities", first, today, min_count=min_count,
                                            limit=limit)
        assert [(p.query, p.count, p.nb_hits) for p in found] == [
            (q, n, most[q]) for q, n in ranked if n >= min_count][:limit]
