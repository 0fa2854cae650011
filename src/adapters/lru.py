"""One least-recently-used map, bounded by entries and by bytes: the in-process cache, the
rate limit's memory and the compressed bodies all keep their entries in one."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    """``size(key, value)``: the bytes an entry is counted for; past ``max_entries`` or
    ``max_bytes`` the least recently used entries go first. An entry larger than
    ``max_bytes`` on its own is not kept. Not thread-safe: everything runs on the event
    loop."""

    def __init__(self, max_entries: int, max_bytes: float = math.inf,
                 size: Callable[[K, V], int] = lambda key, value: 0) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        """The entry, now the most recently used; None when absent."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self.discard(key)
        size = self._size(key, value)
        if size > self.max_bytes:
            return
        self._entries[key] = value
        self.bytes += size
        while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
            oldest, dropped = self._entries.popitem(last=False)
            self.bytes -= self._size(oldest, dropped)

    def discard(self, key: K) -> None:
        value = self._entries.pop(key, None)
        if value is not None:
            self.bytes -= self._size(key, value)

    def clear(self) -> None:
        self._entries.clear()
        self.bytes = 0
