"""The cache's configuration: keys, REDIS_URL, per-index TTLs, and which adapter is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchport.adapters.cache.memory import MemoryCache
from searchport.adapters.cache.none import NoCache
from searchport.adapters.cache.redis import RedisCache
from searchport.adapters.cache.two_tier import TwoTierCache
from searchport.adapters.config_loader import load_config, parse_config
from searchport.domain.config import CacheConfig, Config, ConfigError
from searchport.entrypoints.container import Container
from searchport.ports.cache import CachePort

INDEX = "indexes:\n  books:\n    engine: tantivy\n    path: idx\n"
URL = "redis://cache.internal:6380/2"


@pytest.mark.parametrize(("text", "environ", "backend", "url"), [
    ("", {}, "none", None),
    ("", {"REDIS_URL": URL}, "redis", URL),  # a bare REDIS_URL turns Redis on
    ("cache: {searchTtl: 30}\n", {"REDIS_URL": URL}, "redis", URL),
    ("cache: {backend: none}\n", {"REDIS_URL": URL}, "none", URL),
    ("cache: {backend: memory}\n", {"REDIS_URL": URL}, "memory", URL),
    ("cache: {backend: redis}\n", {"REDIS_URL": URL}, "redis", URL),
    ("cache: {backend: redis, url: 'redis://own:1/0'}\n", {"REDIS_URL": URL}, "redis",
     "redis://own:1/0"),
    ("cache: {backend: redis, url: '${R:-redis://d:2/0}'}\n", {}, "redis", "redis://d:2/0"),
    ("cache: {url: 'redis://own:1/0'}\n", {}, "redis", "redis://own:1/0"),  # a url says redis
    ("cache: {url: 'redis://own:1/0'}\n", {"REDIS_URL": URL}, "redis", "redis://own:1/0"),
    ("cache: {backend: memory, url: 'redis://own:1/0'}\n", {}, "memory", "redis://own:1/0"),
])
def test_backend_and_url(text: str, environ: dict[str, str], backend: str, url: str | None) -> None:
    config = parse_config(text + INDEX, environ)
    assert (config.cache.backend, config.cache.url) == (backend, url)



def cache_of(config: Config) -> CachePort:
    """The cache the container builds for ``config``."""
    cache: CachePort = Container(config=config, base_dir=Path(".")).cache_backend()
    return cache

def test_defaults() -> None:
    cache = parse_config(INDEX, {}).cache
    assert (cache.search_ttl, cache.mapping_ttl, cache.local_ttl) == (60, 3600, 5)
    assert (cache.prefix, cache.timeout, cache.max_entries) == ("searchport", 0.1, 10_000)
    index = parse_config(INDEX, {}).indexes["books"].cache
    assert (index.search_ttl, index.mapping_ttl, index.documents) == (None, None, False)


def test_per_index_section() -> None:
    text = INDEX + "    cache: {searchTtl: 5, mappingTtl: 0, documents: true}\n"
    index = parse_config(text, {}).indexes["books"].cache
    assert (index.search_ttl, index.mapping_ttl, index.documents) == (5, 0, True)


@pytest.mark.parametrize(("text", "path"), [
    ("cache: {backend: memcached}\n" + INDEX, "cache.backend"),
    ("cache: {searchTtl: 0}\n" + INDEX, "cache.searchTtl"),
    ("cache: {prefix: 'a b*'}\n" + INDEX, "cache.prefix"),
    ("cache: {timeout: 30}\n" + INDEX, "cache.timeout"),
    ("cache: {localTtl: -1}\n" + INDEX, "cache.localTtl"),
    ("cache: {maxEntries: 0}\n" + INDEX, "cache.maxEntries"),
    (INDEX + "    cache: {searchTtl: -1}\n", "indexes.books.cache.searchTtl"),
    (INDEX + "    cache: {ttl: 5}\n", "indexes.books.cache"),
])
def test_bad_values_name_their_key(text: str, path: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, {})
    assert path in str(caught.value)


def test_build_cache_picks_the_adapter() -> None:
    assert isinstance(cache_of(parse_config(INDEX, {})), NoCache)
    memory = cache_of(parse_config("cache: {backend: memory, maxEntries: 7}\n" + INDEX, {}))
    assert isinstance(memory, MemoryCache) and memory.max_entries == 7
    two = cache_of(parse_config(INDEX, {"REDIS_URL": URL}))
    assert isinstance(two, TwoTierCache) and two.local_ttl == 5
    assert isinstance(two.local, MemoryCache) and isinstance(two.shared, RedisCache)
    alone = cache_of(parse_config("cache: {localTtl: 0}\n" + INDEX, {"REDIS_URL": URL}))
    assert isinstance(alone, RedisCache)


def test_redis_without_a_url_stops_startup() -> None:
    # a Config built in code (not loaded from a file) meets the same guard in build_cache
    config = Config(cache=CacheConfig(backend="redis"))
    with pytest.raises(ConfigError, match=r"cache\.url.*REDIS_URL"):
        cache_of(config)


def test_a_malformed_url_stops_startup_without_showing_it() -> None:
    config = Config(cache=CacheConfig(backend="redis", url="http://user:pw-s3cret@h/0"))
    with pytest.raises(ConfigError, match=r"cache\.url") as caught:
        cache_of(config)
    assert "pw-s3cret" not in str(caught.value)


@pytest.mark.parametrize(("environ", "backend"), [
    ({}, "none"),
    ({"REDIS_URL": URL}, "redis"),  # the demo config plus REDIS_URL: Redis, as documented
])
def test_the_example_config_follows_redis_url(environ: dict[str, str], backend: str) -> None:
    config = load_config(Path(__file__).parents[2] / "config.example.yaml", environ)
    assert config.cache.backend == backend
    assert isinstance(cache_of(config), NoCache if backend == "none" else TwoTierCache)


@pytest.mark.parametrize("url", [
    "http://reader:pw-s3cret@h:1/0",  # not a Redis scheme
    "redis://reader:pw-s3cret@h:port/0",
    "redis://reader:pw-s3cret@[::1/0",
    "redis://reader:pw-s3cret@h:1/0?socket_timeout=soon",
])
@pytest.mark.parametrize("where", ["file", "REDIS_URL"])
def test_a_malformed_url_is_a_config_error_at_load_time(url: str, where: str) -> None:
    # at load time: `searchport check` reports it, and `serve` stops before any worker starts
    text, environ = (f"cache: {{backend: redis, url: '{url}'}}\n", {}) if where == "file" \
        else ("", {"REDIS_URL": url})
    with pytest.raises(ConfigError, match=r"cache\.url") as caught:
        parse_config(text + INDEX, environ)
    assert "pw-s3cret" not in str(caught.value) and "reader" not in str(caught.value)


@pytest.mark.parametrize(("url", "reason"), [
    ("http://u:p@h:1/0", "must specify one of the following schemes"),  # short credentials
    ("redis://u:p@h:port/0", "could not be cast to integer"),
    ("redis://reader:port@h:port/0", "not a Redis URL"),  # the password is in the reason
])
def test_the_reason_is_readable_and_never_shows_a_credential(url: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("", {"REDIS_URL": url})
    assert reason in str(caught.value)
    assert ":p@" not in str(caught.value) and "reader" not in str(caught.value)


def test_redis_without_a_url_is_a_config_error_at_load_time() -> None:
    with pytest.raises(ConfigError, match=r"cache\.url.*REDIS_URL"):
        parse_config("cache: {backend: redis}\n" + INDEX, {})


def test_a_malformed_url_is_not_checked_when_redis_is_not_used() -> None:
    config = parse_config("cache: {backend: memory}\n" + INDEX, {"REDIS_URL": "http://x"})
    assert config.cache.backend == "memory"
