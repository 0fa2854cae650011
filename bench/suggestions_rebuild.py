"""How long a Query Suggestions rebuild takes from a large query log.

    .venv/bin/python bench/suggestions_rebuild.py [--backend sqlite|postgres]
        [--url postgresql://...] [--searches 10000000] [--vocabulary 50000]
        [--data DIR] [--rounds 2]

Writes ``--searches`` logged searches of the demo's ``cities`` handle over the last 30 days
through the store's own writes, so that its daily rollups are kept as in production (once:
the log is kept in ``--data``, default a folder under the system's temporary
folder, and reused when it already holds at least that many), then rebuilds the demo's
``cities_query_suggestions`` handle (its config: minCount 5, minHits 5, a country facet) as
``serve`` does: the popular queries read from the log, each asked again of the embedded
cities index, the suggestions index built and swapped in. Prints the time of the log's
read alone and of the whole rebuild (and the CPU time of this process: the database
server's is not in it), each round.

The queries follow a Zipf law (exponent 1.07) over ``--vocabulary`` distinct queries: city
names of the demo, the first letters of some (as search-as-you-type logs them), and
misspellings that find nothing; each search is logged with what the source finds for its
query (asked once, when the log is written). postgres without ``--url`` starts a throwaway
PostgreSQL server (the tests' ``tests/postgres_server.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from searchport import demo
from searchport.adapters.config_loader import parse_config
from searchport.adapters.suggestions import QuerySuggestionsEngine
from searchport.domain.analytics.records import SearchRecord, Tracking
from searchport.domain.config import Config
from searchport.domain.search_request import SearchRequest
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.build_suggestions import BuildSuggestions
from searchport.entrypoints.algolia.suggestions import SuggestionSearch
from searchport.entrypoints.container import Container, create_container

DAYS = 30
BATCH = 100_000  # one transaction each (within the store timeout the config allows)


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """Distinct queries, most popular first."""
    with gzip.open(demo.SOURCE, "rt", encoding="utf-8") as rows:
        names = [json.loads(line)["name"].casefold() for line in rows]
    rng.shuffle(names)
    words: list[str] = []
    seen: set[str] = set()
    for n, name in enumerate(names):
        made = [name]
        if n % 3 == 0 and len(name) > 5:
            made.append(name[:len(name) - 2])  # typed on the way
        if n % 5 == 0:
            made.append(name[::-1] + "q")  # finds nothing
        for query in made:
            if query not in seen:
                seen.add(query)
                words.append(query)
        if len(words) >= size:
            break
    return words[:size]


def searches(count: int, queries: list[str], hits: dict[str, int], seed: int = 7
             ) -> Iterator[list[SearchRecord]]:
    """The log, in batches as the store's writer writes them."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) ** 1.07 for rank in range(len(queries))]
    now = time.time()
    for start in range(0, count, BATCH):
        chosen = rng.choices(queries, weights=weights, k=min(BATCH, count - start))
        yield [SearchRecord(at=now - ((start + i) * 7919 % (DAYS * 86_400 - 3600)) - 60,
                            handle="cities", query=query, nb_hits=hits[query], page=0,
                            refinements=(), tags=(), user_token=f"u{i % 5000}",
                            latency_ms=1.0, query_id=None)
               for i, query in enumerate(chosen)]


def logged_count(config: Config, data: Path) -> int:
    if config.analytics.backend == "sqlite":
        with sqlite3.connect(data / "analytics.sqlite3") as db:
            return int(db.execute("SELECT count(*) FROM analytics_searches").fetchone()[0])
    with psycopg.connect(config.analytics.url or "") as db:
        row = db.execute("SELECT count(*) FROM analytics_searches").fetchone()
        return 0 if row is None else int(row[0])


async def hits_of(container: Container, queries: list[str]) -> dict[str, int]:
    """What the source finds for each query: what its searches logged."""
    found: dict[str, int] = {}
    left = iter(queries)

    async def ask() -> None:
        for query in left:
            answer = await container.search()(SearchRequest(
                handle="cities", q=query, per_page=1, highlight="false",
                tracking=Tracking(analytics=False)))
            found[query] = answer.total_hits

    await asyncio.gather(*(ask() for _ in range(8)))
    return found


def config_for(analytics: str) -> Config:
    text = demo.config_text(semantic=False)
    text = text.split("  cities_query_suggestions:")[0].split("\nanalytics:")[0]
    text += ("  cities_query_suggestions:\n    engine: querySuggestions\n    source: cities\n"
             "    path: indexes/cities_query_suggestions\n"
             "    facets: [{ attribute: country, amount: 2 }]\n"
             f"analytics:\n{analytics}\n")
    return parse_config(text, {"PORT": "3000"})


async def rebuild(config: Config, data: Path, count: int, size: int, rounds: int) -> None:
    container = create_container(config, data)
    store = container.analytics_store()
    await store.open()  # the schema
    for entry in container.catalog().values():
        await entry.engine.start()
    started = time.perf_counter()
    if await asyncio.to_thread(logged_count, config, data) < count:
        await store.purge(datetime.now(UTC).date() + timedelta(days=1))  # from scratch
        queries = vocabulary(size, random.Random(7))
        for batch in searches(count, queries, await hits_of(container, queries)):
            await store.write_searches(batch)  # the rollups kept as in production
    print(f"log ready: {count:,} searches ({time.perf_counter() - started:.1f} s)")
    index = container.engines()["cities_query_suggestions"]
    assert isinstance(index, QuerySuggestionsEngine)
    # as serve builds it (container.build_suggestions): the source asked as the Algolia
    # search a user would send for each suggestion
    build = BuildSuggestions(catalog=container.sources(), store=store,
                             search=SuggestionSearch(AlgoliaSearch(catalog=container.sources())),
                             clock=time.time)
    today = datetime.now(UTC).date()
    for n in range(rounds):
        started = time.perf_counter()
        popular = await store.popular_queries("cities", today - timedelta(days=29), today,
                                              min_count=5, limit=100_000)
        read = time.perf_counter() - started
        started, cpu = time.perf_counter(), time.process_time()  # the background refresh
        suggestions = await build("cities_query_suggestions")
        asked = time.perf_counter() - started
        await index.replace(suggestions)
        whole, cpu = time.perf_counter() - started, time.process_time() - cpu
        answer = await container.search()(SearchRequest(
            handle="cities_query_suggestions", per_page=1, tracking=Tracking(analytics=False)))
        served = answer.total_hits
        print(f"round {n + 1}: log read {read:.2f} s ({len(popular):,} popular queries); "
              f"whole rebuild {whole:.2f} s (log read and source asked {asked:.2f} s, "
              f"index built {whole - asked:.2f} s; this process's CPU {cpu:.2f} s); "
              f"{served:,} suggestions served")
    for entry in container.catalog().values():
        await entry.engine.close()
    await store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--url")
    parser.add_argument("--searches", type=int, default=10_000_000)
    parser.add_argument("--vocabulary", type=int, default=50_000)
    parser.add_argument("--data", type=Path,
                        default=Path(tempfile.gettempdir()) / "searchport-bench-suggestions")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    data = args.data / args.backend
    data.mkdir(parents=True, exist_ok=True)
    server = None
    if args.backend == "sqlite":
        analytics = "  backend: sqlite\n  path: analytics.sqlite3\n  timeout: 60"
    else:
        url = args.url
        if url is None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository
            from tests.postgres_server import PostgresServer

            server = PostgresServer()
            server.start()
            url = server.create_database()
        analytics = f"  backend: postgres\n  url: {url}\n  timeout: 60"
    try:
        asyncio.run(rebuild(config_for(analytics), data, args.searches, args.vocabulary,
                            args.rounds))
    finally:
        if server is not None:
            server.remove()


if __name__ == "__main__":
    main()
