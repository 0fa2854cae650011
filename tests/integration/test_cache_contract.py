"""One contract for ``CachePort``, run against every adapter: none, memory, Redis (a real
redis-server) and Redis behind the in-process tier.

(Its natural home is ``tests/contract``; it lives here beside the Redis fixture for now.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from searchport.adapters.cache.memory import MemoryCache
from searchport.adapters.cache.none import NoCache
from searchport.adapters.cache.redis import RedisCache
from searchport.adapters.cache.two_tier import TwoTierCache
from searchport.ports.cache import CachePort
from tests.redis_server import RedisServer

pytestmark = pytest.mark.anyio

ADAPTERS = ["none", "memory", "redis", "two-tier"]
STATUS = {"none": "disabled", "memory": "memory", "redis": "connected", "two-tier": "connected"}


@pytest.fixture(params=ADAPTERS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def cache(kind: str, request: pytest.FixtureRequest) -> AsyncIterator[CachePort]:
    adapter: CachePort
    if kind == "none":
        adapter = NoCache()
    elif kind == "memory":
        adapter = MemoryCache()
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        redis = RedisCache(server.url, prefix="searchport", timeout=1.0)  # not under test
        adapter = redis if kind == "redis" else TwoTierCache(MemoryCache(), redis, local_ttl=5)
    try:
        yield adapter
    finally:
        await adapter.close()


def stores(kind: str) -> bool:
    return kind != "none"


async def test_status_and_probe(cache: CachePort, kind: str) -> None:
    assert cache.status == STATUS[kind]
    assert await cache.probe() == STATUS[kind]


async def test_a_missing_key_is_a_miss(cache: CachePort) -> None:
    assert await cache.get("searchport:v1:search:cities:missing") is None


# named ids: pytest would make one of the megabyte value, and pass it to every process the
# test starts (PYTEST_CURRENT_TEST), past the kernel's limit on an environment
@pytest.mark.parametrize("value", [b'{"hits":[]}', b"", b"\x00\xff binary \r\n", b"x" * 1_000_000],
                         ids=["json", "empty", "binary", "one-megabyte"])
async def test_what_is_set_is_got_back_byte_for_byte(
    cache: CachePort, kind: str, value: bytes
) -> None:
    await cache.set("searchport:k", value, ttl=60)
    assert await cache.get("searchport:k") == (value if stores(kind) else None)


async def test_keys_are_independent_and_a_set_overwrites(cache: CachePort, kind: str) -> None:
    await cache.set("searchport:a", b"1", ttl=60)
    await cache.set("searchport:b", b"2", ttl=60)
    await cache.set("searchport:a", b"3", ttl=60)
    got = (await cache.get("searchport:a"), await cache.get("searchport:b"))
    assert got == ((b"3", b"2") if stores(kind) else (None, None))
    assert await cache.get("searchport:c") is None


async def test_entries_expire(cache: CachePort, kind: str) -> None:
    await cache.set("searchport:short", b"s", ttl=0.05)
    await cache.set("searchport:long", b"l", ttl=60)
    await anyio.sleep(0.2)
    assert await cache.get("searchport:short") is None
    assert await cache.get("searchport:long") == (b"l" if stores(kind) else None)


async def test_clear_drops_every_entry_and_counts_them(cache: CachePort, kind: str) -> None:
    for i in range(7):
        await cache.set(f"searchport:v1:search:cities:{i}", b"v", ttl=60)
    removed = await cache.clear()
    assert removed == (7 if stores(kind) else 0)
    for i in range(7):
        assert await cache.get(f"searchport:v1:search:cities:{i}") is None
    assert await cache.clear() == 0


async def test_a_closed_cache_can_be_closed_again(cache: CachePort) -> None:
    await cache.close()
    await cache.close()
