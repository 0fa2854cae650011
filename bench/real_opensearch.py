#!/usr/bin/env python3
"""What searchport costs in front of a real OpenSearch: the same searches sent to the node
directly and through the gateway, side by side in one run.

    .venv/bin/python bench/real_opensearch.py                  # 3 rounds of 10 s per case
    .venv/bin/python bench/real_opensearch.py --rounds 5 --duration 15

Starts the tests' OpenSearch node (``tests/servers/opensearch``, 512 MiB heap) on core 1 and
loads the demo's 34,000 cities into it, then serves them with ``searchport serve`` (one
worker, core 0, access log off, the query log on as by default) over a handle of the node.
Each query of ``CITIES`` is asked with ``facets=region,country&highlight=true``; the body
searchport sends the node for it is recorded once through a small recording proxy, so that
the direct case sends OpenSearch exactly the same searches. wrk (on core 1, beside the
engine, in every case) sends them in turn: one connection (latency: p50 and p99) and eight
(throughput, the engine the bottleneck), interleaved rounds. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import gzip
import http.server
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
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.servers import opensearch  # noqa: E402

CITIES = ["paris", "london", "berlin", "tokyo", "new york", "madrid", "rome", "lima", "cairo",
          "delhi", "moscow", "sydney", "toronto", "mexico", "seoul", "bangkok", "lagos",
          "dubai", "istanbul", "vienna"]
PARAMS = "facets=region,country&highlight=true"
MAPPING = {
    "properties": {
        "name": {"type": "text", "fields": {"keyword": {"type": "keyword"}}},
        "alternateNames": {"type": "text"},
        "country": {"type": "keyword"}, "countryCode": {"type": "keyword"},
        "continent": {"type": "keyword"}, "timezone": {"type": "keyword"},
        "currency": {"type": "keyword"}, "languages": {"type": "keyword"},
        "population": {"type": "long"}, "capital": {"type": "boolean"},
        "location": {"type": "geo_point"},
        "lvl0": {"type": "keyword"}, "lvl1": {"type": "keyword"},
    }
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def call(url: str, method: str = "GET", body: bytes | None = None,
         content_type: str = "application/json") -> Any:
    request = urllib.request.Request(url, data=body, method=method,
                                     headers={"Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def load_cities(url: str) -> int:
    call(f"{url}/cities", "PUT", json.dumps({
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": MAPPING}).encode())
    with gzip.open(ROOT / "src" / "demo" / "cities.jsonl.gz", "rt", encoding="utf-8") as rows:
        lines = [json.loads(line) for line in rows]
    for start in range(0, len(lines), 5000):
        chunk = "".join(json.dumps({"index": {"_id": row["id"]}}) + "\n" + json.dumps(row) + "\n"
                        for row in lines[start:start + 5000])
        answer = call(f"{url}/cities/_bulk", "POST", chunk.encode(), "application/x-ndjson")
        if answer.get("errors"):
            raise RuntimeError("bulk indexing failed")
    call(f"{url}/cities/_refresh", "POST", b"")
    call(f"{url}/cities/_forcemerge?max_num_segments=1", "POST", b"")
    return len(lines)


def config(host: str, port: int) -> str:
    return json.dumps({
        "host": "127.0.0.1", "port": port, "accessLog": "off", "cache": {"backend": "none"},
        "indexes": {"cities": {
            "engine": "opensearch", "host": host, "indexName": "cities",
            "fields": {"name": {"weight": 3}, "region": {"field": "continent"}},
            "defaults": {"perPage": 20},
        }},
    })


class Recorder(http.server.ThreadingHTTPServer):
    """A proxy to the node that keeps the body of each search it forwards."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.searches: list[bytes] = []
        super().__init__(("127.0.0.1", 0), _Forward)


class _Forward(http.server.BaseHTTPRequestHandler):
    server: Recorder

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if self.command == "POST" and self.path.split("?")[0].endswith("/_search") and body:
            self.server.searches.append(body)
        request = urllib.request.Request(self.server.upstream + self.path, data=body,
                                         method=self.command,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            content = answer.read()
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    do_GET = do_POST = _forward

    def log_message(self, *args: Any) -> None:
        pass


def serve(searchport: str, config_file: Path, port: int, workdir: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        ["taskset", "-c", "0", searchport, "serve", "--config", str(config_file)],
        cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            call(f"http://127.0.0.1:{port}/cities/search?q=paris")
            return process
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("searchport did not serve within 60 s")


def record_bodies(searchport: str, node: str, workdir: Path) -> list[bytes]:
    proxy = Recorder(node)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    port = free_port()
    config_file = workdir / "record.yaml"
    config_file.write_text(config(f"http://127.0.0.1:{proxy.server_address[1]}", port))
    process = serve(searchport, config_file, port, workdir)
    try:
        proxy.searches.clear()
        bodies = []
        for city in CITIES:
            call(f"http://127.0.0.1:{port}/cities/search?q={city.replace(' ', '+')}&{PARAMS}")
            bodies.append(proxy.searches[-1])
        return bodies
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        proxy.shutdown()


def lua(requests: list[tuple[str, str, bytes | None]], path: Path) -> Path:
    """A wrk script sending ``requests`` (method, path, body) in turn."""
    def one(method: str, target: str, body: bytes | None) -> str:
        headers = '{["Content-Type"]="application/json"}' if body else "nil"
        text = json.dumps(body.decode()) if body else "nil"
        return f"  wrk.format({json.dumps(method)}, {json.dumps(target)}, {headers}, {text})"

    items = ",\n".join(one(*request) for request in requests)
    path.write_text("local all = {\n" + items + "\n}\nlocal i = 0\n"
                    "request = function()\n  i = i % #all + 1\n  return all[i]\nend\n")
    return path


LATENCY = re.compile(r"^\s+(50|99)(?:\.000)?%\s+([\d.]+)(us|ms|s)\s*$", re.M)
SCALE = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def wrk(url: str, script: Path, connections: int, duration: int) -> dict[str, float]:
    done = subprocess.run(
        ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency",
         "-s", str(script), url], capture_output=True, text=True, check=True)
    out = done.stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise RuntimeError(f"{errors.group(1)} failed answers from {url}:\n{out}")
    found = {p: float(v) * SCALE[unit] for p, v, unit in LATENCY.findall(out)}
    return {"rps": rate, "p50": found["50"], "p99": found["99"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--searchport", default=shutil.which("searchport")
                        or str(ROOT / ".venv" / "bin" / "searchport"))
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is missing: apt-get install -y wrk", file=sys.stderr)
        return 1
    workdir = Path(tempfile.mkdtemp(prefix="searchport-bench-opensearch-"))
    node = opensearch.OpenSearchServer(workdir / "node", cpus="1")
    gateway: subprocess.Popen[bytes] | None = None
    try:
        node.start()
        print(f"OpenSearch ready in {node.started_in:.1f} s; "
              f"{load_cities(node.url)} cities loaded", flush=True)
        bodies = record_bodies(args.searchport, node.url, workdir)
        port = free_port()
        (workdir / "gateway.yaml").write_text(config(node.url, port))
        gateway = serve(args.searchport, workdir / "gateway.yaml", port, workdir)
        direct = lua([("POST", "/cities/_search", body) for body in bodies],
                     workdir / "direct.lua")
        through = lua([("GET", f"/cities/search?q={c.replace(' ', '+')}&{PARAMS}", None)
                       for c in CITIES], workdir / "gateway.lua")
        cases = {"opensearch": (node.url, direct),
                 "searchport": (f"http://127.0.0.1:{port}", through)}
        for url, script in cases.values():  # warm both: JIT, caches, connections
            wrk(url, script, 8, 10)
        results: dict[tuple[str, int], list[dict[str, float]]] = {}
        for round_no in range(args.rounds):
            for connections in (1, 8):
                for name, (url, script) in cases.items():
                    figure = wrk(url, script, connections, args.duration)
                    results.setdefault((name, connections), []).append(figure)
                    print(f"round {round_no + 1} {name} c={connections}: "
                          f"{figure['rps']:.0f} req/s p50 {figure['p50']:.2f} ms "
                          f"p99 {figure['p99']:.2f} ms", flush=True)
        report(results)
        rss = node.resident_bytes()
        print(f"\nOpenSearch resident after the run: {rss / 2**20:.0f} MiB")
    finally:
        if gateway is not None:
            os.killpg(gateway.pid, signal.SIGTERM)
            gateway.wait(timeout=30)
        node.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def report(results: dict[tuple[str, int], list[dict[str, float]]]) -> None:
    def median(name: str, connections: int, key: str) -> float:
        return statistics.median(r[key] for r in results[(name, connections)])

    print("\n| connections | figure | OpenSearch direct | through searchport | searchport's part |")
    print("|---|---|---|---|---|")
    for key in ("p50", "p99"):
        direct, through = median("opensearch", 1, key), median("searchport", 1, key)
        print(f"| 1 | {key} latency | {direct:.2f} ms | {through:.2f} ms | "
              f"+{through - direct:.2f} ms |")
    direct, through = median("opensearch", 8, "rps"), median("searchport", 8, "rps")
    print(f"| 8 | throughput | {direct:.0f} req/s | {through:.0f} req/s | "
          f"{through / direct:.3f} x |")


if __name__ == "__main__":
    sys.exit(main())
