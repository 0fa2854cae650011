"""The Meilisearch engine: search parameters over HTTP, ``Authorization: Bearer`` keys."""

from __future__ import annotations

from searchport.adapters.meilisearch.engine import MeilisearchEngine
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig


def create(handle: str, index: IndexConfig, resources: EngineResources) -> MeilisearchEngine:
    return MeilisearchEngine(handle, index, resources)


__all__ = ["MeilisearchEngine", "create"]
