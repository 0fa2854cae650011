"""How long every Analytics API (``/2/...``) read takes over a large query log.

    .venv/bin/python bench/analytics_reads.py [--backend sqlite|postgres] [--url ...]
        [--rows 10000000] [--days 90] [--period 30] [--file analytics.sqlite3]

Generates ``--rows`` logged searches spread over the last ``--days`` days on one handle
(inside the database: a recursive query on SQLite, ``generate_series`` on PostgreSQL),
with 20,000 distinct queries of a skewed popularity, 100,000 users, a third tracked
(``queryID``), refinements on one search in four, analyticsTags on one in three, four
objectIDs each, and a click on one tracked search in three and a purchase on one in
twenty. Then it times every route's use case (the store's queries, what a request waits
on) over the last ``--period`` days, best of three, and prints one line per route. With
``--file``, an SQLite log already generated is reused.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from searchport.adapters.analytics.postgres import PostgresAnalyticsStore
from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import IndexConfig
from searchport.entrypoints.container import ANALYTICS_REPORTS
from searchport.ports.analytics import AnalyticsStore

HANDLE = "cities"

# one row per n: columns computed from n alone, the same on both databases
SEARCH = """
    {at} AS at, {day} AS day, 'cities' AS handle,
    'q' || ((n * n) % 20000 % (1 + n % 997)) AS query,
    (n * 7) % 60 AS nb_hits, 0 AS page,
    CASE WHEN n % 4 = 0 THEN '[["country",":","c' || (n % 50) || '"]]' ELSE '[]' END
        AS refinements,
    CASE WHEN n % 3 = 0 THEN '["mobile"]' ELSE '[]' END AS tags,
    'u' || (n % 100000) AS user_token, 1.0 AS latency_ms,
    CASE WHEN n % 3 = 1 THEN lpad_hex ELSE NULL END AS query_id,
    '["o' || (n % 5000) || '","o' || (n % 333) || '","o' || (n % 77) || '","o' || (n % 9)
        || '"]' AS hits"""


def sqlite_fill(path: Path, rows: int, days: int) -> None:
    now = datetime.now(UTC).timestamp()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN")
    at = f"({now} - (n % {days}) * 86400.0 - (n % 86000))"
    select = SEARCH.format(at=at, day=f"date({at}, 'unixepoch')").replace(
        "lpad_hex", "printf('%032x', n)")
    db.execute(f"""
        INSERT INTO analytics_searches (at, day, handle, query, nb_hits, page, refinements,
            tags, user_token, latency_ms, query_id, hits)
        WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {rows})
        SELECT {select} FROM g""")
    db.execute("""
        INSERT INTO analytics_events (at, day, handle, type, subtype, name, user_token,
            object_ids, positions, query_id, filters, object_query_ids, revenue, currency,
            object_revenues)
        SELECT at + 5, day, handle, CASE WHEN rowid % 20 = 0 THEN 'conversion' ELSE 'click' END,
            CASE WHEN rowid % 20 = 0 THEN 'purchase' END, 'e', user_token,
            '["o' || (rowid % 5000) || '"]',
            CASE WHEN rowid % 20 = 0 THEN '[]' ELSE '[' || (1 + rowid % 12) || ']' END,
            query_id, '[]', '[]', CASE WHEN rowid % 20 = 0 THEN 10.0 END,
            CASE WHEN rowid % 20 = 0 THEN 'EUR' END, '[]'
        FROM analytics_searches WHERE query_id IS NOT NULL AND rowid % 3 = 1""")
    db.execute("COMMIT")
    db.execute("ANALYZE")
    db.close()


async def postgres_fill(store: PostgresAnalyticsStore, rows: int, days: int) -> None:
    now = datetime.now(UTC).timestamp()
    at = f"({now} - (n % {days}) * 86400.0 - (n % 86000))"
    select = SEARCH.format(at=at, day=f"to_timestamp({at})::date").replace(
        "lpad_hex", "lpad(to_hex(n), 32, '0')")
    select = select.replace("AS refinements", "AS refinements_text").replace(
        "AS tags,", "AS tags_text,").replace("AS hits", "AS hits_text")

    async def fill(db: Any) -> None:
        await db.execute(f"""
            INSERT INTO analytics_searches (at, day, handle, query, nb_hits, page,
                refinements, tags, user_token, latency_ms, query_id, hits)
            SELECT at, day, handle, query, nb_hits, page, refinements_text::jsonb,
                tags_text::jsonb, user_token, latency_ms, query_id, hits_text::jsonb
            FROM (SELECT {select} FROM generate_series(1, {rows}) AS g(n)) AS made""")
        await db.execute("""
            INSERT INTO analytics_events (at, day, handle, type, subtype, name, user_token,
                object_ids, positions, query_id, filters, object_query_ids, revenue, currency,
                object_revenues)
            SELECT at + 5, day, handle, CASE WHEN k % 20 = 0 THEN 'conversion' ELSE 'click' END,
                CASE WHEN k % 20 = 0 THEN 'purchase' END, 'e', user_token,
                jsonb_build_array('o' || (k % 5000)),
                CASE WHEN k % 20 = 0 THEN '[]'::jsonb ELSE jsonb_build_array(1 + k % 12) END,
                query_id, '[]', '[]', CASE WHEN k % 20 = 0 THEN 10.0 END,
                CASE WHEN k % 20 = 0 THEN 'EUR' END, '[]'
            FROM (SELECT s.*, row_number() OVER () AS k FROM analytics_searches s
                  WHERE query_id IS NOT NULL) AS t WHERE k % 3 = 1""")
        await db.execute("ANALYZE")

    store.timeout = 3600
    await store._run(fill)


class _Engine:
    """No engine is asked: the reads only check the handle is configured."""


def catalog() -> Catalog:
    config = IndexConfig(engine="tantivy", path="idx")
    return Catalog({HANDLE: IndexEntry(HANDLE, config, _Engine())})  # type: ignore[arg-type]


ASKED: dict[str, dict[str, Any]] = {
    "/2/searches": {"click_analytics": True, "revenue_analytics": True, "direction": "desc"},
    "/2/hits": {"click_analytics": True, "revenue_analytics": True},
    "/2/filters/{attribute:str}": {"attribute": "country"},
}


async def time_routes(store: AnalyticsStore, period: int) -> None:
    end = datetime.now(UTC).date()
    start = end - timedelta(days=period - 1)
    routes = dict(ANALYTICS_REPORTS)
    variants = [(path, ASKED.get(path, {})) for path in routes]
    variants.append(("/2/searches", {}))
    variants.append(("/2/searches/count", {"tags": "mobile"}))
    for path, extra in variants:
        use_case = routes[path](catalog=catalog(), store=store)
        request = AnalyticsRequest(index=HANDLE, start_date=start.isoformat(),
                                   end_date=end.isoformat(), **extra)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            await use_case(request)
            best = min(best, time.perf_counter() - started)
        print(f"{path:32} {' '.join(f'{k}={v}' for k, v in extra.items()):48} "
              f"{best * 1000:9.1f} ms")


async def run(args: argparse.Namespace, folder: str) -> None:
    store: AnalyticsStore
    started = time.perf_counter()
    if args.backend == "sqlite":
        path = Path(args.file) if args.file else Path(folder) / "analytics.sqlite3"
        store = SqliteAnalyticsStore(path, timeout=600)
        fresh = not path.exists()
        await store.open()  # creates the schema
        if fresh:
            await store.close()
            sqlite_fill(path, args.rows, args.days)
            store = SqliteAnalyticsStore(path, timeout=600)
            await store.open()
    else:
        pg = PostgresAnalyticsStore(args.url, timeout=600)
        await pg.open()
        await postgres_fill(pg, args.rows, args.days)
        pg.timeout = 600
        store = pg
    print(f"{args.rows} searches over {args.days} days generated in "
          f"{time.perf_counter() - started:.0f} s; reads of the last {args.period} days:")
    await time_routes(store, args.period)
    await store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--url")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--period", type=int, default=30)
    parser.add_argument("--file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(args, folder))


if __name__ == "__main__":
    main()
