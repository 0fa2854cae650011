"""Reciprocal rank fusion, against scores worked out by hand and a plain recomputation."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.domain.fusion import reciprocal_rank_fusion


def test_a_record_both_halves_rank_well_comes_first() -> None:
    fused = reciprocal_rank_fusion(["a", "b", "c"], ["c", "a", "d"], 0.5, k=1)
    # a: .5/2 + .5/3 = 5/12; c: .5/4 + .5/2 = 3/8; b: .5/3 = 1/6; d: .5/4 = 1/8
    assert [key for key, _ in fused] == ["a", "c", "b", "d"]
    assert [round(score, 6) for _, score in fused] == [
        round(5 / 12, 6), round(3 / 8, 6), round(1 / 6, 6), round(1 / 8, 6)]


def test_a_half_with_no_weight_brings_no_record() -> None:
    assert [k for k, _ in reciprocal_rank_fusion(["a", "b"], ["c", "a"], 0.0)] == ["a", "b"]
    assert [k for k, _ in reciprocal_rank_fusion(["a", "b"], ["c", "a"], 1.0)] == ["c", "a"]


def test_equal_scores_keep_the_keyword_order_then_meanings() -> None:
    # b is 1st by meaning, a 1st by words: equal weights, equal scores
    assert [k for k, _ in reciprocal_rank_fusion(["a"], ["b"], 0.5)] == ["a", "b"]
    assert [k for k, _ in reciprocal_rank_fusion([], ["b", "c"], 0.5)] == ["b", "c"]


def test_a_share_outside_0_to_1_is_refused() -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion(["a"], ["a"], 1.5)


def _expected(keyword: list[int], meaning: list[int], share: Fraction, k: int
              ) -> list[tuple[int, Fraction]]:
    scores: dict[int, Fraction] = {}
    if share < 1:
        for rank, key in enumerate(keyword, start=1):
            scores[key] = scores.get(key, Fraction(0)) + (1 - share) / (k + rank)
    if share > 0:
        for rank, key in enumerate(meaning, start=1):
            scores[key] = scores.get(key, Fraction(0)) + share / (k + rank)
    big = len(keyword) + len(meaning) + 1

    def order(item: tuple[int, Fraction]) -> tuple[Fraction, int, int]:
        key = item[0]
        place_k = keyword.index(key) if share < 1 and key in keyword else big
        place_m = meaning.index(key) if share > 0 and key in meaning else big
        return (-item[1], place_k, place_m)

    return sorted(scores.items(), key=order)


rankings = st.lists(st.integers(0, 30), unique=True, max_size=15)


@settings(max_examples=300, deadline=None)
@given(keyword=rankings, meaning=rankings, tenths=st.integers(0, 10), k=st.integers(1, 80))
def test_the_fusion_is_the_weighted_sum_of_reciprocal_ranks(
        keyword: list[int], meaning: list[int], tenths: int, k: int) -> None:
    share = Fraction(tenths, 10)
    fused = reciprocal_rank_fusion(keyword, meaning, tenths / 10, k=k)
    expected = _expected(keyword, meaning, share, k)
    assert {key for key, _ in fused} == {key for key, _ in expected}
    for (_, score), (_, exact) in zip(fused, expected, strict=True):
        assert score == pytest.approx(float(exact), abs=1e-12)
    # the order is exact up to float rounding of equal fractions
    exact_of = dict(expected)
    assert [exact_of[key] for key, _ in fused] == [score for _, score in expected]
