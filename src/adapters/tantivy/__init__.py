"""The embedded tantivy engine: an index folder built from a local source file."""

from searchport.adapters.resources import EngineResources
from searchport.adapters.tantivy.builder import IndexBuildReport, build_index
from searchport.adapters.tantivy.engine import TantivyEngine
from searchport.domain.config import IndexConfig

__all__ = ["IndexBuildReport", "TantivyEngine", "build_index", "create"]


def create(handle: str, index: IndexConfig, resources: EngineResources) -> TantivyEngine:
    """The engine factory the composition root calls."""
    return TantivyEngine(handle, index, resources.base_dir)
