"""The embedded tantivy engine: an index folder built from a local source file."""

from pathlib import Path

from searchport.adapters.resources import EngineResources
from searchport.adapters.tantivy.builder import IndexBuildReport, build_index, index_state
from searchport.adapters.tantivy.engine import TantivyEngine
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.schema import IndexLayout
from searchport.domain.config import IndexConfig

__all__ = ["IndexBuildReport", "TantivyEngine", "build_index", "check_index", "create"]


def create(handle: str, index: IndexConfig, resources: EngineResources) -> TantivyEngine:
    """The engine factory the composition root calls."""
    return TantivyEngine(handle, index, resources.base_dir)


def check_index(handle: str, index: IndexConfig, base_dir: Path) -> str:
    """``searchport check`` on a tantivy handle: its state in a sentence, the index searched
    once when it is built and up to date; nothing is written (no build, no lock, no stamp)."""
    state, generation = index_state(handle, index, base_dir)
    if generation is not None:
        OpenIndex(handle, generation, IndexLayout(index)).probe()
    return state
