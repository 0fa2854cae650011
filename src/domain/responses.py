"""Response bodies, encoded straight to JSON by the HTTP layer."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

from searchport.domain.config import FieldType
from searchport.domain.engine_health import EngineStatus
from searchport.domain.results import Bucket, FacetValue

SearchHit = dict[str, Any]  # objectID, _index, _score, _highlights, then the document fields


class _Body(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    pass


class GeoCluster(_Body):
    lat: float
    lng: float
    count: int
    key: str
    hit: SearchHit | None


class SearchResponse(_Body):
    hits: list[SearchHit]
    total_hits: int
    page: int
    per_page: int
    total_pages: int
    facets: dict[str, list[FacetValue]]
    suggestions: list[str]
    histograms: dict[str, list[Bucket]] | msgspec.UnsetType = msgspec.UNSET
    geo_clusters: list[GeoCluster] | msgspec.UnsetType = msgspec.UNSET
    # the applied query rules' userData, in their precedence (docs/rules.md)
    user_data: list[dict[str, Any]] | msgspec.UnsetType = msgspec.UNSET
    # a virtual replica (docs/replicas.md): the relevant hits, the only ones paged through
    sorted_hits: int | msgspec.UnsetType = msgspec.UNSET
    # with clickAnalytics=true: this search in the analytics, for POST /1/events (last, as
    # when it is added to the bytes of an answer shared with others)
    query_id: str | msgspec.UnsetType = msgspec.field(default=msgspec.UNSET, name="queryID")
    # what the answer lacks that was asked for, never in its body: the HTTP layer says it in
    # a header and lets nobody keep the answer (``WordsOnlyResponse``)
    degraded: ClassVar[tuple[str, ...]] = ()


class WordsOnlyResponse(SearchResponse):
    """A search that asked for meaning answered by words alone, its embedder failing or late
    (docs/semantic.md): the body of the keyword search, ``X-Searchport-Semantic: degraded``."""

    degraded: ClassVar[tuple[str, ...]] = ("semantic",)


class FacetSearchResponse(_Body):
    field: str
    values: list[FacetValue]


class AutocompleteResponse(_Body):
    hits: list[SearchHit]
    total_hits: int
    facets: dict[str, list[FacetValue]] | msgspec.UnsetType = msgspec.UNSET
    query_id: str | msgspec.UnsetType = msgspec.field(default=msgspec.UNSET, name="queryID")
    degraded: ClassVar[tuple[str, ...]] = ()  # as ``SearchResponse``'s


class WordsOnlyAutocomplete(AutocompleteResponse):
    """Autocomplete that asked for meaning answered by words alone (``WordsOnlyResponse``)."""

    degraded: ClassVar[tuple[str, ...]] = ("semantic",)


class HealthResponse(_Body):
    status: Literal["ok", "degraded"]  # degraded: an engine is unreachable
    cache: str
    version: str
    engines: dict[str, EngineStatus]  # handle -> ok | unreachable | unknown


class CapabilitiesBody(_Body):
    suggest: bool
    boosts: bool
    histogram: bool
    geo_grid: bool
    geo_radius: bool  # aroundLatLng + aroundRadius on the Algolia routes
    nested: bool
    multi_index: bool
    raw_query: bool
    semantic: bool  # searches by meaning: GET /:handle/search takes semantic=0..1


class IndexInfo(_Body):
    handle: str
    engine: str
    capabilities: CapabilitiesBody


class IndexListResponse(_Body):
    indexes: list[IndexInfo]


class CacheClearResponse(_Body):
    cleared: bool
    removed: int | msgspec.UnsetType = msgspec.UNSET
    message: str | msgspec.UnsetType = msgspec.UNSET


class ErrorBody(_Body):
    error: str
    details: list[str] | msgspec.UnsetType = msgspec.UNSET
    request_id: str | msgspec.UnsetType = msgspec.UNSET


class FieldInfo(_Body):
    name: str  # the public name (an alias when one is configured)
    searchable: bool  # searched by a plain q (a weight or searchable: true)
    type: FieldType | msgspec.UnsetType = msgspec.UNSET  # when the config gives one


class ReplicaInfo(_Body):
    handle: str
    virtual: bool  # a relevant sort (relevantSort), else a strict sort (sort)


class IndexFieldsResponse(_Body):
    handle: str
    fields: list[FieldInfo]
    facets: list[str]  # the default facets
    per_page: int  # the default perPage
    # a replica's primary handle; a primary's replicas (those the key may read)
    replica_of: str | msgspec.UnsetType = msgspec.UNSET
    replicas: list[ReplicaInfo] | msgspec.UnsetType = msgspec.UNSET
    # the share of meaning of a search that does not say (its ``semantic.ratio``), when
    # above 0: on the Algolia routes a primary answers as NeuralSearch (docs/semantic.md)
    semantic: float | msgspec.UnsetType = msgspec.UNSET
