"""What engines answer, in domain terms (real field names, before aliasing)."""

from __future__ import annotations

from typing import Any

import msgspec


class Hit(msgspec.Struct, kw_only=True):
    """One document as an engine returned it."""

    id: str
    index: str
    score: float | None = None
    source: dict[str, Any] = msgspec.field(default_factory=dict)
    highlights: dict[str, list[str]] = msgspec.field(default_factory=dict)


class FacetValue(msgspec.Struct, frozen=True, kw_only=True):
    value: str
    count: int


class Bucket(msgspec.Struct, frozen=True, kw_only=True):
    key: float
    count: int


class EngineGeoCluster(msgspec.Struct, kw_only=True):
    lat: float  # centroid of the documents in the tile
    lng: float
    count: int
    key: str  # "z/x/y"
    hit: Hit | None = None


class FieldStats(msgspec.Struct, frozen=True, kw_only=True):
    """Numeric stats of one field over the values in the matching documents (at least one).

    ``None`` where the engine cannot tell exactly (Meilisearch gives only min and max).
    """

    min: float
    max: float
    avg: float | None = None
    sum: float | None = None
    count: int | None = None  # values counted (a list counts each of its values)


class EngineResult(msgspec.Struct, kw_only=True):
    hits: list[Hit]
    total: int
    facets: dict[str, list[FacetValue]] = msgspec.field(default_factory=dict)
    histograms: dict[str, list[Bucket]] = msgspec.field(default_factory=dict)
    geo_clusters: list[EngineGeoCluster] | None = None
    suggestions: list[str] = msgspec.field(default_factory=list)
    # a stats field without any value in the matching documents is absent
    stats: dict[str, FieldStats] = msgspec.field(default_factory=dict)
    # a virtual replica's relevant sort (``domain/replicas``): the hits kept and paged
    # through, of ``total``; ``None`` without one
    sorted_total: int | None = None
    # False: records beyond ``total`` match the words too (a hybrid search's keyword half
    # came back full, cut at its window: docs/semantic.md); ``total`` still counts the hits
    # exactly
    complete_total: bool = True


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What an engine adapter can do beyond plain search; the rest is refused with a 400."""

    suggest: bool = False
    boosts: bool = True
    histogram: bool = False
    geo_grid: bool = False
    geo_radius: bool = False  # GeoRadiusFilter and SearchQuery.geo_sort (aroundLatLng)
    geo_area: bool = False  # GeoBoxFilter and GeoPolygonFilter
    nested: bool = False
    multi_index: bool = False
    raw_query: bool = True
    # a raw query can be run inside forced filters (a scoped key's), exactly
    raw_query_filters: bool = False
    # every facet value counted exactly over every matching record (no sampling, no shards)
    exact_facet_counts: bool = False
    # the most hits one search returns (None: as many as asked)
    max_page: int | None = None
