"""``engine: querySuggestions``: a handle's popular queries served by the embedded engine,
rebuilt from records the domain makes (``domain/usecases/build_suggestions.py``)."""

from searchport.adapters.resources import EngineResources
from searchport.adapters.suggestions.engine import QuerySuggestionsEngine
from searchport.domain.config import IndexConfig

__all__ = ["QuerySuggestionsEngine", "create"]


def create(handle: str, index: IndexConfig, resources: EngineResources
           ) -> QuerySuggestionsEngine:
    """The engine factory the composition root calls."""
    return QuerySuggestionsEngine(handle, index, resources.base_dir)
