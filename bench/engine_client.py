#!/usr/bin/env python3
"""CPU per engine exchange of the network under the server engines: searchport's own
HTTP/1.1 client (``Http1Exchange``) against aiohttp's (when aiohttp is installed: the
exchange searchport used before, rebuilt here with the same settings), both with
``--inflight`` requests in flight on one event loop (uvloop) against a local HTTP server.

    taskset -c 0 .venv/bin/python bench/engine_client.py --url http://127.0.0.1:9201/bench/_search

The server is the shared harness's fake upstream (nginx answering every search with the
same ~21 kB Elasticsearch answer). Each round sends ``--exchanges`` POSTs per client, the
clients interleaved round by round; the figure is the process's CPU time (user + system,
``getrusage``) per exchange, best and median of ``--rounds`` (µs). nginx runs in its own
processes: its CPU is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import uvloop

from searchport.adapters.exchange import Answer
from searchport.adapters.http1 import Http1Exchange

BODY = b'{"query":{"match":{"title":"castle"}},"size":20}'
HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}


def aiohttp_exchange() -> Any:
    """searchport's former network: one aiohttp session, the same pool settings."""
    import aiohttp
    import yarl

    class AiohttpExchange:
        def __init__(self) -> None:
            self._session: Any = None

        async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                           body: bytes | None, timeout: float) -> Answer:
            if self._session is None:
                connector = aiohttp.TCPConnector(limit=64, ssl=True, keepalive_timeout=30)
                self._session = aiohttp.ClientSession(connector=connector, trust_env=False,
                                                      cookie_jar=aiohttp.DummyCookieJar())
            response = await self._session.request(
                method, yarl.URL(url), headers=headers, data=body, allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=timeout,
                                              sock_read=timeout))
            try:
                content = await response.read()
            finally:
                response.release()
            return Answer(response.status, response.headers, content)

        async def aclose(self) -> None:
            if self._session is not None:
                await self._session.close()

    return AiohttpExchange()


def clients(origin: str) -> dict[str, Callable[[], Any]]:
    found: dict[str, Callable[[], Any]] = {
        "searchport http1": lambda: Http1Exchange(origin, tls=True, max_connections=64,
                                                   keepalive_seconds=30)}
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        pass
    else:
        found["aiohttp"] = aiohttp_exchange
    return found


async def measured(make: Callable[[], Any], url: str, exchanges: int,
                   inflight: int) -> tuple[float, float, float]:
    """CPU, user CPU and wall µs per exchange, after a warm-up that opens the connections."""
    network = make()

    async def worker(count: int) -> None:
        for _ in range(count):
            answer = await network.exchange("POST", url, HEADERS, BODY, 5.0)
            assert answer.status_code == 200 and answer.content

    try:
        await asyncio.gather(*(worker(20) for _ in range(inflight)))
        before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        await asyncio.gather(*(worker(exchanges // inflight) for _ in range(inflight)))
        after, ended = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    finally:
        await network.aclose()
    done = exchanges // inflight * inflight
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    user = after.ru_utime - before.ru_utime
    return cpu / done * 1e6, user / done * 1e6, (ended - started) / done * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:9201/bench/_search")
    ap.add_argument("--exchanges", type=int, default=20000)
    ap.add_argument("--inflight", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    parts = urlsplit(args.url)
    found = clients(f"{parts.scheme}://{parts.netloc}")
    cpu: dict[str, list[float]] = {name: [] for name in found}
    user: dict[str, list[float]] = {name: [] for name in found}
    wall: dict[str, list[float]] = {name: [] for name in found}
    for _ in range(args.rounds):
        for name, make in found.items():
            used, in_user, took = uvloop.run(
                measured(make, args.url, args.exchanges, args.inflight))
            cpu[name].append(used)
            user[name].append(in_user)
            wall[name].append(took)
    print(f"{args.exchanges} exchanges x {args.rounds} rounds, {args.inflight} in flight, "
          f"POST {args.url}")
    print("| client | CPU µs/exchange, best | median | user CPU, best | wall µs/exchange, best |"
          "\n|---|---|---|---|---|")
    for name in found:
        ordered = sorted(cpu[name])
        print(f"| {name} | {ordered[0]:.1f} | {ordered[len(ordered) // 2]:.1f} "
              f"| {min(user[name]):.1f} | {min(wall[name]):.1f} |")


if __name__ == "__main__":
    main()
