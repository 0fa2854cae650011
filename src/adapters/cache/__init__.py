"""Adapters of ``CachePort``: in-process memory, Redis, and Redis behind a memory tier (no
cache, ``cache.backend: none``, is the domain's ``NoCache``: storing nothing needs no I/O)."""
