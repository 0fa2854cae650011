"""The C heap's freed pages given back to the system after tantivy's large transient work.

tantivy allocates through the C library: an index writer's buffers, a field's whole term
list. Once freed, glibc keeps such memory resident for the life of the process unless
asked to trim it; a worker that rebuilds a small index every few seconds (Query
Suggestions) grew by megabytes per rebuild.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    trim: Callable[[int], int] | None = getattr(ctypes.CDLL(name), "malloc_trim", None)
    return trim


def give_back_freed_memory() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``; a no-op
    where the C library has none)."""
    trim = _trim()
    if trim is not None:
        trim(0)
