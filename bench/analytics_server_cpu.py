#!/usr/bin/env python3
"""Where a logged search's CPU goes in a real gateway process: the CPU time each thread of
the worker spends per request (``utime + stime`` from ``/proc/<pid>/task/*/stat``), with
the query log off, on (SQLite) and on with ``clickAnalytics=true``, under the shared
harness's ``search_uniq`` load (wrk ``get_uniq.lua``: a new query on every request).

    .venv/bin/python bench/analytics_server_cpu.py --rounds 4 --duration 8
    .venv/bin/python bench/analytics_server_cpu.py --compare HEAD~1   # before and after
    .venv/bin/python bench/analytics_server_cpu.py --profile /tmp/prof  # py-spy of each case

Two `searchport serve` processes per source tree (one worker each, the harness's gateway
config, one with `analytics: {backend: none}`, one logging to a fresh SQLite file) on core
0, loaded one at a time by wrk on core 1. A case's CPU is read before its wrk run and after
a pause that lets its last batch be written (so the writer's work is counted), divided by
the requests wrk saw answered. Rounds interleave the cases; the table gives the median of
each case over the rounds, per thread: ``loop`` (the worker's main thread: the event loop,
where the SQLite writer runs too), ``python`` (the worker's other Python threads: the
SQLite store's thread, which checkpoints), the HTTP server's runtime (``tokio-rt-worker``),
and any other thread by its name; ``faults``, the minor page faults per request, is printed
per round.
CPU time, unlike req/s, says something on a shared machine, but caches shared with other
processes still move it by ±10 µs from round to round: compare the cases of one run,
round by round, over many rounds.

``--compare REV`` serves REV too (from a temporary git worktree), its cases interleaved
with this tree's. ``--profile DIR`` runs `py-spy record --threads --nonblocking` over one
more round of each case and writes one raw file per case (for
``bench/profile_breakdown.py`` or a differential reading); ``--perf DIR`` runs `perf
record -e cpu-clock -g` instead (native frames: the interpreter's own functions,
SQLite's, the allocator's, the kernel's), one file per case (`perf report -i <file>
--no-children --sort dso,sym`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from analytics_overhead import SEARCH, wrk
from shared_harness import (
    BENCH_CONFIG,
    ROOT,
    SHARED,
    UPSTREAM,
    answers,
    serve,
    stop,
    wait_ready,
)

TICK = os.sysconf("SC_CLK_TCK")
SETTLE = 2.0  # seconds after a run for the recorder's last round (it writes every second)


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of each thread of ``pid``, by thread id."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except FileNotFoundError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        found[tid] = (int(fields[11]) + int(fields[12])) / TICK
    return found


def thread_group(pid: int, tid: str) -> str:
    if tid == str(pid):
        return "loop"
    try:
        name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
    except FileNotFoundError:
        return "gone"
    return {"searchport": "server"}.get(name, name)


def minor_faults(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[7])


def worker_of(server: subprocess.Popen[bytes]) -> int:
    kids = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True,
                          text=True).stdout.split()
    return int(kids[0]) if kids else server.pid


def measure(server: subprocess.Popen[bytes], url: str, seconds: int,
            profile: Path | None = None) -> tuple[dict[str, float], dict[str, float]]:
    """wrk on ``url``; the worker's CPU per answered request (µs) by thread group."""
    pid = worker_of(server)
    before = thread_cpu(pid)
    faults = minor_faults(pid)
    spy = None
    if profile is not None and profile.suffix == ".raw":
        spy = subprocess.Popen(
            ["taskset", "-c", "1", str(ROOT / ".venv" / "bin" / "py-spy"), "record", "-p",
             str(pid), "-d", str(seconds - 1), "-r", "200", "-f", "raw", "--threads",
             "--nonblocking", "-o", str(profile)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elif profile is not None:
        spy = subprocess.Popen(
            ["taskset", "-c", "1", "perf", "record", "-e", "cpu-clock", "-F", "999", "-g",
             "-p", str(pid), "-o", str(profile), "--", "sleep", str(seconds - 1)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    figures = wrk(url, seconds)
    if spy is not None:
        spy.wait()
    time.sleep(SETTLE)
    after = thread_cpu(pid)
    requests = figures["requests"]
    figures["faults"] = (minor_faults(pid) - faults) / requests
    groups: dict[str, float] = {}
    for tid, seconds_used in after.items():
        group = thread_group(pid, tid)
        groups[group] = groups.get(group, 0.0) + (seconds_used - before.get(tid, 0.0))
    per_request = {g: v / requests * 1e6 for g, v in groups.items()}
    per_request["all"] = sum(per_request.values())
    return figures, per_request


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--compare", metavar="REV", help="also serve this commit, as `base`")
    ap.add_argument("--venv", type=Path, default=ROOT / ".venv")
    ap.add_argument("--profile", type=Path, help="py-spy raw profiles of each case here")
    ap.add_argument("--perf", type=Path, help="perf profiles of each case here")
    ap.add_argument("--cases", default="off,on,click")
    args = ap.parse_args()
    python = args.venv.resolve() / "bin" / "python"
    workdir = Path(tempfile.mkdtemp(prefix="searchport-cpu-"))
    sources: dict[str, Path | None] = {"ours": None}
    worktrees = []
    if args.compare:
        tree = workdir / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(tree), args.compare], check=True)
        worktrees.append(tree)
        sources["base"] = tree / "src"
    wanted = args.cases.split(",")
    servers: dict[str, subprocess.Popen[bytes]] = {}
    ports: dict[str, int] = {}
    started_upstream = not answers(UPSTREAM + "/")
    if started_upstream:
        subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "start"], check=True)
    try:
        port = 8760
        for source, src in sources.items():
            for log in ("off", "on"):
                analytics = ({"backend": "none"} if log == "off" else
                             {"backend": "sqlite", "path": str(workdir / f"{source}.sqlite3")})
                config = workdir / f"{source}-{log}.yaml"
                config.write_text(json.dumps({**BENCH_CONFIG, "analytics": analytics}), "utf-8")
                name = f"{source}-{log}"
                servers[name] = serve(name, src, config, port, workdir, [], python)
                ports[name] = port
                port += 1
        for name, server in servers.items():
            wait_ready(f"http://127.0.0.1:{ports[name]}", server)
        time.sleep(2)
        cases = {f"{source} {case}": (f"{source}-{'off' if case == 'off' else 'on'}",
                                      "&clickAnalytics=true" if case == "click" else "")
                 for source in sources for case in wanted}
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
        results: dict[str, list[tuple[dict[str, float], dict[str, float]]]] = {c: [] for c in cases}
        for number in range(args.rounds):
            for case, (name, extra) in cases.items():
                url = f"http://127.0.0.1:{ports[name]}{SEARCH}{extra}"
                figures, cpu = measure(servers[name], url, args.duration)
                results[case].append((figures, cpu))
                print(f"round {number + 1} {case}: {figures['rps']:.0f} req/s, "
                      f"faults {figures['faults']:.2f}, cpu {cpu['all']:.1f} µs/request "
                      + " ".join(f"{g} {v:.1f}" for g, v in sorted(cpu.items()) if g != "all"),
                      flush=True)
        for folder, suffix in ((args.profile, ".raw"), (args.perf, ".perf")):
            if folder is None:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            for case, (name, extra) in cases.items():
                url = f"http://127.0.0.1:{ports[name]}{SEARCH}{extra}"
                out = folder / f"{case.replace(' ', '-')}{suffix}"
                figures, cpu = measure(servers[name], url, args.duration, out)
                print(f"profile {case}: {out} ({figures['requests']:.0f} requests, "
                      f"{cpu['all']:.1f} µs/request)")
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
        groups = sorted({g for rows in results.values() for _, cpu in rows for g in cpu
                         if g != "all"})
        print("\n| case | req/s | µs/request, all threads | vs its off (median of the rounds' "
              "differences) | " + " | ".join(groups) + " |")
        print("|---" * (4 + len(groups)) + "|")
        for case, rows in results.items():
            source = case.split()[0]
            off = results.get(f"{source} off")
            all_cpu = statistics.median(cpu["all"] for _, cpu in rows)
            extra = ("" if off is None or case.endswith(" off") else "{:+.1f}".format(
                statistics.median(cpu["all"] - off_cpu["all"]
                                  for (_, cpu), (_, off_cpu) in zip(rows, off, strict=False))))
            print(f"| {case} | {statistics.median(f['rps'] for f, _ in rows):,.0f} "
                  f"| {all_cpu:.1f} | {extra} | "
                  + " | ".join(f"{statistics.median(cpu.get(g, 0.0) for _, cpu in rows):.1f}"
                               for g in groups) + " |")
        return 0
    finally:
        for server in servers.values():
            stop(server)
        if started_upstream:
            subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "stop"], check=False)
        for tree in worktrees:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=False)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
