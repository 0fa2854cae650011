"""The CPU one recorded search costs, in process: the request's part (``observe``) and the
background writer's part (the recorder's batches written to the store with their rollups),
as the shared harness's ``search_uniq`` makes them (a new query on every request, the same
20 objectIDs in every answer as its fake Elasticsearch gives, no refinement, no tags, no
user token: a pseudonym of the client's address).

    .venv/bin/python bench/analytics_cpu.py [--backend sqlite|postgres] [--url ...]
        [--searches 20000] [--prefill 200000] [--click]

CPU is ``time.process_time`` (every thread of the process; a PostgreSQL server's own work
is not counted: it runs in its own processes). The store is first filled with
``--prefill`` searches, so that the figures are those of a log in use, not an empty one.
``--click``: every search asks for ``clickAnalytics`` (a queryID, kept with its row).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from searchport.adapters.analytics.postgres import PostgresAnalyticsStore
from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.analytics.records import Tracking, Visitor, summary_of
from searchport.ports.analytics import AnalyticsStore

HITS = 20
DOCUMENTS = 20  # the fake upstream answers the same 20 documents


def _hits(n: int) -> list[dict[str, Any]]:
    return [{"objectID": f"doc-{(n * 7 + k) % DOCUMENTS}", "title": "x"}
            for k in range(HITS)]


def observe_all(recorder: AnalyticsRecorder, start: int, count: int, click: bool) -> float:
    """``count`` searches observed as the search use case does; the CPU seconds spent."""
    tracking = Tracking(click_analytics=click)
    answers = [_hits(n) for n in range(64)]
    cpu = time.process_time()
    for n in range(start, start + count):
        recorder.observe(
            handle="bench", query=f"castle1x{n}", tracking=tracking,
            visitor=Visitor(client="127.0.0.1", started=time.perf_counter()),
            summary=summary_of(1000 + n % 50, answers[n % 64]), answer=b"", page=0,
            filters=(), public=str)
    return time.process_time() - cpu


async def run(store: AnalyticsStore, searches: int, prefill: int, click: bool) -> None:
    recorder = AnalyticsRecorder(store=store, capacity=10 ** 9, interval=3600)
    await store.open()
    done = 0
    while done < prefill:  # written as they come, batch by batch
        part = min(10_000, prefill - done)
        observe_all(recorder, done, part, click)
        await recorder.flush()
        done += part
    request_cpu = observe_all(recorder, done, searches, click)
    cpu = time.process_time()
    await recorder.flush()
    writer_cpu = time.process_time() - cpu
    await store.close()
    print(f"{searches} searches{' (clickAnalytics)' if click else ''} after {prefill} "
          f"in the log: request side {request_cpu / searches * 1e6:.1f} us, "
          f"writer {writer_cpu / searches * 1e6:.1f} us CPU per search")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--url")
    parser.add_argument("--searches", type=int, default=20_000)
    parser.add_argument("--prefill", type=int, default=200_000)
    parser.add_argument("--click", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store: AnalyticsStore
        if args.backend == "sqlite":
            store = SqliteAnalyticsStore(Path(folder) / "analytics.sqlite3")
        else:
            store = PostgresAnalyticsStore(args.url)
        asyncio.run(run(store, args.searches, args.prefill, args.click))


if __name__ == "__main__":
    main()
