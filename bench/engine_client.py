#!/usr/bin/env python3
"""CPU per engine exchange of the network under the server engines, in process: the
production ``EngineClient`` (libcurl through pycurl, ``src/adapters/network/client.py``)
beside the maintained async clients it was chosen over, each with ``--inflight`` requests
in flight on one event loop (uvloop) against a local HTTP server.

    taskset -c 0 .venv/bin/python bench/engine_client.py --url http://127.0.0.1:9201/bench/_search

The server is the shared harness's fake upstream (nginx answering every search with the
same ~21 kB Elasticsearch answer). Each round sends ``--exchanges`` POSTs per client, the
clients interleaved round by round; the figure is the process's CPU time (user + system,
``getrusage``: every thread included) per exchange, best and median of
``--rounds`` (µs). nginx runs in its own processes: its CPU is not counted. Clients
(``--clients``, all by default), each under ``ResilientExchange`` as in production:

- ``EngineClient``: production (one libcurl multi per origin and loop, libcurl's
  per-transfer deadline).
- ``aiohttp``: one ``aiohttp.ClientSession`` (no cookies, a ``total`` timeout kept per
  value; aiohttp comes with the test extras).
- ``httpx``: one ``httpx.AsyncClient`` (64 connections, the deadline kept by
  ``asyncio.timeout``; httpx comes with the test extras). Slow with many in flight: give
  it fewer ``--exchanges``.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time
from collections.abc import Callable, Mapping
from importlib.metadata import version
from urllib.parse import urlsplit

import aiohttp
import httpx
import uvloop

from searchport import __version__
from searchport.adapters.network.client import EngineClient
from searchport.adapters.network.exchange import Answer, Exchange
from searchport.adapters.network.resilience import ResilientExchange

BODY = b'{"query":{"match":{"title":"castle"}},"size":20}'
HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}


class AiohttpExchange:
    """An ``Exchange`` over aiohttp's client, as searchport's former engine client was."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=64, keepalive_timeout=30)
            self._session = aiohttp.ClientSession(
                connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
                headers={"User-Agent": f"searchport/{__version__}"},
                skip_auto_headers=("Content-Type",))
        kept = self._timeouts.get(timeout)
        if kept is None:
            kept = self._timeouts[timeout] = aiohttp.ClientTimeout(total=timeout)
        response = await self._session.request(method, url, headers=headers, data=body,
                                               allow_redirects=False, timeout=kept)
        content = await response.read()
        response.release()
        return Answer(response.status, response.headers, content)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class HttpxExchange:
    """An ``Exchange`` over httpx's client, its deadline kept over the whole exchange."""

    def __init__(self) -> None:
        self._client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=64, keepalive_expiry=30), trust_env=False,
            headers={"User-Agent": f"searchport/{__version__}"})

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        async with asyncio.timeout(timeout):
            response = await self._client.request(method, url, headers=headers,
                                                  content=body)
        return Answer(response.status_code, response.headers, response.content)

    async def aclose(self) -> None:
        await self._client.aclose()


def clients(origin: str) -> dict[str, Callable[[], Exchange]]:
    return {
        "EngineClient": lambda: ResilientExchange(EngineClient(
            origin, max_connections=64, keepalive_seconds=30)),
        "aiohttp": lambda: ResilientExchange(AiohttpExchange()),
        "httpx": lambda: ResilientExchange(HttpxExchange()),
    }


async def measured(make: Callable[[], Exchange], url: str, exchanges: int,
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
    ap.add_argument("--clients", default="EngineClient,aiohttp,httpx")
    args = ap.parse_args()
    parts = urlsplit(args.url)
    every = clients(f"{parts.scheme}://{parts.netloc}")
    found = {name: every[name] for name in args.clients.split(",")}
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in found}
    for _ in range(args.rounds):
        for name, make in found.items():
            figures[name].append(
                uvloop.run(measured(make, args.url, args.exchanges, args.inflight)))
    print(f"pycurl {version('pycurl')}, aiohttp {aiohttp.__version__}, "
          f"httpx {httpx.__version__}; "
          f"{args.exchanges} exchanges x {args.rounds} rounds, "
          f"{args.inflight} in flight, POST {args.url}")
    print("| client | CPU µs/exchange, best | median | user CPU, best | wall µs/exchange, best |"
          "\n|---|---|---|---|---|")
    for name, rows in figures.items():
        cpu = sorted(row[0] for row in rows)
        print(f"| {name} | {cpu[0]:.1f} | {cpu[len(cpu) // 2]:.1f} "
              f"| {min(row[1] for row in rows):.1f} | {min(row[2] for row in rows):.1f} |")


if __name__ == "__main__":
    main()

