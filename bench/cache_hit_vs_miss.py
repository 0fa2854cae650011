#!/usr/bin/env python3
"""Response cache: hit vs miss throughput, side by side, for each cache backend.

The demo config (tantivy cities) behind granian pinned to core 0; wrk on core 1 (32
connections); redis-server (its own, on a free port) shares core 1 with wrk. Every request
is the same search (q, two facets, highlight) with a `population >= -N` filter that matches
every city:
- hit: N is fixed, so after the first request every answer comes from the cache;
- miss: N grows with every request (a wrk script), so every request is a new key and goes to
  the engine, paying the cache's lookup and write on top;
- `none` is the same request with no cache at all, for the cost of a miss's cache work.
Rounds interleave the backends; medians are reported.

    apt-get install -y wrk redis-server
    .venv/bin/python bench/cache_hit_vs_miss.py [--rounds 3] [--seconds 5]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.redis_server import RedisServer  # noqa: E402

BIN = Path(sys.executable).parent
SEARCH = "/cities/search?q=paris&facets=region,country&highlight=true&filters="
FILTER_HEAD = "%7B%22population%22%3A%7B%22min%22%3A-"  # {"population":{"min":-
FILTER_TAIL = "%7D%7D"  # }}
MISS_SCRIPT = """
local n = 0
local head, tail
init = function(args) head = args[1]; tail = args[2] end
request = function()
  n = n + 1
  return wrk.format("GET", head .. n .. tail)
end
"""
BACKENDS: dict[str, dict[str, Any]] = {
    "none": {"backend": "none"},
    "memory": {"backend": "memory"},
    "redis + process tier": {"backend": "redis", "localTtl": 5},
    "redis only": {"backend": "redis", "localTtl": 0},
}


def write_config(directory: Path, cache: dict[str, Any], redis_url: str) -> Path:
    config = yaml.safe_load((ROOT / "config.example.yaml").read_text(encoding="utf-8"))
    cities = config["indexes"]["cities"]
    cities["path"] = str(ROOT / ".searchport" / "indexes" / "cities")
    cities["source"] = str(ROOT / "src" / "demo" / "cities.jsonl.gz")
    config["cache"] = {**cache, "searchTtl": 600}
    if cache["backend"] == "redis":
        config["cache"]["url"] = redis_url
    config["apiKey"] = ""
    path = directory / f"config-{len(list(directory.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def wait(url: str) -> None:
    for _ in range(300):
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


def wrk(url: str, seconds: int, script: Path | None = None, *args: str) -> tuple[float, float]:
    command = ["taskset", "-c", "1", "wrk", "-t1", "-c32", f"-d{seconds}s", "--latency"]
    if script is not None:
        command += ["-s", str(script)]
    out = subprocess.run([*command, url, *(["--", *args] if args else [])],
                         capture_output=True, text=True, check=True).stdout
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if errors:
        raise RuntimeError(f"{errors.group(1)} failed requests:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]  # type: ignore[union-attr]
    return rps, float(p99.group(1)) * scale  # type: ignore[union-attr]


def measure(config: Path, seconds: int, script: Path, port: int) -> dict[str, tuple[float, float]]:
    env = {**os.environ, "SEARCHPORT_CONFIG": str(config)}
    server = subprocess.Popen(
        ["taskset", "-c", "0", str(BIN / "granian"), "--interface", "asgi", "--factory",
         "--no-ws", "--port", str(port), "searchport.entrypoints.asgi:create"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait(base + "/health")
        hit_url = base + SEARCH + FILTER_HEAD + "1" + FILTER_TAIL
        wrk(hit_url, 1)  # warm-up (also fills the cache)
        results = {"hit": wrk(hit_url, seconds)}
        results["miss"] = wrk(base + "/", seconds, script, SEARCH + FILTER_HEAD, FILTER_TAIL)
        return results
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        script = directory / "miss.lua"
        script.write_text(MISS_SCRIPT, encoding="utf-8")
        (directory / "configs").mkdir()
        redis = RedisServer(directory)
        redis.start()
        try:
            configs = {name: write_config(directory / "configs", cache, redis.url)
                       for name, cache in BACKENDS.items()}
            subprocess.run([str(BIN / "searchport"), "index", "build", "--config",
                            str(configs["none"])], check=True, capture_output=True)
            runs: dict[str, list[dict[str, tuple[float, float]]]] = {n: [] for n in BACKENDS}
            for round_no in range(args.rounds):
                order = list(BACKENDS) if round_no % 2 == 0 else list(reversed(BACKENDS))
                for name in order:
                    redis.client().flushdb()  # the benchmark's own server: nothing else in it
                    runs[name].append(measure(configs[name], args.seconds, script, 8790))
        finally:
            redis.stop()
    print("| cache | miss req/s | hit req/s | hit / miss | miss p99 ms | hit p99 ms |")
    print("|---|---|---|---|---|---|")
    for name, measured in runs.items():
        miss = statistics.median(r["miss"][0] for r in measured)
        hit = statistics.median(r["hit"][0] for r in measured)
        miss_p99 = statistics.median(r["miss"][1] for r in measured)
        hit_p99 = statistics.median(r["hit"][1] for r in measured)
        print(f"| {name} | {miss:,.0f} | {hit:,.0f} | {hit / miss:.1f}x | {miss_p99:.1f} | "
              f"{hit_p99:.1f} |")


if __name__ == "__main__":
    main()
