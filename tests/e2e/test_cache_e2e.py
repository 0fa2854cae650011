"""The response cache in a real ``searchport serve`` process, with a real redis-server."""

from __future__ import annotations

import re
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
    assert keys and all(k.startswith("searchport:v1:search:cities:") for k in keys)
    ttl = redis_server.client().pttl(keys[0])
    assert 100_000 < ttl <= 120_000
    cleared = client.post("/cache/clear").json()
    assert cleared == {"cleared": True, "removed": len(keys)}
    assert list(redis_server.client().scan_iter(match="searchport:*")) == []
    assert redis_server.client().get("someone-else:key") == b"untouched"
    assert "listening" in server.output() and "cache: connected" in server.output()
