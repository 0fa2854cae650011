"""The figures of the organic hits and of the promoted records added up (``tallies``),
checked against the same figures computed over the union of the two sets of values."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchport.domain.results import Bucket, FieldStats
from searchport.domain.rules.tallies import added_histograms, added_stats

numbers = st.lists(st.integers(min_value=-1000, max_value=1000), min_size=1, max_size=30)


def stats_of(values: list[int]) -> FieldStats:
    return FieldStats(min=min(values), max=max(values), sum=sum(values), count=len(values),
                      avg=sum(values) / len(values))


def buckets_of(values: list[int], interval: int) -> list[Bucket]:
    """Every bucket from the first value's to the last's, empty ones too."""
    counts = Counter(math.floor(v / interval) * interval for v in values)
    first, last = min(counts), max(counts)
    return [Bucket(key=k, count=counts.get(k, 0)) for k in range(first, last + 1, interval)]


@given(numbers, numbers)
def test_stats_add_up_as_over_every_value(organic: list[int], promoted: list[int]) -> None:
    got = added_stats({"n": stats_of(organic)}, {"n": stats_of(promoted)})["n"]
    want = stats_of(organic + promoted)
    assert (got.min, got.max, got.sum, got.count) == (want.min, want.max, want.sum, want.count)
    assert got.avg == pytest.approx(want.avg)


def test_stats_without_a_sum_keep_only_the_bounds() -> None:
    only_bounds = FieldStats(min=3, max=9)
    got = added_stats({"n": only_bounds, "m": stats_of([1])}, {"n": stats_of([1, 20])})
    assert got["n"] == FieldStats(min=1, max=20)
    assert got["m"] == stats_of([1])  # nothing promoted for it


@given(numbers, numbers, st.sampled_from([1, 10, 250]))
def test_histograms_add_up_with_every_bucket_between(organic: list[int], promoted: list[int],
                                                      interval: int) -> None:
    got = added_histograms({"n": buckets_of(organic, interval)},
                           {"n": buckets_of(promoted, interval)}, {"n": float(interval)})
    assert got == {"n": buckets_of(organic + promoted, interval)}


def test_a_histogram_not_asked_by_interval_is_kept_as_it_is() -> None:
    organic = [Bucket(key=0, count=2)]
    assert added_histograms({"n": organic}, {}, {}) == {"n": organic}
