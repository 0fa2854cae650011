#!/usr/bin/env python3
"""The in-process cache tier against uncached searches, on the load harness's setup.

Two gateways from the same install, pinned to core 0 one at a time under load: `nocache`
(the harness's config, `cache: none`) and `memory` (the same with `cache: memory`). The fake
Elasticsearch upstream of the load harness (bench/README.md) and wrk (`-t2 -c32`) run on
core 1. Cases, every one the harness's `search` (q, 2 facets, highlight):

- `uncached, distinct`: nocache, a new `q` on every request (a wrk script), so every request
  goes to the engine: what a cache saves;
- `uncached, same URL`: nocache, one URL (the harness's own `search` case): identical
  requests in flight share one engine call (single flight);
- `cached`: memory, one URL: every answer but the first is held in this process;
- `floor`: not searchport: a bare ASGI app under the same granian, on the same core, that
  sends the cached answer's bytes with the same headers, and does nothing else: the most
  any cache can reach on this server.

Rounds interleave the cases; medians of req/s and p99, and the ratios within each round.

    .venv/bin/python bench/cache_tier.py [--rounds 3] [--seconds 10] [--ours REV]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shared_harness import (
    BENCH_CONFIG,
    ROOT,
    SHARED,
    UPSTREAM,
    answers,
    production_python,
    serve,
    stop,
    wait_ready,
)

SEARCH = "/bench/search?q=castle&facets=category,period&highlight=true"
DISTINCT = """
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/bench/search?q=castle" .. n
                    .. "&facets=category,period&highlight=true")
end
"""
FLOOR_APP = """
import json
ANSWER = open("answer.json", "rb").read()
HEADERS = [(k.encode(), v.encode()) for k, v in json.load(open("headers.json"))]


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": ANSWER})
"""
CASES = {  # name: (gateway, distinct URLs)
    "uncached, distinct": ("nocache", True),
    "uncached, same URL": ("nocache", False),
    "cached": ("memory", False),
    "floor": ("floor", False),
}


def wrk(url: str, seconds: int, script: Path | None) -> tuple[float, float]:
    command = ["taskset", "-c", "1", "wrk", "-t2", "-c32", f"-d{seconds}s", "--latency"]
    if script is not None:
        command += ["-s", str(script)]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise SystemExit(f"wrk saw errors:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]  # type: ignore[union-attr]
    return rps, float(p99.group(1)) * scale  # type: ignore[union-attr]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--ours", metavar="REV", help="serve from this commit (default: the tree)")
    ap.add_argument("--venv", type=Path, default=ROOT / "bench" / ".venv-prod")
    args = ap.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="searchport-cache-tier-"))
    python = production_python(args.venv.resolve())
    script = workdir / "distinct.lua"
    script.write_text(DISTINCT, encoding="utf-8")
    started_upstream = not answers(UPSTREAM + "/")
    if started_upstream:
        subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "start"], check=True)
    source = None
    if args.ours:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(workdir / "tree"), args.ours], check=True)
        source = workdir / "tree" / "src"
    servers = {}
    ports = {"nocache": 8720, "memory": 8721}
    try:
        for name, port in ports.items():
            config = workdir / f"{name}.yaml"
            backend = "none" if name == "nocache" else "memory"
            config.write_text(json.dumps({**BENCH_CONFIG, "cache": {"backend": backend}}),
                              encoding="utf-8")
            servers[name] = serve(name, source, config, port, workdir, [], python)
        for name, port in ports.items():
            wait_ready(f"http://127.0.0.1:{port}", servers[name])
        with urllib.request.urlopen(f"http://127.0.0.1:{ports['memory']}{SEARCH}") as answer:
            (workdir / "answer.json").write_bytes(answer.read())
            headers = [(k, v) for k, v in answer.getheaders()
                       if k.lower() not in ("date", "connection", "server")]
        (workdir / "headers.json").write_text(json.dumps(headers), encoding="utf-8")
        (workdir / "floor.py").write_text(FLOOR_APP, encoding="utf-8")
        ports["floor"] = 8722
        servers["floor"] = subprocess.Popen(
            ["taskset", "-c", "0", str(python), "-m", "granian", "--interface", "asgi",
             "--workers", "1", "--port", "8722", "--no-ws", "floor:app"],
            cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready("http://127.0.0.1:8722", servers["floor"])
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout,
              flush=True)
        runs: dict[str, list[tuple[float, float]]] = {case: [] for case in CASES}
        for r in range(args.rounds):
            for case, (gateway, distinct) in CASES.items():
                url = f"http://127.0.0.1:{ports[gateway]}" + ("/" if distinct else SEARCH)
                runs[case].append(wrk(url, args.seconds, script if distinct else None))
                print(f"round {r + 1} {case}: {runs[case][-1][0]:,.0f} req/s, "
                      f"p99 {runs[case][-1][1]:.2f} ms", flush=True)
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout)
        print("| case | req/s (median) | p99 ms (median) | cached / this (median of rounds) |")
        print("|---|---|---|---|")
        cached = [rps for rps, _ in runs["cached"]]
        for case, results in runs.items():
            ratio = statistics.median(c / rps for c, (rps, _) in zip(cached, results, strict=True))
            print(f"| {case} | {statistics.median(r for r, _ in results):,.0f} | "
                  f"{statistics.median(p for _, p in results):.2f} | {ratio:.2f} x |")
        return 0
    finally:
        for server in servers.values():
            stop(server)
        if args.ours:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(workdir / "tree")], check=False)
        if started_upstream:
            subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "stop"], check=False)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
