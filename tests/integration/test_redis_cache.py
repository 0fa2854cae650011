"""The Redis adapter against a real redis-server: what it stores, what it deletes, and how it
behaves when Redis is down, frozen, or not Redis at all."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator

import anyio
import pytest
import redis

from searchport.adapters.cache.memory import MemoryCache
from searchport.adapters.cache.redis import MAGIC, RedisCache, pack
from searchport.adapters.cache.two_tier import TwoTierCache
from searchport.ports.cache import CachePort
from tests.redis_server import RedisServer, free_port

pytestmark = pytest.mark.anyio

TIMEOUT = 0.1
DEADLINE = 2.5 * TIMEOUT
FAST = 0.005  # seconds: the median call while the cache is known to be down (no network)


def cache_for(url: str, **kw: float | str) -> RedisCache:
    return RedisCache(url, timeout=TIMEOUT, **kw)  # type: ignore[arg-type]


async def timed_get(cache: RedisCache, key: str = "searchport:k") -> tuple[bytes | None, float]:
    started = time.perf_counter()
    value = await cache.get(key)
    return value, time.perf_counter() - started


def outage_logs(caplog: pytest.LogCaptureFixture) -> tuple[int, int]:
    lines = [r.getMessage() for r in caplog.records if r.name == "searchport.cache"]
    return (sum("unreachable" in line for line in lines),
            sum("reachable again" in line for line in lines))


async def test_conforms_to_the_port(redis_server: RedisServer) -> None:
    cache: CachePort = cache_for(redis_server.url)
    assert await cache.probe() == "connected"
    await cache.close()


async def test_values_are_stored_with_header_and_an_atomic_expiry(
    redis_server: RedisServer,
) -> None:
    cache = cache_for(redis_server.url)
    await cache.set("searchport:v1:search:cities:abc", b'{"hits":[]}', ttl=30)
    raw = redis_server.client()
    stored = raw.get("searchport:v1:search:cities:abc")
    assert isinstance(stored, bytes) and stored.startswith(MAGIC)
    assert stored.endswith(b'{"hits":[]}')
    assert 29_000 < raw.pttl("searchport:v1:search:cities:abc") <= 30_000
    await cache.close()


@pytest.mark.parametrize("garbage", [
    b"", b"{}", b'{"hits":[]}', MAGIC, b"spc\x02" + b"\x00" * 20,
    pack(b'{"hits":[]}', ttl=60)[:-1],  # truncated: the CRC no longer matches
    pack(b'{"hits":[]}', ttl=60)[:-3] + b"]}}",  # same length, other bytes
    pack(b'{"hits":[]}', ttl=-1),  # already expired by its own header
])
async def test_anything_but_our_own_value_is_a_miss(
    redis_server: RedisServer, garbage: bytes
) -> None:
    redis_server.client().set("searchport:k", garbage)
    cache = cache_for(redis_server.url)
    assert await cache.get("searchport:k") is None
    assert cache.status == "connected"  # garbage is not an outage
    await cache.set("searchport:k", b"fresh", ttl=60)
    assert await cache.get("searchport:k") == b"fresh"
    await cache.close()


async def test_a_key_of_another_type_is_a_miss_not_an_outage(redis_server: RedisServer) -> None:
    redis_server.client().rpush("searchport:list", "x")
    cache = cache_for(redis_server.url)
    assert await cache.get("searchport:list") is None
    assert cache.status == "connected"
    await cache.close()


async def test_a_redis_that_refuses_the_ping_is_an_error_not_connected(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    # a database that does not exist: Redis answers every connection with an error
    cache = cache_for(redis_server.url.removesuffix("/0") + "/99", retry_after=0.05)
    assert await cache.probe() == "error"
    for _ in range(5):
        assert await cache.get("searchport:k") is None
        await cache.set("searchport:k", b"v", ttl=60)
        await anyio.sleep(0.02)
    assert await cache.probe() == "error" and cache.status == "error"
    (line,) = [r.getMessage() for r in caplog.records if r.name == "searchport.cache"
               and r.levelno >= logging.WARNING]
    assert "out of range" in line  # once, with Redis's own reason
    await cache.close()


async def test_clear_removes_only_its_own_prefix_and_never_flushes(
    redis_server: RedisServer,
) -> None:
    raw = redis_server.client()
    foreign = {"other-app:session:1": b"a", "searchportx:1": b"b", "searchport": b"c",
               "team-a:v1:search:x:1": b"d"}
    for key, value in foreign.items():
        raw.set(key, value)
    other_db = redis.Redis.from_url(redis_server.url.removesuffix("/0") + "/1")
    other_db.set("searchport:v1:search:cities:0", b"another database")
    cache = cache_for(redis_server.url, prefix="searchport")
    for i in range(1234):  # more than one SCAN page and one UNLINK batch
        await cache.set(f"searchport:v1:search:cities:{i}", b"v", ttl=60)
    assert await cache.clear() == 1234
    assert raw.dbsize() == len(foreign)
    assert {key: raw.get(key) for key in foreign} == foreign
    assert other_db.get("searchport:v1:search:cities:0") == b"another database"
    stats = raw.info("commandstats")
    assert "cmdstat_flushdb" not in stats and "cmdstat_flushall" not in stats
    assert "cmdstat_scan" in stats
    await cache.close()


async def test_a_custom_prefix_leaves_the_default_one_alone(redis_server: RedisServer) -> None:
    default, team = cache_for(redis_server.url), cache_for(redis_server.url, prefix="team-a")
    await default.set("searchport:v1:k", b"1", ttl=60)
    await team.set("team-a:v1:k", b"2", ttl=60)
    assert await team.clear() == 1
    assert await default.get("searchport:v1:k") == b"1"
    await default.close()
    await team.close()


async def test_redis_stopped_and_started_again(
    tmp_path: object, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="searchport.cache")
    server = RedisServer(tmp_path)  # type: ignore[arg-type]
    server.start()
    cache = cache_for(server.url, retry_after=0.3)
    try:
        await cache.set("searchport:k", b"v", ttl=60)
        assert await cache.get("searchport:k") == b"v"
        server.stop()
        value, took = await timed_get(cache)
        assert value is None and took < DEADLINE + 0.1
        assert cache.status == "error" and await cache.probe() == "error"
        timings = []
        for _ in range(50):  # down: every call is an immediate miss
            value, took = await timed_get(cache)
            assert value is None
            timings.append(took)
            await cache.set("searchport:k", b"w", ttl=60)
        assert max(timings) < DEADLINE / 2 and sorted(timings)[25] < FAST
        assert await cache.clear() == -1  # unknown, not a false "cleared"
        assert outage_logs(caplog) == (1, 0)
        server.start()
        await anyio.sleep(0.35)  # past the back-off: the next call tries again
        assert await cache.probe() == "connected"
        await cache.set("searchport:k", b"again", ttl=60)
        assert await cache.get("searchport:k") == b"again"
        assert outage_logs(caplog) == (1, 1)
    finally:
        await cache.close()
        server.stop()


async def test_a_frozen_redis_costs_one_deadline_then_nothing(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    cache = cache_for(redis_server.url, retry_after=0.3)
    await cache.set("searchport:k", b"v", ttl=60)  # a pooled connection exists
    redis_server.pause()
    try:
        value, took = await timed_get(cache)
        assert value is None and took < DEADLINE + 0.1
        assert cache.status == "error"
        started = time.perf_counter()
        for _ in range(20):
            await cache.set("searchport:x", b"x", ttl=60)
            assert await cache.get("searchport:k") is None
        assert time.perf_counter() - started < DEADLINE  # forty calls, none of them waited
        await anyio.sleep(0.35)
        value, took = await timed_get(cache)  # one new try, bounded again
        assert value is None and took < DEADLINE + 0.1
    finally:
        redis_server.resume()
    await anyio.sleep(0.35)
    assert await cache.probe() == "connected"
    assert await cache.get("searchport:k") == b"v"
    assert outage_logs(caplog)[0] == 1
    await cache.close()


async def test_a_long_outage_makes_no_call_wait_again_and_ends_by_itself(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="searchport.cache")
    # a long socket timeout, a short back-off: a retry made on a caller's path would show
    cache = RedisCache(redis_server.url, timeout=0.5, retry_after=0.05)
    await cache.set("searchport:k", b"v", ttl=60)
    redis_server.pause()
    try:
        value, _ = await timed_get(cache)  # the call under way when Redis froze: one deadline
        assert value is None and cache.status == "error"
        slowest, calls = 0.0, 0
        end = time.monotonic() + 1.5  # dozens of back-off periods, each ending in a retry
        while time.monotonic() < end:
            value, took = await timed_get(cache)
            assert value is None
            slowest, calls = max(slowest, took), calls + 1
            await anyio.sleep(0.01)
        assert calls > 20 and slowest < 0.25, (calls, slowest)  # a retry would take 0.5 s
    finally:
        redis_server.resume()
    deadline = time.monotonic() + 10
    while await cache.get("searchport:k") is None:  # plain calls bring it back: no health
        assert time.monotonic() < deadline, "the cache never came back"
        await anyio.sleep(0.05)
    assert cache.status == "connected"
    assert outage_logs(caplog) == (1, 1)
    await cache.close()


async def test_closing_during_an_outage_cancels_the_retry_under_way(
    redis_server: RedisServer,
) -> None:
    others = asyncio.all_tasks()
    cache = RedisCache(redis_server.url, timeout=1.0, retry_after=0.01)
    await cache.set("searchport:k", b"v", ttl=60)
    redis_server.pause()
    try:
        assert await cache.get("searchport:k") is None and cache.status == "error"
        await anyio.sleep(0.02)
        assert await cache.get("searchport:k") is None  # starts a retry, stuck for seconds
        assert len(asyncio.all_tasks() - others) == 1
        await cache.close()
        assert asyncio.all_tasks() - others == set()  # nothing left running after close
        assert await cache.get("searchport:k") is None  # and nothing new is started
        assert asyncio.all_tasks() - others == set()
    finally:
        redis_server.resume()


@pytest.fixture
def not_redis() -> Iterator[int]:
    """A TCP server that answers anything with bytes that are not RESP."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.settimeout(1)
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join(timeout=2)
    listener.close()


async def test_a_server_that_speaks_garbage_is_an_outage(not_redis: int) -> None:
    cache = cache_for(f"redis://127.0.0.1:{not_redis}/0")
    value, took = await timed_get(cache)
    assert value is None and took < DEADLINE + 0.1
    assert cache.status == "error"
    await cache.set("searchport:k", b"v", ttl=60)
    assert await cache.clear() == -1
    await cache.close()


async def test_nothing_listening_and_no_credential_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cache = cache_for(f"redis://reader:s3cret-pw@127.0.0.1:{free_port()}/0")
    assert await cache.probe() == "error"
    assert await cache.get("searchport:k") is None
    (line,) = [r.getMessage() for r in caplog.records if r.name == "searchport.cache"]
    assert "unreachable" in line and "127.0.0.1" in line
    assert "s3cret-pw" not in line and "reader" not in line
    await cache.close()


async def test_the_process_tier_never_outlives_the_redis_entry(redis_server: RedisServer) -> None:
    shared = cache_for(redis_server.url)
    tiers = TwoTierCache(MemoryCache(), cache_for(redis_server.url), local_ttl=30)
    await shared.set("searchport:short", b"s", ttl=0.3)  # written by another process
    assert await tiers.get("searchport:short") == b"s"  # now also in this process's tier
    assert tiers.local.lookup("searchport:short") == b"s"
    await anyio.sleep(0.4)
    assert tiers.local.lookup("searchport:short") is None
    assert await tiers.get("searchport:short") is None
    await tiers.set("searchport:k", b"v", ttl=60)
    assert await tiers.clear() == 1 and len(tiers.local) == 0
    await shared.close()
    await tiers.close()
