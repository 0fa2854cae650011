#!/usr/bin/env python3
"""CPU per search-as-you-type request of the built-in demo, in process: the whole request.

    .venv/bin/python bench/typeahead_request.py                 # 5 rounds of the 600 queries
    .venv/bin/python bench/typeahead_request.py --profile       # and cProfile's table
    .venv/bin/python bench/typeahead_request.py --answers out.jsonl   # every answer, to compare
    valgrind --tool=callgrind --separate-threads=yes .venv/bin/python \\
        bench/typeahead_request.py --home /tmp/demo --rounds 1   # and --rounds 2: (2 - 1) / 600

The app ``searchport serve`` runs with no config (the built-in demo's config, its query log
and Query Suggestions companion included), built by the ASGI factory and called directly:
``GET /cities/search?q=...&facets=country&perPage=10`` for each of the 600 queries of
``typeahead_vs_typesense.py`` (``typeahead_queries.py``), everything searchport does for a
request (request context, guards, routing, parameters, the engine, shaping, encoding, the
access line, metrics, the query log) and nothing of the HTTP server's. CPU time
(``time.process_time``, every thread of the process) is the figure a shared machine
measures steadily; the access log (stdout) goes to /dev/null as in the benchmark.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import statistics
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from in_process import http_scope, started_app
from typeahead_queries import demo_rows, typeahead_queries


def scope(query: bytes) -> dict[str, Any]:
    return http_scope("/cities/search", query)


async def measure(args: argparse.Namespace, queries: list[bytes]) -> None:
    async with started_app() as app:
        await _measure(app, args, queries)


async def _measure(app: Any, args: argparse.Namespace, queries: list[bytes]) -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def one_round() -> list[bytes]:
        bodies = []
        for query in queries:
            sent.clear()
            await app(scope(query), receive, send)
            if sent[0]["status"] != 200:
                raise SystemExit(f"{query!r}: {sent}")
            bodies.append(b"".join(m.get("body", b"") for m in sent[1:]))
        return bodies

    await one_round()  # warm: caches, the vocabulary (read in the background), page cache
    await asyncio.sleep(2)
    answers = await one_round()
    if args.answers:
        with args.answers.open("wb") as out:
            for query, body in zip(queries, answers, strict=True):
                out.write(query + b"\t" + body + b"\n")
    cpu_per_request = []
    for _ in range(args.rounds):
        cpu = time.process_time()
        await one_round()
        cpu_per_request.append((time.process_time() - cpu) / len(queries) * 1e6)
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        await one_round()
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats(
            os.environ.get("SORT", "tottime")).print_stats(40)
    rss = resident_mib()
    print(f"{len(queries)} requests x {args.rounds} rounds: CPU per request "
          f"{', '.join(f'{c:.0f}' for c in cpu_per_request)} µs "
          f"(median {statistics.median(cpu_per_request):.0f} µs); RSS after them "
          f"{rss:.1f} MiB", file=sys.stderr)


def resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--home", type=Path, default=Path("/tmp/searchport-typeahead-request"),
                        help="the demo's folder (config and index; reused)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--answers", type=Path, help="write each query and its answer here")
    args = parser.parse_args()

    from searchport import demo

    args.home.mkdir(parents=True, exist_ok=True)
    config = args.home / "config.yaml"
    config.write_text(demo.CONFIG_TEMPLATE.read_text(encoding="utf-8").replace(
        demo.SOURCE_MARKER, json.dumps(str(demo.SOURCE))), encoding="utf-8")
    os.environ["SEARCHPORT_CONFIG"] = str(config)
    queries = [f"q={urllib.parse.quote(q)}&facets=country&perPage=10".encode()
               for q in typeahead_queries(demo_rows())]
    # the access log: one line per request on stdout, thrown away as the benchmark does
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    asyncio.run(measure(args, queries))


if __name__ == "__main__":
    main()
