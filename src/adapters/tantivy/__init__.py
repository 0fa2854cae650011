"""The embedded tantivy engine: an index folder built from a local source file."""

from searchport.adapters.tantivy.builder import IndexBuildReport, build_index
from searchport.adapters.tantivy.engine import TantivyEngine

__all__ = ["IndexBuildReport", "TantivyEngine", "build_index"]
