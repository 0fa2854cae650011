#!/usr/bin/env python3
"""What searching by meaning costs on the built-in demo: hybrid searches beside keyword
searches, on one core, and the memory and disk the ``semantic`` extra takes.

    .venv/bin/python bench/semantic_latency.py                     # 3 rounds, a few minutes
    .venv/bin/python bench/semantic_latency.py --rounds 5 --latency-seconds 8
    .venv/bin/python bench/semantic_latency.py --no-install-size   # the server's figures only
    .venv/bin/python bench/semantic_latency.py --work /tmp/semlat  # keep the demo's index

``searchport serve`` with no config (the built-in demo; this interpreter's install, which
must have the ``semantic`` extra, so that ``places`` has its vectors), one worker, pinned to
core 0 (``taskset``); its index and vectors are built in a temporary XDG cache, or in
``--work``, kept for the next run. wrk (one thread) on core 1 sends
``GET /places/search?q=...`` with the demo's defaults (20 hits, highlights, facets region,
country and capital), every text four words of the places' descriptions:

- ``keyword``: a new text on every request (no cache answers any: the demo serves with
  ``cache: none``);
- ``hybrid, new text``: ``&semantic=0.5``, a text never sent before on every request, so
  that its embedding is computed on that request (every text of the run is distinct);
- ``hybrid, cached embedding``: ``&semantic=0.5`` over 200 texts whose embeddings were
  computed just before (kept by the worker: up to 1,024 a handle), each asked for pages 1
  to 5 in turn, so that only the embedding is reused: with an answer cache on, no request
  would be answered from it either (and the demo has none).

Latency: one keep-alive connection, p50 and p95 of each case, rounds interleaved, medians
over the rounds. Throughput: eight connections, keyword against each hybrid case on the
same core, the ratio of the medians. Memory: the worker's resident size (VmRSS) before the
load and sampled while loaded (every keyword text new too, so the embedded engine's caches
of built text queries fill as under any traffic of new texts, vectors or not), and its peak
since it started (VmHWM, the model's load included). Disk: a temporary virtual
environment, ``pip install`` of this tree without and then with the ``semantic`` extra
(pip's cache makes it quick), ``du`` of its site-packages each time.

Every hybrid answer is checked not to be degraded to words (``X-Searchport-Semantic``), and
every answer to be a 200. Prints a Markdown table with the targets of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import re
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
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER_CORE, LOAD_CORE = "0", "1"
CONNECTIONS = 8
WORDS = 4  # words in each query text
POOL = 200  # texts of the cached-embedding case (the worker keeps 1,024 a handle)
PAGES = 5
SHARE = "0.5"
NEW_TEXTS_PER_RUN = 10_000_000  # each run's own range of text numbers: no text twice
STARTED: list[subprocess.Popen[bytes]] = []

# request(): the path of the n-th text of the run (its words the base-len(words) digits of
# start + n); pool > 0: the n-th request asks text n % pool, page n // pool % pages + 1
LUA = """
local words = {%s}
local base = #words
local start, pool, pages, extra = 0, 0, 1, ""
local n = 0
degraded, failed = 0, 0
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  start = tonumber(args[1])
  pool = tonumber(args[2])
  pages = tonumber(args[3])
  extra = args[4] or ""
end

local function text(k)
  local parts = {}
  for i = 1, %d do
    parts[i] = words[k %% base + 1]
    k = math.floor(k / base)
  end
  return table.concat(parts, "+")
end

function request()
  local k, page = start + n, 1
  if pool > 0 then
    k = start + n %% pool
    page = math.floor(n / pool) %% pages + 1
  end
  n = n + 1
  return wrk.format("GET", "/places/search?q=" .. text(k) .. "&page=" .. page .. extra)
end

function response(status, headers, body)
  if status ~= 200 then
    failed = failed + 1
  end
  if headers["x-searchport-semantic"] or headers["X-Searchport-Semantic"] then
    degraded = degraded + 1
  end
end

function done(summary, latency, requests)
  local bad, late = 0, 0
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("failed")
    late = late + thread:get("degraded")
  end
  io.write(string.format("RESULT {\\"requests\\": %%d, \\"seconds\\": %%f, \\"errors\\": %%d, "
    .. "\\"failed\\": %%d, \\"degraded\\": %%d, \\"p50\\": %%d, \\"p95\\": %%d}\\n",
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout, bad, late,
    latency:percentile(50), latency:percentile(95)))
end
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def vocabulary() -> list[str]:
    """The 256 most frequent words (four letters or more) of the places' descriptions."""
    from searchport import demo

    counts: collections.Counter[str] = collections.Counter()
    with gzip.open(demo.PLACES, "rt", encoding="utf-8") as rows:
        for line in rows:
            description = json.loads(line).get("description") or ""
            counts.update(w for w in re.findall(r"[a-z]+", description.lower()) if len(w) >= 4)
    return [word for word, _ in counts.most_common(256)]


def status_mib(pid: int) -> dict[str, float]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) / 1024
    return found


def process_tree(pid: int) -> list[int]:
    found = [pid]
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        found.extend(process_tree(int(child)))
    return found


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Server:
    """The demo served on core 0: its URL, the worker's pid, and the peak VmRSS seen while
    watched."""

    def __init__(self, work: Path) -> None:
        port = free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SEARCHPORT_") and k not in ("PORT", "PYTHONPATH")}
        env["XDG_CACHE_HOME"] = str(work / "cache")
        self.log = work / "searchport.log"
        self.process = subprocess.Popen(
            ["taskset", "-c", SERVER_CORE, sys.executable, "-m", "searchport.entrypoints.cli",
             "serve", "--port", str(port), "--workers", "1"],
            cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=self.log.open("wb"))
        STARTED.append(self.process)
        self.url = f"http://127.0.0.1:{port}"
        started = time.monotonic()
        self._wait(600)  # the first start builds the index and computes the vectors
        print(f"the demo answered after {time.monotonic() - started:.0f} s", flush=True)
        self.worker = process_tree(self.process.pid)[-1]
        self.idle_rss = status_mib(self.worker)["VmRSS"]  # started, not yet loaded
        self.peak_rss = 0.0

    def _wait(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"searchport exited with {self.process.returncode}: "
                                 f"{self.log.read_text(errors='replace')[-2000:]}")
            try:
                answer = self.get(f"/places/search?q=port&semantic={SHARE}")
                if not answer[1]:
                    return
                raise SystemExit("the demo's places are not searched by meaning: install the "
                                 "semantic extra (pip install -e '.[semantic]')")
            except urllib.error.HTTPError as exc:
                raise SystemExit(f"the demo's places answered {exc.code} to a hybrid search "
                                 f"(is the semantic extra installed? pip install -e "
                                 f"'.[semantic]'): {exc.read()[:300]!r}") from None
            except OSError:
                time.sleep(0.3)
        raise SystemExit(f"{self.url} did not answer within {seconds:.0f} s")

    def get(self, path: str) -> tuple[Any, str | None]:
        """The JSON answer to ``path`` and its ``X-Searchport-Semantic`` header."""
        with urllib.request.urlopen(self.url + path, timeout=30) as answer:
            return json.loads(answer.read()), answer.headers.get("X-Searchport-Semantic")

    def watch(self) -> threading.Event:
        """Sample the worker's VmRSS until the event returned is set."""
        running = threading.Event()
        running.set()

        def sample() -> None:
            while running.is_set():
                self.peak_rss = max(self.peak_rss, status_mib(self.worker)["VmRSS"])
                time.sleep(0.1)

        threading.Thread(target=sample, daemon=True).start()
        return running


class Load:
    """wrk runs against the server; each run of new texts gets its own range of texts."""

    def __init__(self, server: Server, script: Path) -> None:
        self.server, self.script = server, script
        self.runs = 0

    def run(self, case: str, seconds: float, connections: int) -> dict[str, float]:
        self.runs += 1
        start = self.runs * NEW_TEXTS_PER_RUN  # the pool's texts are 0..POOL-1
        args = {"keyword": [str(start), "0", "1", ""],
                "hybrid, new text": [str(start), "0", "1", f"&semantic={SHARE}"],
                "hybrid, cached embedding": ["0", str(POOL), str(PAGES),
                                             f"&semantic={SHARE}"]}[case]
        if case == "hybrid, cached embedding":
            self.warm_pool()
        watching = self.server.watch()
        try:
            out = subprocess.run(
                ["taskset", "-c", LOAD_CORE, "wrk", "-t1", f"-c{connections}",
                 f"-d{seconds:g}s", "--timeout", "10s", "-s", str(self.script),
                 self.server.url, "--", *args],
                capture_output=True, text=True, check=True).stdout
        finally:
            watching.clear()
        line = next((x for x in out.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            raise SystemExit(f"wrk printed no result:\n{out}")
        found = json.loads(line.removeprefix("RESULT "))
        if not found["requests"]:
            raise SystemExit(f"{case}: no request answered in {seconds:g} s:\n{out}")
        if found["errors"] or found["failed"] or found["degraded"]:
            raise SystemExit(f"{case}: {found['errors']} socket errors, {found['failed']} "
                             f"answers not 200, {found['degraded']} degraded to words:\n{out}")
        return {"rps": found["requests"] / found["seconds"], "p50": found["p50"] / 1000,
                "p95": found["p95"] / 1000}

    def warm_pool(self) -> None:
        """The pool's embeddings computed (again: the new texts since pushed them out)."""
        words = self.words
        for k in range(POOL):
            parts = []
            for _ in range(WORDS):
                parts.append(words[k % len(words)])
                k //= len(words)
            _, degraded = self.server.get(f"/places/search?q={'+'.join(parts)}"
                                          f"&semantic={SHARE}&perPage=1")
            if degraded:
                raise SystemExit("the pool's embedding degraded to words")

    words: list[str] = []


def install_size(work: Path) -> tuple[float, float] | None:
    """MB (10^6 bytes) of site-packages after ``pip install`` of this tree, without and
    with the ``semantic`` extra; None when pip fails (offline, say)."""
    venv = work / "size-venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
               "--disable-pip-version-check"]
        site = next((venv / "lib").glob("python3*/site-packages"))
        sizes = []
        for target in (str(ROOT), f"{ROOT}[semantic]"):
            subprocess.run([*pip, target], check=True, stdout=subprocess.DEVNULL)
            du = subprocess.run(["du", "-s", "--block-size=1", str(site)], check=True,
                                capture_output=True, text=True).stdout
            sizes.append(int(du.split()[0]) / 1e6)
        return sizes[0], sizes[1]
    except (subprocess.CalledProcessError, StopIteration) as exc:
        print(f"the install size was not measured: {exc}", flush=True)
        return None
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def verdict(holds: bool) -> str:
    return "yes" if holds else "no"


def report(latency: dict[str, list[dict[str, float]]],
           throughput: dict[str, list[dict[str, float]]],
           memory: tuple[float, float, float], sizes: tuple[float, float] | None) -> None:
    keyword = median(latency["keyword"], "p50")
    print("\n| case | p50 (1 connection) | p95 | p50 minus keyword's | req/s (8 connections) "
          "| ratio to keyword's req/s |")
    print("|---|---|---|---|---|---|")
    keyword_rps = median(throughput["keyword"], "rps")
    for case, runs in latency.items():
        rps = median(throughput[case], "rps")
        print(f"| {case} | {median(runs, 'p50'):.2f} ms | {median(runs, 'p95'):.2f} ms | "
              f"{median(runs, 'p50') - keyword:+.2f} ms | {rps:,.0f} | "
              f"{rps / keyword_rps:.3f} |")
    new = median(latency["hybrid, new text"], "p50") - keyword
    cached = median(latency["hybrid, cached embedding"], "p50") - keyword
    ratio_cached = median(throughput["hybrid, cached embedding"], "rps") / keyword_rps
    ratio_new = median(throughput["hybrid, new text"], "rps") / keyword_rps
    print("\n| target | measured | holds? |")
    print("|---|---|---|")
    print(f"| hybrid p50, new text ≤ keyword + 5 ms | {new:+.2f} ms | {verdict(new <= 5)} |")
    print(f"| hybrid p50, cached embedding ≤ keyword + 1 ms | {cached:+.2f} ms | "
          f"{verdict(cached <= 1)} |")
    print(f"| hybrid throughput at 8 connections ≥ 0.5 of keyword's | {ratio_cached:.3f} "
          f"(cached embeddings), {ratio_new:.3f} (new texts) | "
          f"{verdict(min(ratio_cached, ratio_new) >= 0.5)} |")
    idle, rss, hwm = memory
    print(f"| the worker's resident memory under load < 250 MiB | {rss:.0f} MiB (VmRSS, "
          f"peak sampled; {idle:.0f} MiB before the load; VmHWM {hwm:.0f} MiB) | "
          f"{verdict(rss < 250)} |")
    if sizes is not None:
        added = sizes[1] - sizes[0]
        print(f"| the semantic extra adds < 200 MB on disk | {added:.0f} MB ({sizes[0]:.0f} → "
              f"{sizes[1]:.0f} MB of site-packages) | {verdict(added < 200)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-seconds", type=float, default=5,
                        help="seconds of each case at one connection, per round")
    parser.add_argument("--throughput-seconds", type=float, default=6,
                        help="seconds of each case at eight connections, per round")
    parser.add_argument("--no-install-size", action="store_true",
                        help="leave out the install size (no temporary virtualenv)")
    parser.add_argument("--work", type=Path,
                        help="use and keep this folder: a later run reuses the demo's index")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on the way out
    for tool in ("wrk", "taskset", "du"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed")
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("two cores are needed: the server on core 0, wrk on core 1")
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="searchport-semlat-"))
    cases = ["keyword", "hybrid, new text", "hybrid, cached embedding"]
    try:
        Load.words = vocabulary()
        script = work / "semantic_latency.lua"
        script.write_text(LUA % (", ".join(json.dumps(w) for w in Load.words), WORDS),
                          encoding="utf-8")
        server = Server(work)
        load = Load(server, script)
        for case in cases:  # warm: the page cache, the allocator, the model's first runs
            load.run(case, 2, CONNECTIONS)
        latency: dict[str, list[dict[str, float]]] = {c: [] for c in cases}
        throughput: dict[str, list[dict[str, float]]] = {c: [] for c in cases}
        print(f"{len(Load.words)} words, {WORDS} a text; server on core {SERVER_CORE}, wrk on "
              f"core {LOAD_CORE}; {args.rounds} rounds", flush=True)
        for round_number in range(args.rounds):
            order = cases if round_number % 2 == 0 else cases[::-1]
            for case in order:
                found = load.run(case, args.latency_seconds, 1)
                latency[case].append(found)
                print(f"round {round_number + 1} 1 connection  {case:25s} p50 "
                      f"{found['p50']:6.2f} ms  p95 {found['p95']:6.2f} ms", flush=True)
            for case in order:
                found = load.run(case, args.throughput_seconds, CONNECTIONS)
                throughput[case].append(found)
                print(f"round {round_number + 1} {CONNECTIONS} connections {case:25s} "
                      f"{found['rps']:8,.0f} req/s", flush=True)
        memory = status_mib(server.worker)
        rss, hwm, idle = server.peak_rss, memory["VmHWM"], server.idle_rss
        stop(server.process)
        sizes = None if args.no_install_size else install_size(work)
        report(latency, throughput, (idle, rss, hwm), sizes)
    finally:
        for process in STARTED:
            stop(process)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
