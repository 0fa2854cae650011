#!/usr/bin/env python3
"""searchport's CPU per search with the engine's answer canned: everything the gateway does
for `search_uniq` (a new q each request, no cache, log off) but the HTTP server and the
engine exchange, with `--inflight` requests in flight on one event loop, as under load.

The app is built on the shared harness's config (analytics off) and called through ASGI;
the network's `ResilientExchange.exchange` answers at once with one Elasticsearch answer
read from the fake upstream (started if needed). The figure is the process's CPU time per
search (user + system), best and median of `--rounds`. To set two trees side by side, run
it once per tree with `PYTHONPATH` naming the other tree's package (a folder holding a
`searchport` link to its `src`), alternating; only figures of one sitting compare.

    taskset -c 0 bench/.venv-prod/bin/python bench/search_path.py [--searches 10000]
        [--log off|on|click]

``--log on`` records every search into a fresh SQLite query log (the default store;
its writer runs on the same loop, every second, and its CPU is counted), ``click`` asks
for ``clickAnalytics`` on every search too.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent))
from in_process import started_app
from shared_harness import BENCH_CONFIG, SHARED, UPSTREAM, answers

QUERY = "q=castle{n}&facets=category,period&highlight=true"
CLICK = "&clickAnalytics=true"
ENGINE_HEADERS = {"content-type": "application/json", "x-elastic-product": "Elasticsearch"}


def _first(*names: str) -> ModuleType:
    """The first of ``names`` that imports (the network's modules moved between trees)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(f"none of {names}")


def canned(body: bytes) -> None:
    """Every engine exchange answered at once (after one turn of the loop) with ``body``."""
    resilience = _first("searchport.adapters.network.resilience",
                        "searchport.adapters.resilience")
    answer_class = _first("searchport.adapters.network.exchange",
                          "searchport.adapters.exchange").Answer

    async def exchange(self: Any, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0)
        return answer_class(200, ENGINE_HEADERS, body)

    resilience.ResilientExchange.exchange = exchange


async def measure(searches: int, inflight: int, rounds: int, query: str) -> list[float]:
    factory = _first("searchport.entrypoints.asgi", "searchport.entrypoints.http.asgi").create
    async with started_app(factory) as app:
        numbers = iter(range(10**9))

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def search() -> None:
            statuses: list[int] = []

            async def send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    statuses.append(message["status"])

            await app({"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                       "method": "GET", "scheme": "http", "path": "/bench/search",
                       "raw_path": b"/bench/search", "root_path": "",
                       "query_string": query.format(n=next(numbers)).encode(),
                       "headers": [(b"host", b"127.0.0.1"), (b"user-agent", b"wrk")],
                       "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000),
                       "state": {}}, receive, send)
            assert statuses == [200], statuses

        async def worker(count: int) -> None:
            for _ in range(count):
                await search()

        await asyncio.gather(*(worker(50) for _ in range(inflight)))  # warm-up
        each = searches // inflight
        figures = []
        for _ in range(rounds):
            before = resource.getrusage(resource.RUSAGE_SELF)
            await asyncio.gather(*(worker(each) for _ in range(inflight)))
            after = resource.getrusage(resource.RUSAGE_SELF)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            figures.append(cpu / (each * inflight) * 1e6)
        return sorted(figures)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--searches", type=int, default=10_000, help="per round")
    ap.add_argument("--inflight", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--log", choices=("off", "on", "click"), default="off")
    args = ap.parse_args()
    if not answers(UPSTREAM + "/"):
        subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "start"], check=True)
    request = urllib.request.Request(UPSTREAM + "/bench/_search", data=b"{}", method="POST")
    with urllib.request.urlopen(request, timeout=5) as reply:
        body = reply.read()
    canned(body)
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config.yaml"
        # a tree older than the query log has no analytics section (nor a log to turn off)
        logs = importlib.util.find_spec("searchport.ports.analytics") is not None
        analytics = ({"backend": "sqlite", "path": str(Path(folder) / "analytics.sqlite3")}
                     if args.log != "off" else {"backend": "none"})
        config.write_text(json.dumps({**BENCH_CONFIG, **(
            {"analytics": analytics} if logs else {})}), encoding="utf-8")
        os.environ["SEARCHPORT_CONFIG"] = str(config)
        figures = uvloop.run(measure(args.searches, args.inflight, args.rounds,
                                     QUERY + (CLICK if args.log == "click" else "")))
    print(f"{args.searches} searches x {args.rounds} rounds, {args.inflight} in flight, "
          f"log {args.log}, "
          f"engine answer {len(body):,} bytes canned: CPU µs per search best "
          f"{figures[0]:.1f}, median {figures[len(figures) // 2]:.1f}")


if __name__ == "__main__":
    main()
