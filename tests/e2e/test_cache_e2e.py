"""The response cache in a real ``searchport serve`` process, with a real redis-server."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, sample_config
from tests.redis_server import RedisServer


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def engine_ms(response: Any) -> float:
    found = re.search(r"engine;dur=([\d.]+)", response.headers["server-timing"])
    assert found, response.headers["server-timing"]
    return float(found.group(1))


def test_redis_from_redis_url_hits_etags_and_clear(
    server_factory: Callable[..., Server], redis_server: RedisServer
) -> None:
    redis_server.client().set("someone-else:key", b"untouched")
    server = server_factory(
        sample_config(extra_top="cache:\n  searchTtl: 120\n"),
        env={"REDIS_URL": redis_server.url},
    )
    client = server.client
    assert client.get("/health").json()["cache"] == "connected"
    params = {"q": "paris", "facets": "region", "sort": '{"population":"desc"}'}
    miss = client.get("/cities/search", params=params)
    assert miss.status_code == 200 and engine_ms(miss) > 0
    hit = client.get("/cities/search", params=params)
    assert hit.content == miss.content and hit.headers["etag"] == miss.headers["etag"]
    assert engine_ms(hit) == 0.0  # answered without the engine
    assert hit.headers["cache-control"].startswith("public")
    revalidated = client.get("/cities/search", params=params,
                             headers={"If-None-Match": hit.headers["etag"]})
    assert revalidated.status_code == 304 and revalidated.content == b""
    keys = [k.decode() for k in redis_server.client().scan_iter(match="searchport:*")]
    assert keys and all(k.startswith("searchport:v2:search:cities:") for k in keys)
    ttl = redis_server.client().pttl(keys[0])
    assert 100_000 < ttl <= 120_000
    cleared = client.post("/cache/clear").json()
    assert cleared == {"cleared": True, "removed": len(keys)}
    assert list(redis_server.client().scan_iter(match="searchport:*")) == []
    assert redis_server.client().get("someone-else:key") == b"untouched"
    assert "listening" in server.output() and "cache: connected" in server.output()


def timed_search(client: Any, q: str) -> tuple[int, float]:
    started = time.perf_counter()
    response = client.get("/cities/search", params={"q": q})
    return response.status_code, time.perf_counter() - started


def until(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_redis_frozen_then_stopped_never_fails_or_hangs_a_search(
    server_factory: Callable[..., Server], tmp_path: Path
) -> None:
    password = "e2e-Secr3t-pw"
    redis = RedisServer(tmp_path, password=password)
    redis.start()
    try:
        server = server_factory(sample_config(), env={"REDIS_URL": redis.url})
        client = server.client

        def health() -> str:
            return str(client.get("/health").json()["cache"])

        assert health() == "connected"
        assert client.get("/cities/search", params={"q": "paris"}).status_code == 200

        for outage, (begin, end) in enumerate([(redis.pause, redis.resume),
                                               (redis.stop, redis.start)], start=1):
            begin()
            # 1.5 s or more of searches: past the back-off, whose retries run in the background
            slowest = 0.0
            for i in range(30):
                status, took = timed_search(client, f"outage {outage} {i}")
                assert status == 200
                slowest = max(slowest, took)
                time.sleep(0.05)
            assert slowest < 1.0, slowest  # timeout 0.1 s: one deadline (0.25 s) at worst
            assert health() == "error"
            assert server.output().count("is unreachable") == outage  # once per outage
            end()
            assert until(lambda: health() == "connected"), "health never came back"
            assert until(lambda n=outage: server.output().count("reachable again") == n)

        status, _ = timed_search(client, "after")
        assert status == 200
        assert until(lambda: any(redis.client().scan_iter(match="searchport:*")))
        assert password not in server.output()
        assert password not in client.get("/health").text
    finally:
        redis.stop()


def test_memory_backend(server_factory: Callable[..., Server]) -> None:
    server = server_factory(sample_config(extra_top="cache: {backend: memory}\n"))
    client = server.client
    assert client.get("/health").json()["cache"] == "memory"
    miss = client.get("/cities/search", params={"q": "berlin"})
    hit = client.get("/cities/search", params={"q": "berlin"})
    assert engine_ms(miss) > 0 and engine_ms(hit) == 0.0 and hit.content == miss.content
    assert client.post("/cache/clear").json() == {"cleared": True, "removed": 1}
    assert engine_ms(client.get("/cities/search", params={"q": "berlin"})) > 0
