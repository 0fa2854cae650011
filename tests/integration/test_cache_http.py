"""The whole app with a real redis-server as its cache (engines are fakes that count calls):
outages never fail or slow a search, health follows Redis, hits resume by themselves."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
from dependency_injector import providers
from litestar.testing import TestClient

from searchport.adapters.cache.engine_cache import EngineCache
from searchport.adapters.cache.redis import RedisCache
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import CacheConfig, Config, FieldConfig, IndexConfig
from searchport.domain.search_request import SearchRequest
from searchport.domain.usecases.search import Search
from searchport.entrypoints.container import Container
from searchport.entrypoints.http.app import create_app
from tests.fakes import EchoEngine, in_memory_analytics
from tests.redis_server import RedisServer

REQUEST_BOUND = 0.5  # seconds: a search while Redis is down, frozen or garbled (deadline 0.25)
KEY = "test-key"


def settings(url: str, *, local_ttl: float = 0.0, weight: float = 3.0, timeout: float = 0.1,
             **top: Any) -> Config:
    index = IndexConfig(engine="tantivy", path="unused",
                        fields={"name": FieldConfig(weight=weight),
                                "region": FieldConfig(field="continent")})
    cache = CacheConfig(backend="redis", url=url, local_ttl=local_ttl, timeout=timeout)
    return Config(indexes={"cities": index}, cache=cache, **top)


@contextmanager
def serve(config: Config, echo: EchoEngine) -> Iterator[TestClient[Any]]:
    """The real app and container (real cache from the config); only the engine is fake."""
    container = in_memory_analytics(Container(config=config, base_dir=Path(".")))
    container.engines.override(providers.Object({"cities": echo}))
    with TestClient(create_app(container)) as client:
        yield client


def timed(client: TestClient[Any], path: str, **kw: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    response = client.get(path, **kw)
    return response, time.perf_counter() - started


def until(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return False


def stored(server: RedisServer) -> int:
    return sum(1 for _ in server.client().scan_iter(match="searchport:*"))


def search_and_wait_stored(client: TestClient[Any], server: RedisServer, q: str) -> bytes:
    """A miss, then wait for its (background) write to reach Redis."""
    before = stored(server)
    response = client.get("/cities/search", params={"q": q})
    assert response.status_code == 200
    assert until(lambda: stored(server) > before), "the answer never reached Redis"
    return bytes(response.content)


def outages(caplog: pytest.LogCaptureFixture) -> int:
    return sum("unreachable" in r.getMessage() for r in caplog.records
               if r.name == "searchport.cache")


def test_searches_survive_redis_going_away_and_hits_resume_when_it_is_back(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    echo = EchoEngine()
    with serve(settings(redis_server.url), echo) as client:
        assert client.get("/health").json()["cache"] == "connected"
        body = search_and_wait_stored(client, redis_server, "paris")
        hit = client.get("/cities/search", params={"q": "paris"})
        assert hit.content == body and len(echo.queries) == 1

        redis_server.stop()
        for i in range(30):
            response, took = timed(client, "/cities/search", params={"q": f"down {i % 3}"})
            assert response.status_code == 200 and took < REQUEST_BOUND, (i, took)
        response, took = timed(client, "/cities/search", params={"q": "paris"})
        assert response.status_code == 200 and response.content == body  # from the engine
        assert len(echo.queries) == 32
        health, took = timed(client, "/health")
        assert health.json()["cache"] == "error" and took < REQUEST_BOUND
        assert client.post("/cache/clear").json()["cleared"] is False
        assert outages(caplog) == 1  # logged once for the whole outage

        redis_server.start()
        assert until(lambda: client.get("/health").json()["cache"] == "connected")
        search_and_wait_stored(client, redis_server, "berlin")
        calls = len(echo.queries)
        assert client.get("/cities/search", params={"q": "berlin"}).status_code == 200
        assert len(echo.queries) == calls  # a hit again
    assert outages(caplog) == 1


def test_a_redis_that_accepts_but_never_answers_never_hangs_a_search(
    redis_server: RedisServer,
) -> None:
    echo = EchoEngine()
    with serve(settings(redis_server.url), echo) as client:
        search_and_wait_stored(client, redis_server, "paris")
        redis_server.pause()
        try:
            timings = []
            for i in range(20):
                response, took = timed(client, "/cities/search", params={"q": f"frozen {i}"})
                assert response.status_code == 200
                timings.append(took)
            assert max(timings) < REQUEST_BOUND, timings
            assert sorted(timings)[len(timings) // 2] < 0.1  # after the first, no waiting
            health, took = timed(client, "/health")
            assert health.json()["cache"] == "error" and took < REQUEST_BOUND
        finally:
            redis_server.resume()
        assert until(lambda: client.get("/health").json()["cache"] == "connected")
        calls = len(echo.queries)
        assert client.get("/cities/search", params={"q": "paris"}).status_code == 200
        assert len(echo.queries) == calls  # the entry written before the freeze is a hit


def test_redis_down_from_the_start(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)  # a free port with nothing on it
    echo = EchoEngine()
    with serve(settings(server.url), echo) as client:
        assert client.get("/health").json()["cache"] == "error"
        for _ in range(3):
            response, took = timed(client, "/cities/search")
            assert response.status_code == 200 and took < REQUEST_BOUND
        assert len(echo.queries) == 3
        server.start()
        try:
            assert until(lambda: client.get("/health").json()["cache"] == "connected")
            search_and_wait_stored(client, server, "late")
        finally:
            server.stop()


def test_the_process_tier_serves_a_hot_key_while_redis_is_down(
    redis_server: RedisServer,
) -> None:
    echo = EchoEngine()
    # a generous Redis timeout: what is tested is the process tier, not a slow machine
    with serve(settings(redis_server.url, local_ttl=30, timeout=0.5), echo) as client:
        body = search_and_wait_stored(client, redis_server, "paris")
        redis_server.stop()
        response = client.get("/cities/search", params={"q": "paris"})
        assert response.content == body and len(echo.queries) == 1  # never left the process
        assert client.get("/health").json()["cache"] == "error"


def test_entries_are_shared_between_processes_until_the_config_changes(
    redis_server: RedisServer,
) -> None:
    first, changed, same = EchoEngine(), EchoEngine(), EchoEngine()
    with serve(settings(redis_server.url), first) as client:
        search_and_wait_stored(client, redis_server, "paris")
    with serve(settings(redis_server.url, weight=5.0), changed) as client:
        client.get("/cities/search", params={"q": "paris"})
        assert len(changed.queries) == 1  # the config changed: the old entry is not served
    with serve(settings(redis_server.url), same) as client:
        client.get("/cities/search", params={"q": "paris"})
        assert same.queries == []  # same config in another "process": a hit from Redis


def test_cache_clear_needs_the_token_and_removes_only_searchports_keys(
    redis_server: RedisServer,
) -> None:
    redis_server.client().set("other-app:session", b"keep me")
    echo = EchoEngine()
    token = {"Authorization": f"Bearer {KEY}"}
    with serve(settings(redis_server.url, api_key=KEY), echo) as client:
        for q in ("a", "b", "c"):
            assert client.get("/cities/search", params={"q": q}, headers=token).status_code \
                == 200
        assert until(lambda: stored(redis_server) == 3)
        assert client.post("/cache/clear").status_code == 401
        assert stored(redis_server) == 3
        cleared = client.post("/cache/clear", headers=token)
        assert cleared.status_code == 200 and cleared.json() == {"cleared": True, "removed": 3}
        assert stored(redis_server) == 0
        assert redis_server.client().get("other-app:session") == b"keep me"
        client.get("/cities/search", params={"q": "a"}, headers=token)
        assert len(echo.queries) == 4  # cleared: a miss again


def test_concurrent_identical_misses_make_one_engine_call_with_redis(
    redis_server: RedisServer,
) -> None:
    echo = EchoEngine(delay=0.05)
    config = IndexConfig(engine="tantivy", path="unused")

    async def burst() -> list[bytes]:
        cache = RedisCache(redis_server.url)
        engine = EngineCache(cache=cache).around(echo, "cities", config)
        search = Search(catalog=Catalog({"cities": IndexEntry("cities", config, engine)}))
        try:
            answers = await asyncio.gather(
                *(search(SearchRequest(handle="cities", q="paris")) for _ in range(40))
            )
            again = await search(SearchRequest(handle="cities", q="paris"))
        finally:
            await asyncio.sleep(0.05)  # let the write finish before closing
            await cache.close()
        return [msgspec.json.encode(a) for a in [*answers, again]]

    bodies = asyncio.run(burst())
    assert len(echo.queries) == 1 and len(set(bodies)) == 1
    assert msgspec.json.decode(bodies[0])["hits"][0]["objectID"] == "1"


def test_outage_log_lines_name_no_credential(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    server = RedisServer(tmp_path)
    url = server.url.replace("redis://", "redis://reader:pw-s3cret@")
    with serve(settings(url), EchoEngine()) as client:
        assert client.get("/cities/search").status_code == 200
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "unreachable" in text and "pw-s3cret" not in text
