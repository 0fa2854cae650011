#!/usr/bin/env python3
"""Soak test: minutes of mixed traffic against one searchport process (run by hand, not CI).

Two handles: `cities` (the embedded tantivy demo, the settings of config.example.yaml,
reusing its index folder when it is already built) and `bench` (Elasticsearch 8: the
shared harness's fake upstream, nginx on 127.0.0.1:9201, started here when it is not
running). searchport runs pinned to core 0; wrk (`-t2 -c16`, bench/soak.lua, a cycle of
searches with facets, filters, sort, histogram, geoGrid and highlight, facet values,
autocomplete, documents, raw queries, service routes and a few 4xx on purpose) runs
pinned to core 1, in slices of 30 s after a 30 s warm-up. Per slice: requests, req/s,
p50/p99, 4xx, 5xx, socket errors, and the RSS and open files of the gateway's process
tree at the end of the slice. At the end a Markdown report goes to stdout (and --out).

    apt-get install -y nginx wrk
    .venv/bin/python bench/soak.py [--minutes 10] [--out FILE]

Exit status: 0 pass, 1 fail (a 5xx, a socket error, RSS growth of 10 % or more, or an
answer with an unexpected status before or after the run), 2 missing tools.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from shared_harness import stop  # a sibling script: bench/ is on sys.path when run

ROOT = Path(__file__).resolve().parents[1]
LUA = ROOT / "bench" / "soak.lua"
SHARED = ROOT.parent / "shared" / "bench"
UPSTREAM_SCRIPT = SHARED / "upstream" / "run-upstream.sh"
UPSTREAM = "http://127.0.0.1:9201"
SERVER_CORE, LOAD_CORE = 0, 1
CONNECTIONS, THREADS = 16, 2
MAX_GROWTH = 0.10
MIB = 1024 * 1024

# The `cities` handle of config.example.yaml, with absolute paths (config.example.yaml's
# are relative to it), so an index folder built by the demo is reused as is.
CITIES: dict[str, Any] = {
    "engine": "tantivy",
    "path": str(ROOT / ".searchport" / "indexes" / "cities"),
    "source": str(ROOT / "src" / "demo" / "cities.jsonl.gz"),
    "idField": "id",
    "rawQuery": True,
    "exactTotals": True,
    "maxResultWindow": 10000,
    "fields": {
        "name": {"type": "text", "weight": 3},
        "alternateNames": {"type": "text", "weight": 1},
        "country": {"type": "keyword", "searchable": True},
        "countryCode": {"type": "keyword"},
        "region": {"field": "continent", "type": "keyword"},
        "timezone": {"type": "keyword"},
        "currency": {"type": "keyword"},
        "languages": {"type": "keyword"},
        "population": {"type": "integer"},
        "capital": {"type": "boolean"},
        "location": {"type": "geo_point"},
    },
    "defaults": {"perPage": 20, "facets": ["region", "country", "capital"], "highlight": True},
}
# The shared harness's gateway settings for the fake Elasticsearch.
BENCH: dict[str, Any] = {
    "engine": "elasticsearch",
    "host": UPSTREAM,
    "indexName": "bench",
    "defaults": {"perPage": 20, "facets": ["category", "period"], "highlight": True},
}
REQUEST_LINE = re.compile(
    r"""^\s*\{"(GET|POST)",\s*"([^"]+)",\s*'([^']*)',\s*(\d{3})(?:,\s*"gzip")?\},""", re.M
)


@dataclass
class Slice:
    end_s: float
    wrk: dict[str, float]
    rss: int
    fds: int
    load1: float
    busy: list[float]
    gateway_cpu: float


# ---------------------------------------------------------------------------------------
# preconditions, upstream, server


def missing_tools() -> list[str]:
    missing = [tool for tool in ("wrk", "nginx", "taskset", "curl") if not shutil.which(tool)]
    if not UPSTREAM_SCRIPT.is_file():
        missing.append(f"the shared harness ({UPSTREAM_SCRIPT})")
    return missing


def upstream_up() -> bool:
    try:
        return httpx.get(UPSTREAM + "/", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def upstream(action: str) -> None:
    subprocess.run(["bash", str(UPSTREAM_SCRIPT), action], check=True,
                   stdout=subprocess.DEVNULL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def write_config(directory: Path) -> Path:
    config = {
        "host": "127.0.0.1",
        "apiKey": "",
        "accessLog": "off",
        "cache": {"backend": "none"},
        "metrics": {"enabled": True, "public": True},
        "indexes": {"cities": CITIES, "bench": BENCH},
    }
    path = directory / "soak.yaml"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")  # JSON is YAML
    return path


def start_server(config: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("API_KEY", "REDIS_URL", "SEARCHPORT_CONFIG", "PORT")}
    searchport = Path(sys.executable).parent / "searchport"
    with log.open("wb") as out:
        return subprocess.Popen(
            ["taskset", "-c", str(SERVER_CORE), str(searchport), "serve", "--config",
             str(config), "--port", str(port)],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )


def wait_healthy(base: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 600  # the first start builds the cities index
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"searchport exited ({server.returncode}):\n{log.read_text()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise SystemExit(f"searchport did not answer /health within 600 s:\n{log.read_text()}")


# ---------------------------------------------------------------------------------------
# /proc sampling


def process_tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def tree_rss(root: int) -> int:
    """Bytes of resident memory over the process and all its descendants."""
    total = 0
    for pid in process_tree(root):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    return total


def tree_fds(root: int) -> int:
    total = 0
    for pid in process_tree(root):
        with contextlib.suppress(OSError):
            total += len(os.listdir(f"/proc/{pid}/fd"))
    return total


def tree_cpu_ticks(root: int) -> int:
    total = 0
    for pid in process_tree(root):
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def core_times() -> dict[int, tuple[int, int]]:
    """Per core: (busy, total) jiffies since boot."""
    times = {}
    for line in Path("/proc/stat").read_text().splitlines():
        match = re.match(r"cpu(\d+)\s+(.*)", line)
        if match:
            values = [int(v) for v in match.group(2).split()]
            idle = values[3] + values[4]  # idle + iowait
            times[int(match.group(1))] = (sum(values[:8]) - idle, sum(values[:8]))
    return times


def busy_percent(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]]
                 ) -> list[float]:
    out = []
    for core in sorted(after):
        busy = after[core][0] - before.get(core, (0, 0))[0]
        total = after[core][1] - before.get(core, (0, 0))[1]
        out.append(100.0 * busy / total if total else 0.0)
    return out


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


# ---------------------------------------------------------------------------------------
# traffic


def lua_requests() -> list[tuple[str, str, str, int]]:
    found = [(m[1], m[2], m[3], int(m[4])) for m in REQUEST_LINE.finditer(LUA.read_text())]
    if not found:
        raise SystemExit(f"no requests found in {LUA}")
    return found


def check_requests(base: str, requests: list[tuple[str, str, str, int]]) -> list[str]:
    """Send every request of the cycle once; the ones whose status is not the expected one."""
    wrong = []
    with httpx.Client(base_url=base, timeout=10) as client:
        for method, path, params, expected in requests:
            params = params.replace("{n}", "1")
            if method == "POST":
                answer = client.post(path, content=params.encode(),
                                     headers={"Content-Type": "application/json"})
                shown = f"POST {path} {params}"
            else:
                query = urllib.parse.urlencode(urllib.parse.parse_qsl(params),
                                               quote_via=urllib.parse.quote)
                target = f"{path}?{query}" if query else path
                answer = client.get(target)
                shown = f"GET {path}?{params}" if params else f"GET {path}"
            if answer.status_code != expected:
                wrong.append(f"{shown}: {answer.status_code} (expected {expected}) "
                             f"{answer.text[:200]}")
    return wrong


def run_wrk(base: str, seconds: int) -> dict[str, float]:
    command = ["taskset", "-c", str(LOAD_CORE), "wrk", f"-t{THREADS}", f"-c{CONNECTIONS}",
               f"-d{seconds}s", "--timeout=5s", "-s", str(LUA), base]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    match = re.search(r"^SOAK_JSON (.*)$", done.stdout, re.M)
    if done.returncode != 0 or match is None:
        raise SystemExit(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    result: dict[str, float] = json.loads(match.group(1))
    result["socket_errors"] = sum(result[k] for k in
                                  ("err_connect", "err_read", "err_write", "err_timeout"))
    return result


# ---------------------------------------------------------------------------------------
# report


def machine() -> str:
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores, {model}, {platform.system()} {platform.release()}"


def commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def report(args: argparse.Namespace, slices: list[Slice], facts: dict[str, Any]) -> tuple[
        str, bool]:
    lines = [
        f"Soak: {args.minutes:g} min of mixed traffic ({len(facts['requests'])} requests in "
        f"the cycle, {facts['expected_4xx']} of them 4xx on purpose), {args.slice} s slices "
        f"after a {args.warmup} s warm-up.",
        "",
        f"- date: {facts['date']}",
        f"- machine: {machine()}",
        f"- commit: {commit()}",
        f"- command: `{facts['command']}`",
        f"- searchport on core {SERVER_CORE} (pid {facts['pid']}), wrk `-t{THREADS} "
        f"-c{CONNECTIONS} --timeout=5s` and the fake upstream on core {LOAD_CORE}; no cache, "
        "access log off, metrics on",
        f"- load average (1/5/15 min) at start: {facts['load_start']}, at end: "
        f"{facts['load_end']}",
        "",
        "| minute | requests | req/s | p50 ms | p99 ms | max ms | 4xx | 5xx | socket errors "
        "| RSS MiB | open files | gateway CPU % | core 0 / core 1 busy % | load 1 min |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in slices:
        w = s.wrk
        lines.append(
            f"| {s.end_s / 60:.1f} | {w['requests']:,.0f} | {w['rps']:,.0f} | "
            f"{w['p50_ms']:.1f} | {w['p99_ms']:.1f} | {w['max_ms']:.0f} | {w['s4xx']:,.0f} | "
            f"{w['s5xx']:,.0f} | {w['socket_errors']:,.0f} | {s.rss / MIB:.1f} | {s.fds} | "
            f"{s.gateway_cpu:.0f} | {' / '.join(f'{b:.0f}' for b in s.busy[:2])} | "
            f"{s.load1:.2f} |")
    requests = sum(s.wrk["requests"] for s in slices)
    seconds = sum(s.wrk["duration_s"] for s in slices)
    s4xx = sum(s.wrk["s4xx"] for s in slices)
    s5xx = sum(s.wrk["s5xx"] for s in slices)
    s3xx = sum(s.wrk["s3xx"] for s in slices)
    sockets = sum(s.wrk["socket_errors"] for s in slices)
    p99s = [s.wrk["p99_ms"] for s in slices]
    first, last = slices[0].rss, slices[-1].rss
    growth = (last - first) / first
    expected_share = facts["expected_4xx"] / len(facts["requests"])
    share = s4xx / requests if requests else 0.0
    wrong = facts["wrong_before"] + facts["wrong_after"]
    ok = s5xx == 0 and sockets == 0 and s3xx == 0 and growth < MAX_GROWTH and not wrong
    lines += [
        "",
        f"- totals: {requests:,.0f} requests in {seconds:,.0f} s ({requests / seconds:,.0f} "
        f"req/s); 5xx: {s5xx:,.0f}; socket errors: {sockets:,.0f}; 3xx: {s3xx:,.0f}; 4xx: "
        f"{s4xx:,.0f} ({share:.1%} of answers, {expected_share:.1%} expected from the cycle)",
        f"- req/s per slice: median {statistics.median(s.wrk['rps'] for s in slices):,.0f}, "
        f"min {min(s.wrk['rps'] for s in slices):,.0f}, "
        f"max {max(s.wrk['rps'] for s in slices):,.0f}",
        f"- p99 per slice: first {p99s[0]:.1f} ms, last {p99s[-1]:.1f} ms, median "
        f"{statistics.median(p99s):.1f} ms, max {max(p99s):.1f} ms",
        f"- RSS (process tree): idle before traffic {facts['rss_idle'] / MIB:.1f} MiB, after "
        f"warm-up {facts['rss_warm'] / MIB:.1f} MiB, first slice {first / MIB:.1f} MiB, last "
        f"slice {last / MIB:.1f} MiB, max {max(s.rss for s in slices) / MIB:.1f} MiB, idle "
        f"{args.settle} s after the run {facts['rss_after'] / MIB:.1f} MiB",
        f"- RSS growth after warm-up (last slice vs first slice): {growth:+.1%} "
        f"(limit {MAX_GROWTH:.0%})",
        f"- open files (process tree): {slices[0].fds} first slice, {slices[-1].fds} last "
        f"slice, {facts['fds_after']} idle after the run",
        "- every request of the cycle sent once before and after the run: "
        + ("all answered as expected" if not wrong else f"{len(wrong)} unexpected: "
           + "; ".join(wrong)),
        f"- server log: {facts['log_lines']} lines, {len(facts['log_flagged'])} with ERROR or "
        "Traceback" + "".join(f"\n  - `{line[:160]}`" for line in facts["log_flagged"][:10]),
        "",
        ("**Verdict: PASS**" if ok else "**Verdict: FAIL**")
        + f" (0 5xx and 0 socket errors required: {s5xx:,.0f} and {sockets:,.0f}; RSS growth "
        f"under {MAX_GROWTH:.0%} required: {growth:+.1%})",
    ]
    return "\n".join(lines) + "\n", ok


# ---------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--slice", type=int, default=30, help="seconds per recorded slice")
    parser.add_argument("--warmup", type=int, default=30, help="seconds of unrecorded load")
    parser.add_argument("--settle", type=int, default=5,
                        help="seconds of idle after the run before the last RSS reading")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    args = parser.parse_args()

    missing = missing_tools()
    if missing:
        print("soak: missing " + ", ".join(missing) + ". Install with: apt-get install -y "
              "nginx wrk (taskset is in util-linux, curl in curl); nothing is installed here.",
              file=sys.stderr)
        return 2
    if (os.cpu_count() or 1) < 2:
        print("soak: needs 2 cores (gateway on core 0, load on core 1)", file=sys.stderr)
        return 2
    os.sched_setaffinity(0, {LOAD_CORE})  # this script's sampling never touches core 0
    slices_n = max(1, round(args.minutes * 60 / args.slice))
    requests = lua_requests()
    facts: dict[str, Any] = {
        "date": subprocess.run(["date"], capture_output=True, text=True).stdout.strip(),
        "command": " ".join([".venv/bin/python", "bench/soak.py", *sys.argv[1:]]),
        "requests": requests,
        "expected_4xx": sum(1 for r in requests if 400 <= r[3] < 500),
        "load_start": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
    }

    started_upstream = False
    if not upstream_up():
        print("soak: starting the fake upstream", file=sys.stderr)
        upstream("start")
        started_upstream = True
    server = None
    try:
        with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
            config = write_config(Path(tmp))
            log = Path(tmp) / "server.log"
            port = args.port or free_port()
            base = f"http://127.0.0.1:{port}"
            server = start_server(config, port, log)
            facts["pid"] = server.pid
            wait_healthy(base, server, log)
            time.sleep(2)
            facts["rss_idle"] = tree_rss(server.pid)
            print(f"soak: searchport up on {base} (pid {server.pid}), idle RSS "
                  f"{facts['rss_idle'] / MIB:.1f} MiB", file=sys.stderr)
            facts["wrong_before"] = check_requests(base, requests)
            if facts["wrong_before"]:
                raise SystemExit("soak: unexpected answers before the run (fix bench/soak.lua "
                                 "or the setup):\n  " + "\n  ".join(facts["wrong_before"]))

            run_wrk(base, args.warmup)
            facts["rss_warm"] = tree_rss(server.pid)
            print(f"soak: warm-up done, RSS {facts['rss_warm'] / MIB:.1f} MiB",
                  file=sys.stderr)
            slices: list[Slice] = []
            start = time.monotonic()
            for number in range(slices_n):
                cores, cpu, t0 = core_times(), tree_cpu_ticks(server.pid), time.monotonic()
                result = run_wrk(base, args.slice)
                elapsed = time.monotonic() - t0
                ticks = tree_cpu_ticks(server.pid) - cpu
                one = Slice(
                    end_s=time.monotonic() - start, wrk=result, rss=tree_rss(server.pid),
                    fds=tree_fds(server.pid), load1=load1(),
                    busy=busy_percent(cores, core_times()),
                    gateway_cpu=100.0 * ticks / os.sysconf("SC_CLK_TCK") / elapsed,
                )
                slices.append(one)
                print(f"soak: slice {number + 1}/{slices_n}: {result['rps']:,.0f} req/s, "
                      f"p99 {result['p99_ms']:.1f} ms, 5xx {result['s5xx']:.0f}, socket "
                      f"errors {result['socket_errors']:.0f}, RSS {one.rss / MIB:.1f} MiB, "
                      f"load {one.load1:.2f}", file=sys.stderr)
                if server.poll() is not None:
                    raise SystemExit(f"searchport died ({server.returncode}):\n"
                                     f"{log.read_text()[-4000:]}")
            time.sleep(args.settle)
            facts["rss_after"] = tree_rss(server.pid)
            facts["fds_after"] = tree_fds(server.pid)
            facts["wrong_after"] = check_requests(base, requests)
            facts["load_end"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
            stop(server)
            server_log = log.read_text(errors="replace").splitlines()
            facts["log_lines"] = len(server_log)
            facts["log_flagged"] = [line for line in server_log
                                    if "Traceback" in line or "ERROR" in line]
    finally:
        if server is not None:
            stop(server)
        if started_upstream:
            upstream("stop")

    text, ok = report(args, slices, facts)

    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
