"""The Typesense engine: one collection over Typesense's HTTP API (tested with 0.24.1)."""

from __future__ import annotations

from searchport.adapters.resources import EngineResources
from searchport.adapters.typesense.engine import TypesenseEngine
from searchport.domain.config import IndexConfig


def create(handle: str, index: IndexConfig, resources: EngineResources) -> TypesenseEngine:
    """The engine factory the composition root calls."""
    return TypesenseEngine(handle, index, resources)


__all__ = ["TypesenseEngine", "create"]
