"""The in-process cache's own rules: TTL, least-recently-used eviction, entry and byte bounds."""

from __future__ import annotations

import asyncio

from searchport.adapters.cache.memory import ENTRY_OVERHEAD, MemoryCache
from searchport.ports.cache import CachePort


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_conforms_to_the_port() -> None:
    cache: CachePort = MemoryCache()
    assert cache.status == "memory"
    assert asyncio.run(cache.probe()) == "memory"


def test_entries_expire_after_their_ttl() -> None:
    clock = Clock()
    cache = MemoryCache(clock=clock)
    cache.store("a", b"1", ttl=10)
    cache.store("b", b"2", ttl=20)
    clock.now += 9.9
    assert (cache.lookup("a"), cache.lookup("b")) == (b"1", b"2")
    clock.now += 0.1
    assert cache.lookup("a") is None and cache.lookup("b") == b"2"
    assert len(cache) == 1  # the expired entry is gone, not only hidden
    clock.now += 10
    assert cache.lookup("b") is None and len(cache) == 0 and cache.size_bytes == 0


def test_the_least_recently_used_goes_first_past_max_entries() -> None:
    cache = MemoryCache(max_entries=3)
    for key in "abc":
        cache.store(key, key.encode(), ttl=60)
    assert cache.lookup("a") == b"a"  # a is now the most recently used
    cache.store("d", b"d", ttl=60)
    assert [k for k in "abcd" if cache.lookup(k) is not None] == ["a", "c", "d"]
    assert len(cache) == 3


def test_bytes_are_bounded_too() -> None:
    value = b"x" * 1000
    per_entry = len("k0") + len(value) + ENTRY_OVERHEAD
    cache = MemoryCache(max_entries=1000, max_bytes=per_entry * 3)
    for i in range(5):
        cache.store(f"k{i}", value, ttl=60)
    assert len(cache) == 3 and cache.size_bytes == per_entry * 3
    assert [i for i in range(5) if cache.lookup(f"k{i}") is not None] == [2, 3, 4]


def test_a_value_larger_than_the_whole_budget_is_not_stored() -> None:
    cache = MemoryCache(max_bytes=2048)
    cache.store("small", b"s", ttl=60)
    cache.store("huge", b"h" * 4096, ttl=60)
    assert cache.lookup("huge") is None and cache.lookup("small") == b"s"


def test_overwriting_replaces_the_value_and_its_size() -> None:
    cache = MemoryCache()
    cache.store("k", b"a" * 100, ttl=60)
    cache.store("k", b"b", ttl=60)
    assert cache.lookup("k") == b"b"
    assert cache.size_bytes == len("k") + 1 + ENTRY_OVERHEAD


def test_a_non_positive_ttl_stores_nothing_and_drops_the_old_value() -> None:
    cache = MemoryCache()
    cache.store("k", b"v", ttl=60)
    cache.store("k", b"w", ttl=0)
    assert cache.lookup("k") is None and len(cache) == 0


def test_clear_counts_and_empties() -> None:
    cache = MemoryCache()
    for i in range(4):
        cache.store(f"k{i}", b"v", ttl=60)
    assert asyncio.run(cache.clear()) == 4
    assert len(cache) == 0 and cache.size_bytes == 0
