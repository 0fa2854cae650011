"""The cache used when none is configured (``cache.backend: none``): every lookup is a miss.

It is the domain's ``NoCache``: storing nothing needs no I/O, and the use cases fall back to
the same object when they are built without a cache.
"""

from __future__ import annotations

from searchport.domain.response_cache import NoCache as NullCache

__all__ = ["NullCache"]
