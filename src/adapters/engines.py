"""Each engine's adapter, by the name the config gives it: the table the composition root
reads to build a handle's engine. Adding an engine is its adapter package, one factory here
and one row in ``domain/engines.py``.

Each factory imports its package when it is first called, so that a process never loads an
engine it does not serve (tantivy's bindings alone take several MiB of each worker).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from searchport.adapters.resources import EngineResources
    from searchport.domain.config import IndexConfig
    from searchport.ports.engine import SearchEnginePort

EngineFactory = Callable[[str, "IndexConfig", "EngineResources"], "SearchEnginePort"]


def elasticsearch(handle: str, index: IndexConfig, resources: EngineResources
                  ) -> SearchEnginePort:
    from searchport.adapters.elastic import create_elasticsearch

    return create_elasticsearch(handle, index, resources)


def opensearch(handle: str, index: IndexConfig, resources: EngineResources) -> SearchEnginePort:
    from searchport.adapters.elastic import create_opensearch

    return create_opensearch(handle, index, resources)


def meilisearch(handle: str, index: IndexConfig, resources: EngineResources) -> SearchEnginePort:
    from searchport.adapters.meilisearch import create

    return create(handle, index, resources)


def typesense(handle: str, index: IndexConfig, resources: EngineResources) -> SearchEnginePort:
    from searchport.adapters.typesense import create

    return create(handle, index, resources)


def tantivy(handle: str, index: IndexConfig, resources: EngineResources) -> SearchEnginePort:
    from searchport.adapters.tantivy import create

    return create(handle, index, resources)


def query_suggestions(handle: str, index: IndexConfig, resources: EngineResources
                      ) -> SearchEnginePort:
    from searchport.adapters.suggestions import create

    return create(handle, index, resources)


ADAPTERS: dict[str, EngineFactory] = {
    "elasticsearch": elasticsearch,
    "opensearch": opensearch,
    "meilisearch": meilisearch,
    "typesense": typesense,
    "tantivy": tantivy,
    "querySuggestions": query_suggestions,
}
