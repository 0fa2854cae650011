#!/usr/bin/env python3
"""searchport's own work on a cached search, in microseconds, without a server (`--unique`: a
search of a new q each time, no cache; `--health`: GET /health; `--query`: the raw query).

Builds the app on the harness's config with `cache: memory`, answers the harness's
`search` once (from the fake upstream, started if needed) and then calls the ASGI app
directly, in a loop, with the same request: everything searchport does for a cache hit
(request id, the guards, Litestar's response cache, the headers, metrics) and nothing of
the HTTP server's. Run it under `taskset -c 0` on a quiet core; `--profile` adds cProfile's
table.

    taskset -c 0 bench/.venv-prod/bin/python bench/cached_path.py [--requests 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from in_process import http_scope, started_app
from shared_harness import BENCH_CONFIG, SHARED, UPSTREAM, answers

PATH = "/bench/search"
QUERY = b"q=castle&facets=category,period&highlight=true"
HEALTH = False
QUERY_CASE = False
def scope(n: int | None = None) -> dict[str, Any]:
    query = QUERY if n is None else QUERY.replace(b"q=castle", b"q=castle%d" % n)
    path = PATH
    method = "GET"
    if HEALTH:
        path, query = "/health", b""
    if QUERY_CASE:
        path, query, method = "/bench/query", b"", "POST"
    return http_scope(path, query, method)


async def measure(requests: int, profile: bool, unique: bool) -> None:
    async with started_app() as app:
        await _measure(app, requests, profile, unique)


async def _measure(app: Any, requests: int, profile: bool, unique: bool) -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        body = b'{"query":{"match":{"title":"castle"}},"size":20}' if QUERY_CASE else b""
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    for _ in range(3):  # a miss (the engine), then hits: Litestar keeps the whole answer
        await app(scope(), receive, send)
        await asyncio.sleep(0.05)
    assert sent[-2]["status"] == 200, sent[-2]
    print(f"answer: {len(sent[-1]['body']):,} bytes")
    counter = iter(range(10**9))
    for _ in range(3):
        sent.clear()
        started = time.perf_counter()
        cpu_started = time.process_time()
        for _ in range(requests):
            await app(scope(next(counter) if unique else None), receive, send)
        took = (time.perf_counter() - started) / requests * 1e6
        cpu = (time.process_time() - cpu_started) / requests * 1e6
        print(f"{took:.2f} µs per {'search' if unique else 'cached answer'} ({cpu:.2f} µs CPU)")
    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(requests):
            await app(scope(next(counter) if unique else None), receive, send)
        profiler.disable()
        # SORT=cumulative for the call tree's view
        pstats.Stats(profiler).sort_stats(os.environ.get("SORT", "tottime")).print_stats(25)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--health", action="store_true", help="GET /health instead")
    ap.add_argument("--query", action="store_true", help="POST /bench/query instead")
    ap.add_argument("--unique", action="store_true",
                    help="a new q on every request and no cache: the harness's search_uniq")
    args = ap.parse_args()
    global HEALTH, QUERY_CASE
    HEALTH = args.health
    QUERY_CASE = args.query
    started_upstream = not answers(UPSTREAM + "/")
    if started_upstream:
        subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "start"], check=True)
    with tempfile.TemporaryDirectory() as workdir:
        config = Path(workdir) / "config.yaml"
        backend = "none" if args.unique else "memory"
        config.write_text(json.dumps({**BENCH_CONFIG, "cache": {"backend": backend}}),
                          encoding="utf-8")
        os.environ["SEARCHPORT_CONFIG"] = str(config)
        try:
            asyncio.run(measure(args.requests, args.profile, args.unique))
        finally:
            if started_upstream:
                subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "stop"],
                               check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
