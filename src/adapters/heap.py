"""The C heap of a process running tantivy: freed pages given back, arenas bounded.

tantivy allocates through the C library: an index writer's buffers, a field's whole term
list, each search's scorers. Once freed, glibc keeps such memory resident for the life of
the process unless asked to trim it (a worker that rebuilds a small index every few
seconds, as Query Suggestions does, would grow with every rebuild); and each thread
searching at once gets an arena of its own, each keeping its own freed memory, unless the
arenas are bounded before the process's threads make them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable

_M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    return None if name is None else ctypes.CDLL(name)


def _function(name: str) -> Callable[..., int] | None:
    libc = _libc()
    found: Callable[..., int] | None = None if libc is None else getattr(libc, name, None)
    return found


def give_back_freed_memory() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``; a no-op
    where the C library has none)."""
    trim = _function("malloc_trim")
    if trim is not None:
        trim(0)


def bound_arenas(count: int) -> None:
    """At most ``count`` glibc arenas for this process and the workers it forks (``mallopt``
    ``M_ARENA_MAX``; a no-op elsewhere). glibc settles the limit when a thread first needs
    an arena of its own: call it before the process starts any thread."""
    mallopt = _function("mallopt")
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, count)
