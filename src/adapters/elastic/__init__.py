"""The Elasticsearch and OpenSearch engines: one query-DSL translator, two small flavors."""

from __future__ import annotations

from searchport.adapters.elastic import elasticsearch, opensearch
from searchport.adapters.elastic.engine import ElasticCompatEngine
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig


def create_elasticsearch(handle: str, index: IndexConfig,
                         resources: EngineResources) -> ElasticCompatEngine:
    return ElasticCompatEngine(handle, index, resources, elasticsearch.FLAVOR)


def create_opensearch(handle: str, index: IndexConfig,
                      resources: EngineResources) -> ElasticCompatEngine:
    return ElasticCompatEngine(handle, index, resources, opensearch.FLAVOR)


__all__ = ["ElasticCompatEngine", "create_elasticsearch", "create_opensearch"]
