#!/usr/bin/env python3
"""What the query log costs an uncached search: the same gateway with analytics off, on
(the default SQLite log), and on with ``clickAnalytics=true`` on every request, measured
side by side on the load harness's fake Elasticsearch and its wrk scripts (see
bench/README.md), interleaved round by round.

    .venv/bin/python bench/analytics_overhead.py --rounds 3 --duration 12

Two `searchport serve` processes (one worker each, production install, the harness's
gateway config; one with `analytics: {backend: none}`, one logging to a fresh SQLite file)
are pinned to core 0 and loaded one at a time by wrk on core 1 (2 threads, 32 connections,
`get_uniq.lua`: a new `q` on every request). Each round runs the three cases in turn,
with a pause after each logging case for its last batch to be written (on the same core,
that work would otherwise fall into the next case's measure);
the table gives the medians and each case's ratio to "off" within its round, then the
median of those ratios. It gives the same ratios by CPU too: each case's CPU
time per search, from /proc (the serving processes, from the start of its load to the
end of its pause, so that the write of its last batch counts), as off's CPU per search
to the case's. The gateway's core is saturated, so both measure the same cost; the CPU's
also counts the work of the pause, which the throughput's leaves out. At the end the
SQLite log is counted: every answered search of the "on" cases must be there (nothing
dropped), or the run fails.

With ``--together``, each logging case is loaded at the same time as "off" (a wrk each,
both gateways sharing core 0, which the kernel shares out evenly between them), then
paused: the machine's speed, which moves by tens of percent within a minute on a shared
virtual machine, is then the same for both sides of each ratio. Both are sent the same
requests: beside "on, clickAnalytics", "off" gets `clickAnalytics=true` too (which it
ignores), so that the ratio is the log's cost alone, not that of a longer query string.
Only the CPU ratio carries over to a gateway alone on its core (the shared harness): the
kernel shares the core by thread, so a gateway whose query log writes from a thread of its
own gets more than half of it, and more requests.

With ``--fresh``, both gateways are started anew for each round (each logging to a log of
its own) and warmed up together for a few seconds first: a process keeps the speed it
starts with, a few percent faster or slower than another of the same code, so that one
pair of processes measured in every round gives every round the same error.

With ``--hash-seeds`` (and ``--fresh``), both gateways of a round get the same
``PYTHONHASHSEED``, another for each round: the seed lays out every dict and set of a
process, and with it some of the speed a process keeps, so that both sides of a round's
ratios share that part of their luck, and the rounds still vary it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sqlite3
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

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
CASES = {"off": ("off", ""), "on": ("on", ""), "on, clickAnalytics": ("on", "&clickAnalytics=true")}


HASH_SEED = 1000  # the first round's PYTHONHASHSEED (--hash-seeds)
WARM_UP = 4  # seconds of load on each new gateway before its round (--fresh)


def start_wrk(url: str, seconds: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["taskset", "-c", "1", "wrk", "-t2", "-c32", f"-d{seconds}s", "--timeout=5s",
         "-s", str(SHARED / "wrk" / "get_uniq.lua"), url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wrk(url: str, seconds: int) -> dict[str, float]:
    return wrk_figures(start_wrk(url, seconds), url)


def wrk_figures(load: subprocess.Popen[str], url: str) -> dict[str, float]:
    out, err = load.communicate()
    if load.returncode:
        raise SystemExit(f"wrk failed on {url}:\n{err}")
    found = re.search(r"^WRK_JSON (\{.*\})$", out, re.M)
    if found is None:
        raise SystemExit(f"no WRK_JSON line from wrk:\n{out}")
    figures: dict[str, float] = json.loads(found[1])
    errors = sum(int(v) for k, v in figures.items() if k.startswith("err_"))
    if errors:
        raise SystemExit(f"wrk counted {errors} errors on {url}")
    return figures


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) of the process ``pid`` and of its children, as /proc
    says (the served app runs in a worker process of `searchport serve`)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        at = todo.pop()
        with contextlib.suppress(OSError):
            fields = (Path("/proc") / str(at) / "stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICK
        todo += children.get(at, [])
    return total


def dropped(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    found = re.search(r"^searchport_analytics_dropped_total(?:\{[^}]*\})? (\S+)$", text, re.M)
    return float(found[1]) if found else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=12)
    ap.add_argument("--venv", type=Path, default=ROOT / "bench" / ".venv-prod")
    ap.add_argument("--source", type=Path,
                    help="serve another checkout's src (default: the venv's install)")
    ap.add_argument("--together", action="store_true",
                    help="load each logging case at the same time as off, both on core 0")
    ap.add_argument("--fresh", action="store_true",
                    help="start both gateways anew for each round (and warm them up)")
    ap.add_argument("--hash-seeds", action="store_true",
                    help="with --fresh: both gateways of a round share one PYTHONHASHSEED "
                         "(another each round)")
    args = ap.parse_args()
    python = production_python(args.venv.resolve())
    workdir = Path(tempfile.mkdtemp(prefix="searchport-analytics-"))
    ports = {"off": 8730, "on": 8731}
    servers: dict[str, subprocess.Popen[bytes]] = {}
    logs: list[tuple[Path, int]] = []  # each SQLite log with its rows before the load

    def start(round_number: int) -> None:
        """The two gateways, the logging one on a log of its own, ready and counted."""
        here = workdir / f"round-{round_number}"
        here.mkdir()
        log = here / "analytics.sqlite3"
        if args.hash_seeds:  # serve() passes this environment on
            os.environ["PYTHONHASHSEED"] = str(HASH_SEED + round_number)
        for name, analytics in (("off", {"backend": "none"}),
                                ("on", {"backend": "sqlite", "path": str(log)})):
            config = here / f"{name}.yaml"
            config.write_text(json.dumps({**BENCH_CONFIG, "analytics": analytics}), "utf-8")
            servers[name] = serve(name, args.source, config, ports[name], here, [], python)
        for name, server in servers.items():
            wait_ready(f"http://127.0.0.1:{ports[name]}", server)
        if args.fresh:  # both warmed up at once before the round's measures
            warm = [start_wrk(f"http://127.0.0.1:{ports[name]}{SEARCH}", WARM_UP)
                    for name in servers]
            for load in warm:
                wrk_figures(load, "the warm-up")
        time.sleep(2)  # the first searches' records written
        with sqlite3.connect(log) as db:
            logs.append((log, db.execute("SELECT count(*) FROM analytics_searches").fetchone()[0]))

    def stop_all() -> None:
        for server in servers.values():
            stop(server)
        servers.clear()

    started_upstream = not answers(UPSTREAM + "/")
    if started_upstream:
        subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "start"], check=True)
    try:
        start(0)
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
        rows: dict[str, list[dict[str, float]]] = {case: [] for case in CASES}
        ratios: dict[str, list[float]] = {case: [] for case in CASES}
        cpu_ratios: dict[str, list[float]] = {case: [] for case in CASES}
        logged = 0
        lost = 0.0
        for round_number in range(args.rounds):
            if args.fresh and round_number:  # new processes: each brings its own speed
                lost += dropped(ports["on"])
                stop_all()
                start(round_number)
            if args.together:
                for case, (server, extra) in list(CASES.items())[1:]:
                    cpu_before = {name: cpu_seconds(servers[name].pid) for name in servers}
                    # the same requests to both: off is sent clickAnalytics=true too
                    urls = {"off": f"http://127.0.0.1:{ports['off']}{SEARCH}{extra}",
                            case: f"http://127.0.0.1:{ports[server]}{SEARCH}{extra}"}
                    loads = {name: start_wrk(url, args.duration) for name, url in urls.items()}
                    found = {name: wrk_figures(load, urls[name]) for name, load in loads.items()}
                    logged += int(found[case]["requests"])
                    time.sleep(2)  # its last records written before the next pair's load
                    for name, figures in found.items():
                        pid = servers["off" if name == "off" else server].pid
                        figures["cpu_us"] = ((cpu_seconds(pid) - cpu_before[
                            "off" if name == "off" else server]) / figures["requests"] * 1e6)
                        rows[name].append(figures)
                        print(f"round {round_number + 1} {name} (beside {case}): "
                              f"{figures['rps']:.0f} req/s, p99 {figures['p99_ms']:.1f} ms, "
                              f"CPU {figures['cpu_us']:.0f} µs per search", flush=True)
                    ratios[case].append(found[case]["rps"] / found["off"]["rps"])
                    cpu_ratios[case].append(found["off"]["cpu_us"] / found[case]["cpu_us"])
                ratios["off"].append(1.0)
                cpu_ratios["off"].append(1.0)
                continue
            for case, (server, extra) in CASES.items():
                cpu_before = cpu_seconds(servers[server].pid)
                figures = wrk(f"http://127.0.0.1:{ports[server]}{SEARCH}{extra}", args.duration)
                if server == "on":
                    logged += int(figures["requests"])
                    time.sleep(2)  # its last records written before the next case's load
                # the CPU of the case's searches, their last records' write included
                figures["cpu_us"] = ((cpu_seconds(servers[server].pid) - cpu_before)
                                     / figures["requests"] * 1e6)
                rows[case].append(figures)
                print(f"round {round_number + 1} {case}: {figures['rps']:.0f} req/s, "
                      f"p99 {figures['p99_ms']:.1f} ms, CPU {figures['cpu_us']:.0f} µs per "
                      "search", flush=True)
            for case in CASES:
                ratios[case].append(rows[case][-1]["rps"] / rows["off"][-1]["rps"])
                cpu_ratios[case].append(rows["off"][-1]["cpu_us"] / rows[case][-1]["cpu_us"])
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
        time.sleep(3)  # the last batch written (the query log writes every second)
        lost += dropped(ports["on"])
        stop_all()  # each log complete: its gateway stopped gracefully
        kept = 0
        for log, before in logs:
            with sqlite3.connect(log) as db:
                kept += db.execute("SELECT count(*) FROM analytics_searches").fetchone()[0] - before
        print("\n| case | req/s (median) | p50 | p99 | vs off (median of rounds) "
              "| CPU per search (median) | off's CPU / the case's (median of rounds) |")
        print("|---|---|---|---|---|---|---|")
        for case, figures in rows.items():
            print(f"| {case} | {statistics.median(f['rps'] for f in figures):,.0f} "
                  f"| {statistics.median(f['p50_ms'] for f in figures):.2f} ms "
                  f"| {statistics.median(f['p99_ms'] for f in figures):.2f} ms "
                  f"| {statistics.median(ratios[case]):.3f} "
                  f"| {statistics.median(f['cpu_us'] for f in figures):.0f} µs "
                  f"| {statistics.median(cpu_ratios[case]):.3f} |")
        print(f"\nsearches answered by the logging gateway: {logged:,}; rows logged: {kept:,}; "
              f"searchport_analytics_dropped_total: {lost:g}")
        return 0 if kept >= logged and lost == 0 else 1
    finally:
        stop_all()
        if started_upstream:
            subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "stop"], check=False)


if __name__ == "__main__":
    raise SystemExit(main())
