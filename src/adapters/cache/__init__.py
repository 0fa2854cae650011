"""Adapters of ``CachePort``: none, in-process memory, Redis, and Redis behind a memory tier."""
