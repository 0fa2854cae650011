#!/usr/bin/env python3
"""What the query log costs a search in instructions: the app served in process (ASGI
calls, no HTTP server) on the load harness's fake Elasticsearch, under callgrind, with the
log off, on (SQLite) and on with ``clickAnalytics=true``; each request a new query, as
``search_uniq`` sends. Counts do not move with the machine's speed as times do.

    .venv/bin/python bench/analytics_instructions.py [--small 400] [--large 1200]

Each case runs twice under ``valgrind --tool=callgrind`` (all threads, the SQLite
writer's and checkpoints' included), with ``--small`` and ``--large`` requests; the
difference divided by the difference of requests is a request's instructions, with what
the two runs share (start, first requests, the shutdown's flush) taken out. The log is
written at the shutdown (``flushInterval`` 60 s, in batches of 5,000 as under load). The
table gives a request's instructions by shared object (libpython, msgspec, SQLite, libc,
libcurl...) and each case's total against the log off. Needs ``valgrind`` (Debian) and
the fake upstream (started when it is not running); a case takes a few minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from shared_harness import BENCH_CONFIG, ROOT, SHARED, UPSTREAM, answers, production_python

HERE = Path(__file__).resolve().parent
CASES = {"off": ("none", ""), "on": ("sqlite", ""),
         "on, clickAnalytics": ("sqlite", "&clickAnalytics=true")}
CONCURRENT = 16  # requests in flight at once


async def _serve(requests: int, extra: str) -> None:
    """In the child: ``requests`` searches through the app (after 50 unmeasured ones)."""
    sys.path.insert(0, str(HERE))
    from in_process import http_scope, started_app

    async def one(app: Any, n: int) -> None:
        scope = http_scope("/bench/search", f"q=castle1x{n}&facets=category,period"
                                            f"&highlight=true{extra}".encode())
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)
        if sent[0]["status"] != 200:
            raise SystemExit(f"a search answered {sent[0]['status']}")

    async with started_app() as app:
        for n in range(50):
            await one(app, -n - 1)
        for start in range(0, requests, CONCURRENT):
            await asyncio.gather(*(one(app, start + k) for k in range(CONCURRENT)))


def _by_object(out: Path) -> collections.Counter[str]:
    """The instructions of a callgrind output, by shared object."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", str(out)],
                          capture_output=True, text=True, check=True).stdout
    found: collections.Counter[str] = collections.Counter()
    for line in text.splitlines():
        row = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)", line)
        if row is None or "PROGRAM TOTALS" in line:
            continue
        where = re.search(r"\[([^\]]*)\]\s*$", row[2])
        name = where[1].rsplit("/", 1)[-1] if where else "(unknown)"
        found[re.sub(r"\.cpython.*|\.abi3.*|-[0-9a-f]{8}\.so.*|\.so\..*", "", name)] += int(
            row[1].replace(",", ""))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", type=int, default=400)
    ap.add_argument("--large", type=int, default=1200)
    ap.add_argument("--venv", type=Path, default=ROOT / "bench" / ".venv-prod")
    ap.add_argument("--child", nargs=2, metavar=("REQUESTS", "EXTRA"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        import uvloop

        uvloop.run(_serve(int(args.child[0]), args.child[1]))
        return 0
    python = production_python(args.venv.resolve())
    if not answers(UPSTREAM + "/"):
        subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "start"], check=True)
    workdir = Path(tempfile.mkdtemp(prefix="searchport-instructions-"))
    per_request: dict[str, dict[str, float]] = {}
    for case, (backend, extra) in CASES.items():
        counts = []
        for requests in (args.small, args.large):
            here = workdir / f"{backend}{extra and '-click'}-{requests}"
            here.mkdir()
            analytics = ({"backend": "none"} if backend == "none" else
                         {"backend": backend, "path": str(here / "analytics.sqlite3"),
                          "flushInterval": 60})
            config = here / "config.yaml"
            config.write_text(json.dumps({**BENCH_CONFIG, "analytics": analytics}), "utf-8")
            env = {**os.environ, "SEARCHPORT_CONFIG": str(config)}
            env.pop("PYTHONPATH", None)
            out = here / "callgrind.out"
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            str(python), __file__, "--child", str(requests), extra],
                           env=env, check=True, stdout=subprocess.DEVNULL,
                           stderr=(here / "valgrind.log").open("wb"))
            counts.append(_by_object(out))
        small, large = counts
        per_request[case] = {name: (large[name] - small[name]) / (args.large - args.small)
                             for name in set(small) | set(large)}
        print(f"{case}: {sum(per_request[case].values()):,.0f} instructions per request",
              flush=True)
    names = sorted(set().union(*per_request.values()),
                   key=lambda n: -max(abs(v.get(n, 0.0)) for v in per_request.values()))
    print("\n| shared object | " + " | ".join(per_request) + " |")
    print("|---|" + "---|" * len(per_request))
    for name in names[:12]:
        print(f"| {name} | " + " | ".join(f"{v.get(name, 0.0):,.0f}"
                                         for v in per_request.values()) + " |")
    totals = {case: sum(v.values()) for case, v in per_request.items()}
    print("| **total** | " + " | ".join(f"**{t:,.0f}**" for t in totals.values()) + " |")
    print("| against off | " + " | ".join(f"{t / totals['off']:.3f}"
                                          for t in totals.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
