#!/usr/bin/env python3
"""Which ASGI server should run searchport? granian vs uvicorn (uvloop + httptools).

Each server runs the same app (the demo config, tantivy cities) pinned to core 0; wrk runs
on core 1. Rounds interleave the servers so drift hits both alike; medians are reported.

    .venv/bin/pip install 'uvicorn[standard]'      # only for this comparison
    apt-get install -y wrk
    .venv/bin/python bench/server_choice.py [--rounds 3] [--seconds 5]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CASES = {
    "health": "/health",
    "search": "/cities/search?q=paris&facets=region,country&highlight=true",
}
SERVERS = {
    "granian": [str(BIN / "granian"), "--interface", "asgi", "--factory", "--no-ws",
                "--port", "{port}", "searchport.entrypoints.asgi:create"],
    "uvicorn": [str(BIN / "uvicorn"), "--factory", "--loop", "uvloop", "--http", "httptools",
                "--no-access-log", "--log-level", "warning", "--port", "{port}",
                "searchport.entrypoints.asgi:create"],
}


def wait(url: str) -> None:
    for _ in range(300):
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


def wrk(url: str, seconds: int) -> tuple[float, float]:
    out = subprocess.run(
        ["taskset", "-c", "1", "wrk", "-t1", "-c32", f"-d{seconds}s", "--latency", url],
        capture_output=True, text=True, check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]  # type: ignore[union-attr]
    return rps, float(p99.group(1)) * scale  # type: ignore[union-attr]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    env = {**os.environ, "SEARCHPORT_CONFIG": str(ROOT / "config.example.yaml")}
    subprocess.run([str(BIN / "searchport"), "index", "build", "--config",
                    env["SEARCHPORT_CONFIG"]], check=True, capture_output=True)
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_no in range(args.rounds):
        order = list(SERVERS) if round_no % 2 == 0 else list(reversed(SERVERS))
        for name in order:
            port = 8700 + list(SERVERS).index(name)
            cmd = [part.format(port=port) for part in SERVERS[name]]
            proc = subprocess.Popen(["taskset", "-c", "0", *cmd], cwd=ROOT, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                base = f"http://127.0.0.1:{port}"
                wait(base + "/health")
                for case, path in CASES.items():
                    wrk(base + path, 1)  # warm-up
                    results.setdefault((name, case), []).append(wrk(base + path, args.seconds))
            finally:
                proc.terminate()
                proc.wait()
    print("| server | case | req/s (median) | p99 ms (median) |")
    print("|---|---|---|---|")
    for (name, case), runs in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        rps = statistics.median(r for r, _ in runs)
        p99 = statistics.median(p for _, p in runs)
        print(f"| {name} | {case} | {rps:,.0f} | {p99:.1f} |")


if __name__ == "__main__":
    main()
