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
        if index.semantic is not None:
            state += f"; {vector_state(handle, index, base_dir, generation)}"
    return state


def vector_state(handle: str, index: IndexConfig, base_dir: Path, generation: Path) -> str:
    """Whether the records' vectors are there for the configured model and fields."""
    from searchport.adapters.semantic import document_model
    from searchport.adapters.tantivy import vectors

    model, _ = document_model(handle, index, base_dir)
    meta = vectors.read_meta(generation)
    if meta is not None and vectors.is_current(generation, model, vectors.meaning_fields(index)):
        return f"vectors up to date ({meta.dimensions} dimensions, {model})"
    return f"vectors outdated or missing: `serve` computes them ({model})"
