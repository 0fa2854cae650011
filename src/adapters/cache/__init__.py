"""Adapters of ``CachePort``: none, in-process memory, Redis, and Redis behind a memory tier;
and ``CachedEngine``, the engines' answers kept in whichever of them is configured."""
