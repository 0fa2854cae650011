"""From engine results to response bodies: hit metadata, aliases, facet order, histograms."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from searchport.domain.config import FieldConfig
from searchport.domain.errors import InvalidRequest
from searchport.domain.fields import FieldMap
from searchport.domain.query import HistogramSpec
from searchport.domain.responses import GeoCluster
from searchport.domain.results import Bucket, EngineGeoCluster, FacetValue, Hit
from searchport.domain.shaping import (
    MAX_HISTOGRAM_BUCKETS,
    fill_histogram,
    order_facet_values,
    shape_clusters,
    shape_document,
    shape_facets,
    shape_hit,
)

FIELDS = FieldMap(
    {"region": FieldConfig(field="continent"), "pop": FieldConfig(field="population")}
)

CLASHING_SOURCE = {
    "objectID": "fake-id",
    "_index": "fake-index",
    "_score": 1000,
    "_highlights": {"name": ["fake"]},
    "name": "Paris",
    "continent": "Europe",
}


def test_hit_metadata_wins_over_stored_fields() -> None:
    hit = Hit(
        id="42",
        index="cities-v2",
        score=1.5,
        source=CLASHING_SOURCE,
        highlights={"name": ["<mark>Par</mark>is"], "continent": ["<mark>Eu</mark>rope"]},
    )
    assert shape_hit(FIELDS, hit) == {
        "objectID": "42",
        "_index": "cities-v2",
        "_score": 1.5,
        "_highlights": {"name": ["<mark>Par</mark>is"], "region": ["<mark>Eu</mark>rope"]},
        "name": "Paris",
        "region": "Europe",
    }


def test_without_aliases_metadata_still_wins_and_key_order_is_metadata_first() -> None:
    plain = FieldMap({})
    clashing = Hit(id="42", index="cities", score=2.0, source=CLASHING_SOURCE,
                   highlights={"name": ["<mark>Par</mark>is"]})
    shaped = shape_hit(plain, clashing)
    assert shaped == {"objectID": "42", "_index": "cities", "_score": 2.0,
                      "_highlights": {"name": ["<mark>Par</mark>is"]},
                      "name": "Paris", "continent": "Europe"}
    clean = Hit(id="7", index="cities", source={"name": "Oslo", "pop": 1})
    shaped = shape_hit(plain, clean)
    assert list(shaped) == ["objectID", "_index", "_score", "_highlights", "name", "pop"]
    assert shaped is not clean.source and clean.source == {"name": "Oslo", "pop": 1}


def test_hit_without_score_or_highlights() -> None:
    shaped = shape_hit(FIELDS, Hit(id="1", index="i"))
    assert shaped == {"objectID": "1", "_index": "i", "_score": None, "_highlights": {}}


def test_document_has_id_and_index_but_no_score_or_highlights() -> None:
    shaped = shape_document(FIELDS, Hit(id="7", index="i", score=3.0, source=CLASHING_SOURCE))
    assert shaped == {"objectID": "7", "_index": "i", "name": "Paris", "region": "Europe"}


def test_facet_values_are_ordered_by_count_then_value_and_limited() -> None:
    values = [
        FacetValue(value="b", count=2),
        FacetValue(value="c", count=5),
        FacetValue(value="a", count=2),
        FacetValue(value="d", count=1),
        FacetValue(value="aa", count=5),
    ]
    expected = [("aa", 5), ("c", 5), ("a", 2), ("b", 2), ("d", 1)]
    ordered = order_facet_values(values, 10)
    assert [(v.value, v.count) for v in ordered] == expected
    assert [(v.value, v.count) for v in order_facet_values(values, 3)] == expected[:3]


def test_facet_order_on_random_values() -> None:
    rng = random.Random(7)
    values = [
        FacetValue(value=f"v{rng.randint(0, 50)}", count=rng.randint(0, 9)) for _ in range(60)
    ]
    ordered = order_facet_values(values, 100)
    for before, after in itertools.pairwise(ordered):
        assert before.count > after.count or (
            before.count == after.count and before.value <= after.value
        )
    assert sorted(ordered, key=lambda v: (v.value, v.count)) == sorted(
        values, key=lambda v: (v.value, v.count)
    )


def test_facet_keys_come_back_under_public_names() -> None:
    facets = {
        "continent": [FacetValue(value="Asia", count=1), FacetValue(value="Europe", count=3)],
        "country": [FacetValue(value="FR", count=2)],
    }
    shaped = shape_facets(FIELDS, facets, 10)
    assert list(shaped) == ["region", "country"]
    assert [v.value for v in shaped["region"]] == ["Europe", "Asia"]


# -- histograms ----------------------------------------------------------------------------


def _expected_buckets(interval: float, counts: dict[int, int]) -> list[tuple[float, int]]:
    """Independent computation: slot index -> count, filled from the first to the last
    non-empty slot."""
    present = sorted(i for i, c in counts.items() if c > 0)
    if not present:
        return []
    return [(i * interval, counts.get(i, 0)) for i in range(present[0], present[-1] + 1)]


def test_histogram_fills_gaps_and_sorts() -> None:
    spec = HistogramSpec(field="population", interval=10)
    buckets = [Bucket(key=50, count=1), Bucket(key=20, count=4), Bucket(key=0, count=0)]
    filled = fill_histogram(spec, buckets)
    assert [(b.key, b.count) for b in filled] == [(20, 4), (30, 0), (40, 0), (50, 1)]


def test_histogram_trims_empty_buckets_outside_the_data() -> None:
    spec = HistogramSpec(field="x", interval=1)
    buckets = [Bucket(key=k, count=c) for k, c in [(-2, 0), (-1, 3), (0, 0), (1, 2), (2, 0)]]
    assert [(b.key, b.count) for b in fill_histogram(spec, buckets)] == [
        (-1, 3), (0, 0), (1, 2)
    ]


def test_histogram_with_no_data_is_empty() -> None:
    spec = HistogramSpec(field="x", interval=5)
    assert fill_histogram(spec, []) == []
    assert fill_histogram(spec, [Bucket(key=0, count=0)]) == []


def test_histogram_with_fractional_interval() -> None:
    spec = HistogramSpec(field="x", interval=0.1)
    buckets = [Bucket(key=0.1 * 3, count=2), Bucket(key=0.1 * 7, count=1)]
    filled = fill_histogram(spec, buckets)
    assert [b.count for b in filled] == [2, 0, 0, 0, 1]
    for bucket, expected in zip(filled, [0.3, 0.4, 0.5, 0.6, 0.7], strict=True):
        assert math.isclose(bucket.key, expected, abs_tol=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_histogram_on_random_buckets(seed: int) -> None:
    rng = random.Random(seed)
    interval = rng.choice([1, 5, 250, 1_000_000])
    counts = {i: rng.choice([0, 0, 1, 7]) for i in rng.sample(range(-20, 40), 12)}
    buckets = [Bucket(key=i * interval, count=c) for i, c in counts.items()]
    filled = fill_histogram(HistogramSpec(field="x", interval=interval), buckets)
    assert [(b.key, b.count) for b in filled] == _expected_buckets(interval, counts)


def test_histogram_bucket_count_guard() -> None:
    spec = HistogramSpec(field="population", interval=1)
    at_limit = [Bucket(key=0, count=1), Bucket(key=MAX_HISTOGRAM_BUCKETS - 1, count=1)]
    assert len(fill_histogram(spec, at_limit)) == MAX_HISTOGRAM_BUCKETS
    too_many = [Bucket(key=0, count=1), Bucket(key=MAX_HISTOGRAM_BUCKETS, count=1)]
    with pytest.raises(InvalidRequest, match="population"):
        fill_histogram(spec, too_many)


# -- geo clusters --------------------------------------------------------------------------


def test_clusters_shape_their_sample_hit() -> None:
    clusters = [
        EngineGeoCluster(
            lat=48.8, lng=2.3, count=3, key="3/4/2",
            hit=Hit(id="1", index="i", score=None, source={"continent": "Europe", "_score": 9}),
        ),
        EngineGeoCluster(lat=-33.9, lng=151.2, count=1, key="3/7/4", hit=None),
    ]
    assert shape_clusters(FIELDS, clusters) == [
        GeoCluster(
            lat=48.8, lng=2.3, count=3, key="3/4/2",
            hit={"objectID": "1", "_index": "i", "_score": None, "_highlights": {},
                 "region": "Europe"},
        ),
        GeoCluster(lat=-33.9, lng=151.2, count=1, key="3/7/4", hit=None),
    ]


@pytest.mark.parametrize("interval", [5e-324, 1e-300, 1e-9])
def test_a_tiny_histogram_interval_is_a_400_not_an_overflow(interval: float) -> None:
    spec = HistogramSpec(field="population", interval=interval)
    buckets = [Bucket(key=0.0, count=1), Bucket(key=1e6, count=1)]
    with pytest.raises(InvalidRequest, match="population"):
        fill_histogram(spec, buckets)
