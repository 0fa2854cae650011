"""How many recorded searches a second the query log's writer keeps, on one core.

    taskset -c 0 .venv/bin/python bench/analytics_writer.py [--backend sqlite|postgres]
        [--url postgresql://...] [--rate 5000] [--seconds 10]

Several instances on one PostgreSQL: start this as many times at once, each with its share
of ``--rate`` (two at ``--rate 2500`` for 5,000 a second arriving in all).

Searches arrive at ``--rate`` a second (a tick every 10 ms hands its share to the store,
as requests do) for ``--seconds``; the store's writer writes them in the background as
searchport does, with their daily rollups. Each search has four objectIDs, a refinement,
one in three analyticsTags, one in two a queryID. It prints what was recorded and
dropped, and the process's CPU time per second of load (the store's threads included).
sqlite writes to a temporary file.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from searchport.adapters.analytics.postgres import PostgresAnalyticsStore
from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.adapters.analytics.store import SqlAnalyticsStore
from searchport.domain.analytics.records import ObservedSearch, Refinement, new_query_id

QUERIES = ["paris", "New York", "lyon", "  Zurich ", "berlin", "são paulo", "tokyo", ""]


async def run(store: SqlAnalyticsStore, rate: int, seconds: float) -> None:
    await store.open()
    per_tick = rate / 100
    sent = 0
    started, cpu = time.monotonic(), time.process_time()
    while (elapsed := time.monotonic() - started) < seconds:
        due = int(elapsed * rate + per_tick)
        while sent < due:
            store.record_search(ObservedSearch(
                at=time.time(), handle="cities", query=QUERIES[sent % len(QUERIES)],
                nb_hits=sent % 50, page=0, refinements=(Refinement("country", ":", "FR"),),
                client=f"192.0.2.{sent % 250}", latency_ms=1.0,
                tags=("mobile",) if sent % 3 == 0 else (),
                hits=tuple(f"o{(sent % 997 + k) % 500}" for k in range(4)),
                query_id=new_query_id() if sent % 2 else None))
            sent += 1
        await asyncio.sleep(0.01)
    load_cpu = time.process_time() - cpu
    await store.close()  # what is still queued written first
    print(f"{sent} recorded in {seconds:g} s ({sent / seconds:.0f}/s), dropped "
          f"{store.dropped}; CPU {load_cpu / seconds:.2f} s per second of load")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--url")
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store: SqlAnalyticsStore
        if args.backend == "sqlite":
            store = SqliteAnalyticsStore(Path(folder) / "analytics.sqlite3")
        else:
            store = PostgresAnalyticsStore(args.url)
        asyncio.run(run(store, args.rate, args.seconds))


if __name__ == "__main__":
    main()
