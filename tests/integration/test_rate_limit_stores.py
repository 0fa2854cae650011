"""The rate-limit stores against the same rule: memory, and Redis on a real redis-server
(its Lua script must decide exactly as ``domain.rate_limit.gcra`` does), and Redis going
away (limits stay on, per process, and nothing waits)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from searchport.adapters.rate_limit.memory import MemoryRateLimitStore
from searchport.adapters.rate_limit.redis import RedisRateLimitStore
from searchport.domain.config import Config, ConfigError
from searchport.domain.rate_limit import gcra
from searchport.entrypoints.container import build_rate_limit_store
from searchport.entrypoints.http.app import create_app
from searchport.ports.rate_limit import RateLimitStore
from tests.fakes import fake_container
from tests.redis_server import RedisServer
from tests.unit.test_http_contract import engine

Clock = list[float]


def expected_waits(times: list[float], limit: int, window: float) -> list[float]:
    tat: float | None = None
    waits = []
    for now in times:
        verdict = gcra(tat, now, limit, window)
        if verdict.allowed:
            tat = verdict.tat
        waits.append(verdict.retry_after)
    return waits


def stores(redis_url: str, clock: Clock) -> dict[str, RateLimitStore]:
    def now() -> float:
        return clock[0]
    return {"memory": MemoryRateLimitStore(clock=now),
            "redis": RedisRateLimitStore(redis_url, prefix=f"t{time.monotonic_ns()}",
                                         timeout=1.0, clock=now)}


# arrival times in whole milliseconds; windows and limits whose interval is whole microseconds
arrivals = st.lists(st.integers(0, 20_000), min_size=1, max_size=25).map(
    lambda ms: [1_800_000_000 + m / 1000 for m in sorted(ms)])


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=arrivals, limit=st.sampled_from([1, 2, 4, 5, 8]), window=st.sampled_from([1, 2, 5]))
def test_both_stores_decide_as_the_rule(
    redis_server: RedisServer, times: list[float], limit: int, window: int
) -> None:
    clock: Clock = [0.0]
    wanted = expected_waits(times, limit, window)

    async def run(store: RateLimitStore) -> list[float]:
        waits = []
        for now in times:
            clock[0] = now
            waits.append(await store.hit("client", limit, window))
        await store.close()
        return waits

    for name, store in stores(redis_server.url, clock).items():
        got = asyncio.run(run(store))
        assert [w > 0 for w in got] == [w > 0 for w in wanted], name
        assert got == pytest.approx(wanted, abs=1e-5), name


def test_keys_are_counted_apart_and_expire_with_the_allowance(redis_server: RedisServer) -> None:
    store = RedisRateLimitStore(redis_server.url, prefix="apart")

    async def run() -> tuple[list[float], list[float]]:
        first = [await store.hit("a", 2, 1.0) for _ in range(3)]
        other = [await store.hit("b", 2, 1.0) for _ in range(2)]
        await store.close()
        return first, other

    first, other = asyncio.run(run())
    assert [w == 0 for w in first] == [True, True, False]
    assert other == [0.0, 0.0]
    client = redis_server.client()
    keys = sorted(k.decode() for k in client.keys("apart:rl:*"))
    assert keys == ["apart:rl:a", "apart:rl:b"]
    assert 0 < client.pttl("apart:rl:a") <= 1000  # gone once the allowance is full again


def test_redis_away_means_per_process_limits_and_no_wait(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    server.start()
    store = RedisRateLimitStore(server.url, prefix="away", timeout=0.05)

    async def burst(n: int) -> tuple[list[float], float]:
        started = time.perf_counter()
        waits = [await store.hit("c", 3, 60) for _ in range(n)]
        return waits, time.perf_counter() - started

    async def run() -> tuple[list[float], list[float], float]:
        shared, _ = await burst(2)
        server.stop()
        await burst(1)  # the call that finds Redis gone (one deadline at most)
        local, took = await burst(6)
        await store.close()
        return shared, local, took

    try:
        shared, local, took = asyncio.run(run())
    finally:
        server.stop()
    assert shared == [0.0, 0.0]
    assert [w == 0 for w in local] == [True, True, False, False, False, False]
    assert took < 1.0  # no call waits on a Redis known to be down


def test_the_store_follows_the_config(redis_server: RedisServer) -> None:
    def built(settings: dict[str, Any]) -> type:
        return type(build_rate_limit_store(msgspec.convert(settings, Config)))

    rule = {"perIp": {"limit": 5}}
    redis_cache = {"backend": "redis", "url": redis_server.url}
    assert built({"rateLimit": rule}) is MemoryRateLimitStore
    assert built({"rateLimit": rule, "cache": redis_cache}) is RedisRateLimitStore
    assert built({"rateLimit": {**rule, "store": "memory"},
                  "cache": redis_cache}) is MemoryRateLimitStore
    assert built({"cache": redis_cache}) is MemoryRateLimitStore  # no rule: nothing to count
    with pytest.raises(ConfigError, match=r"rateLimit\.store"):
        built({"rateLimit": {**rule, "store": "redis"}})




def test_two_processes_share_one_limit_through_redis(redis_server: RedisServer) -> None:
    settings = msgspec.convert({
        "cache": {"backend": "redis", "url": redis_server.url, "prefix": "shared"},
        "rateLimit": {"perIp": {"limit": 3, "window": 60}},
        "indexes": {"cities": {"engine": "tantivy", "path": "unused"}},
    }, Config)
    apps = [create_app(fake_container(settings, {"cities": engine()})) for _ in range(2)]
    with TestClient(apps[0]) as one, TestClient(apps[1]) as two:
        statuses = [client.get("/cities/search").status_code
                    for client in (one, two, one, two)]
    assert statuses == [200, 200, 200, 429]
