"""What the domain asks of an engine: validated, alias-free requests in real field names.

Every struct here is built by the domain's parsers (``searchport.domain.params``) after
validation, clamping and alias resolution, so an engine adapter only translates.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Scalar = str | int | float | bool


class TermFilter(msgspec.Struct, frozen=True, kw_only=True, tag="term"):
    """Field equals one of ``values`` (one value: equals; several: any of them)."""

    field: str
    values: tuple[Scalar, ...]


class RangeFilter(msgspec.Struct, frozen=True, kw_only=True, tag="range"):
    """A range; a bound is a number or an ISO-8601 date string, ``None`` when open.

    Bounds are inclusive unless ``min_exclusive``/``max_exclusive`` say otherwise (Algolia's
    ``price > 10`` is ``min=10, min_exclusive=True``); an exclusive bound is always a number.
    """

    field: str
    min: float | str | None = None
    max: float | str | None = None
    min_exclusive: bool = False
    max_exclusive: bool = False

    def __post_init__(self) -> None:
        if (self.min_exclusive and (self.min is None or isinstance(self.min, str))) or (
            self.max_exclusive and (self.max is None or isinstance(self.max, str))
        ):
            raise ValueError("an exclusive range bound must be a number")


class NotFilter(msgspec.Struct, frozen=True, kw_only=True, tag="not"):
    """Field equals none of ``values``."""

    field: str
    values: tuple[Scalar, ...]


class ExistsFilter(msgspec.Struct, frozen=True, kw_only=True, tag="exists"):
    """Field is present (``exists=True``) or missing (``exists=False``)."""

    field: str
    exists: bool


class GeoRadiusFilter(msgspec.Struct, frozen=True, kw_only=True, tag="geo_radius"):
    """The geo point ``field`` lies within ``radius_m`` meters (great-circle distance) of
    ``lat``/``lon``; a document without the field does not. Engines whose ``Capabilities``
    lack ``geo_radius`` refuse it."""

    field: str
    lat: float
    lon: float
    radius_m: float

    def __post_init__(self) -> None:
        if not (-90 <= self.lat <= 90 and -180 <= self.lon <= 180):
            raise ValueError("a geo radius centre needs a latitude in [-90, 90] and a "
                             "longitude in [-180, 180]")
        if not self.radius_m > 0 or self.radius_m == float("inf"):
            raise ValueError("a geo radius must be a positive finite number of meters")


class GeoPoint(msgspec.Struct, frozen=True, kw_only=True):
    lat: float
    lon: float


class GeoBoxFilter(msgspec.Struct, frozen=True, kw_only=True, tag="geo_box"):
    """The geo point ``field`` lies inside the box, edges included (Algolia's
    ``insideBoundingBox``); ``west`` east of ``east`` crosses the antimeridian. A document
    without the field does not."""

    field: str
    north: float
    south: float
    west: float
    east: float

    def __post_init__(self) -> None:
        if not (-90 <= self.south <= self.north <= 90):
            raise ValueError("a geo box needs latitudes in [-90, 90], north above south")
        if not (-180 <= self.west <= 180 and -180 <= self.east <= 180):
            raise ValueError("a geo box needs longitudes in [-180, 180]")


class GeoPolygonFilter(msgspec.Struct, frozen=True, kw_only=True, tag="geo_polygon"):
    """The geo point ``field`` lies inside the polygon whose vertices are ``points`` (three
    or more, the last joined to the first; Algolia's ``insidePolygon``), edges drawn as
    straight lines in latitude/longitude. A document without the field does not."""

    field: str
    points: tuple[GeoPoint, ...]

    def __post_init__(self) -> None:
        if len(self.points) < 3:
            raise ValueError("a geo polygon needs at least three points")
        if not all(-90 <= p.lat <= 90 and -180 <= p.lon <= 180 for p in self.points):
            raise ValueError("a geo polygon needs latitudes in [-90, 90] and longitudes in "
                             "[-180, 180]")


class AnyOf(msgspec.Struct, frozen=True, kw_only=True, tag="any_of"):
    """At least one of ``filters`` holds (two or more; they may name different fields)."""

    filters: tuple[Filter, ...]

    def __post_init__(self) -> None:
        if len(self.filters) < 2:
            raise ValueError("AnyOf needs at least two filters")


class Negated(msgspec.Struct, frozen=True, kw_only=True, tag="negated"):
    """The complement of ``filter``: every document it does not select, documents without
    its field included."""

    filter: Filter


class AllOf(msgspec.Struct, frozen=True, kw_only=True, tag="all_of"):
    """Every one of ``filters`` holds (one or more). A group, so never a facet's own filter:
    a key's forced filters travel as one ``AllOf``, which no facet count ever drops."""

    filters: tuple[Filter, ...]

    def __post_init__(self) -> None:
        if not self.filters:
            raise ValueError("AllOf needs at least one filter")


Filter = (TermFilter | RangeFilter | NotFilter | ExistsFilter | GeoRadiusFilter | GeoBoxFilter
          | GeoPolygonFilter | AnyOf | Negated | AllOf)


def filter_field(f: Filter) -> str | None:
    """The one field a filter is on; ``None`` for a group (``AnyOf``, ``Negated``,
    ``AllOf``), which is never a facet's own filter."""
    return None if isinstance(f, AnyOf | Negated | AllOf) else f.field


class SortClause(msgspec.Struct, frozen=True, kw_only=True):
    field: str  # a real field name, or "_score"
    order: Literal["asc", "desc"]


class GeoSort(msgspec.Struct, frozen=True, kw_only=True):
    """Closest first: by the great-circle distance from ``lat``/``lon`` to the geo point
    ``field`` (its closest value when it has several); documents without it come last."""

    field: str
    lat: float
    lon: float

    def __post_init__(self) -> None:
        if not (-90 <= self.lat <= 90 and -180 <= self.lon <= 180):
            raise ValueError("a geo sort centre needs a latitude in [-90, 90] and a "
                             "longitude in [-180, 180]")


class FieldWeight(msgspec.Struct, frozen=True, kw_only=True):
    field: str
    weight: float


class HistogramSpec(msgspec.Struct, frozen=True, kw_only=True):
    field: str
    interval: float


class GeoBounds(msgspec.Struct, frozen=True, kw_only=True):
    top_left: GeoPoint
    bottom_right: GeoPoint


class GeoGridSpec(msgspec.Struct, frozen=True, kw_only=True):
    field: str
    precision: int
    bounds: GeoBounds | None = None


class SearchQuery(msgspec.Struct, frozen=True, kw_only=True):
    """One full-text search, ready for an engine.

    Semantics every engine must honour:
    - ``text`` empty or blank matches every document; otherwise any-word (OR) BM25-style
      relevance over ``search_fields`` (empty tuple: all searchable fields), the last word
      also matching as a prefix when ``prefix_last_word``; with ``all_words``, a hit
      matches every word of ``required_words()`` (each in any searched field).
    - ``filters`` AND together. Hits, ``total``, histograms and geo clusters follow all of
      them (and the geo bounds). Facet counts are disjunctive: a facet field's own filters do
      not narrow its own counts, every other filter does. A filter on a field with several
      values holds when *some* value does (``NotFilter``: when none does).
    - ``AllOf`` holds when every one of its filters does.
    - ``AnyOf`` holds when at least one of its filters does; ``Negated`` is the exact
      complement of its filter (a document without the field is selected by
      ``Negated(TermFilter(...))`` and ``Negated(RangeFilter(...))``). Both nest freely and
      are never a facet's own filter (``filter_field`` is ``None``): they narrow every facet's
      counts. An adapter that cannot express one exactly refuses it with a 400 naming the
      engine; an unknown filter kind is an error, never "match everything".
    - ``stats``: numeric fields (integer or float) whose ``FieldStats`` are wanted, over every
      value of the field in the matching documents (a list counts each of its values; a field
      inside nested objects, each object's value). They follow the filters as a facet on that
      field would: with ``disjunctive_facets`` the field's own filters do not narrow them,
      every other filter does; without, every filter does.
    - ``sort`` keys in priority order; empty means by relevance.
    - ``geo_sort``: when set, hits are ordered by distance first (``GeoSort``), then by
      ``sort`` (by relevance when empty) among hits at the same distance (Algolia's
      ``aroundLatLng``). Engines whose ``Capabilities`` lack ``geo_radius`` refuse it, and
      an adapter that cannot put it before the other keys refuses it with a 400 naming the
      engine (never a silent relevance order).
    - ``highlight``: highlight ``highlight_fields`` (empty tuple: every text field) with
      ``<mark>`` around matched terms in HTML-escaped text.
    - ``fields``: the stored fields to return (``None``: all).
    - ``suggest_field``: when set, return phrase suggestions built from that field.
    - ``ids``: only the records with these document ids (``Hit.id``; ``None``: any record);
      ``excluded_ids``: never the records with these. Both narrow hits, ``total`` and every
      count alike (never a facet's own filter); each adapter uses the engine's own id
      (query rules' promotes and hides ask for them).
    - ``semantic``: the share of meaning in the ranking (docs/semantic.md), 0 (words only,
      ``vector`` unused) to 1 (meaning only); above 0, ``vector`` is the query text's, and
      the engine fuses its keyword ranking and its ranking by ``vector`` (reciprocal rank
      fusion, each weighted by its share). Filters narrow both; ``total`` and every count
      describe the fused hits. Only engines whose handle has a ``semantic`` section get one.
    """

    text: str = ""
    offset: int = 0
    limit: int = 20
    filters: tuple[Filter, ...] = ()
    facets: tuple[str, ...] = ()
    max_facet_values: int = 100
    sort: tuple[SortClause, ...] = ()
    geo_sort: GeoSort | None = None
    highlight: bool = False
    highlight_fields: tuple[str, ...] = ()
    fields: tuple[str, ...] | None = None
    search_fields: tuple[FieldWeight, ...] = ()
    prefix_last_word: bool = True
    suggest_field: str | None = None
    histograms: tuple[HistogramSpec, ...] = ()
    geo_grid: GeoGridSpec | None = None
    exact_total: bool = True
    # False: facet counts follow every filter, their own field's too (Algolia's semantics)
    disjunctive_facets: bool = True
    stats: tuple[str, ...] = ()
    ids: tuple[str, ...] | None = None
    excluded_ids: tuple[str, ...] = ()
    # Algolia's word matching: every word of ``text`` must match, but those named in
    # ``optional_words`` (compared case-insensitively), which only add relevance; when every
    # word is optional, any word matches. False: any word matches (``/search``).
    all_words: bool = False
    optional_words: tuple[str, ...] = ()
    semantic: float = 0.0
    vector: tuple[float, ...] | None = None

    def required_words(self) -> tuple[str, ...] | None:
        """The words of ``text`` (split at white space) a hit must match, in order; ``None``
        when any word matches (``all_words`` off, or every word optional)."""
        if not self.all_words:
            return None
        optional = {w.casefold() for w in self.optional_words}
        required = tuple(w for w in self.text.split() if w.casefold() not in optional)
        return required or None


class FacetValuesQuery(msgspec.Struct, frozen=True, kw_only=True):
    """Values of one facet field whose text contains ``text`` (case-insensitive), with the
    counts of documents matching ``filters``; ordered by count then value, at most ``limit``."""

    field: str
    text: str = ""
    limit: int = 20
    filters: tuple[Filter, ...] = ()
