#!/usr/bin/env python3
"""Search latency of the demo over HTTP at one connection (bench/RESULTS.md, "Relevance").

    .venv/bin/python bench/one_connection.py paris             # this checkout
    git archive <rev> src | tar -x -C /tmp/base                # an older revision...
    .venv/bin/python bench/one_connection.py paris --src /tmp/base/src

Serves the demo handle (that checkout's demo config, its index built in a temporary folder,
access log off) with ``searchport serve`` and one worker, then sends the requests one at a
time with httpx and prints p50 and p95. Cases: ``paris`` (``q=paris&facets=region,country&
highlight=true``, 600 times), ``rotate`` (the same with 20 city names in turn), ``sets``
(``q=`` each query of ``relevance.py``'s sets, the demo's default facets and highlights).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

CITIES = ["paris", "london", "berlin", "tokyo", "new york", "madrid", "rome", "lima", "cairo",
          "delhi", "moscow", "sydney", "toronto", "mexico", "seoul", "bangkok", "lagos",
          "dubai", "istanbul", "vienna"]
FACETED = {"facets": "region,country", "highlight": "true"}


def requests(case: str) -> list[dict[str, str]]:
    if case == "paris":
        return [{"q": "paris", **FACETED}] * 600
    if case == "rotate":
        return [{"q": city, **FACETED} for city in CITIES] * 30
    import relevance

    sets = relevance.query_sets(relevance.load_rows())
    return [{"q": text} for queries in sets.values() for text, _ in queries]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(src: Path, folder: Path, port: int) -> subprocess.Popen[bytes]:
    demo = src / "demo"
    config = (demo / "config.yaml").read_text(encoding="utf-8").replace(
        "__DEMO_SOURCE__", json.dumps(str((demo / "cities.jsonl.gz").resolve())))
    (folder / "config.yaml").write_text(config + '\naccessLog: "off"\n', encoding="utf-8")
    env = dict(os.environ)
    if src.resolve() != (ROOT / "src").resolve():  # import that checkout's package
        package = Path(tempfile.mkdtemp(prefix="searchport-src-"))
        os.symlink(src.resolve(), package / "searchport")
        env["PYTHONPATH"] = str(package)
    return subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "searchport"), "serve", "--config",
         str(folder / "config.yaml"), "--port", str(port), "--workers", "1"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case", choices=["paris", "rotate", "sets"])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src folder")
    args = parser.parse_args()
    sent = requests(args.case)
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="searchport-latency-") as tmp:
        server = serve(Path(args.src), Path(tmp), port)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                deadline = time.monotonic() + 180  # the first start builds the index
                while True:
                    try:
                        if client.get("/health").status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("searchport did not start")
                    time.sleep(0.2)
                for params in sent[:50]:  # warm up
                    client.get("/cities/search", params=params)
                timings = []
                for params in sent:
                    started = time.perf_counter()
                    answer = client.get("/cities/search", params=params)
                    timings.append((time.perf_counter() - started) * 1000)
                    answer.raise_for_status()
            timings.sort()
            print(f"{args.case}: p50 {statistics.median(timings):.2f} ms, p95 "
                  f"{timings[int(len(timings) * 0.95)]:.2f} ms over {len(timings)} requests")
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
