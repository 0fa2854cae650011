"""Reciprocal rank fusion, against scores worked out by hand and a plain recomputation."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.domain.fusion import meaning_complete, reciprocal_rank_fusion, words_complete


def sure(*keys: str) -> list[tuple[str, float]]:
    """A ranking by meaning whose every record is as similar as can be (full votes)."""
    return [(key, 1.0) for key in keys]


def test_a_record_both_halves_rank_well_comes_first() -> None:
    fused = reciprocal_rank_fusion(["a", "b", "c"], sure("c", "a", "d"), 0.5, k=1)
    # a: .5/2 + .5/3 = 5/12; c: .5/4 + .5/2 = 3/8; b: .5/3 = 1/6; d: .5/4 = 1/8
    assert [key for key, _ in fused] == ["a", "c", "b", "d"]
    assert [round(score, 6) for _, score in fused] == [
        round(5 / 12, 6), round(3 / 8, 6), round(1 / 6, 6), round(1 / 8, 6)]


def test_a_half_with_no_weight_brings_no_record() -> None:
    assert [k for k, _ in reciprocal_rank_fusion(["a", "b"], sure("c", "a"), 0.0)] == ["a", "b"]
    assert [k for k, _ in reciprocal_rank_fusion(["a", "b"], sure("c", "a"), 1.0)] == ["c", "a"]


def test_equal_scores_keep_the_keyword_order_then_meanings() -> None:
    # b is 1st by meaning, a 1st by words: equal weights, equal scores
    assert [k for k, _ in reciprocal_rank_fusion(["a"], sure("b"), 0.5)] == ["a", "b"]
    assert [k for k, _ in reciprocal_rank_fusion([], sure("b", "c"), 0.5)] == ["b", "c"]


def test_a_share_outside_0_to_1_is_refused() -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion(["a"], sure("a"), 1.5)


def test_a_typed_prefix_keeps_the_keyword_search_first_hit() -> None:
    # "sha" as typed: words find Shanghai first and Sharjah fifth; meaning finds Sharjah
    # and Osaka a little similar (below the floor) and Shanghai not among its nearest.
    words = ["shanghai", "shantou", "shangrao", "shaoxing", "sharjah"]
    by_meaning = [("sharjah", 0.45), ("osaka", 0.41)]
    fused = reciprocal_rank_fusion(words, by_meaning, 0.5, floor=0.5)
    assert [key for key, _ in fused] == words
    # by rank alone, Sharjah would come first: .5/65 + .5/61 > .5/61
    plain = reciprocal_rank_fusion(words, by_meaning, 0.5, floor=0.0)
    assert [key for key, _ in plain][:2] == ["sharjah", "shanghai"]
    assert "osaka" in dict(plain)


def test_a_record_similar_enough_weighs_in_fully() -> None:
    by_meaning = [("venice", 0.71), ("bruges", 0.52), ("osaka", 0.5)]
    fused = reciprocal_rank_fusion(["bruges"], by_meaning, 0.5, floor=0.5)
    # bruges: .5/61 + .5/62; venice: .5/61; osaka, at the floor, is not brought
    assert [key for key, _ in fused] == ["bruges", "venice"]
    assert fused[0][1] == pytest.approx(0.5 / 61 + 0.5 / 62)


def test_meaning_alone_ranks_by_similarity_whatever_the_floor() -> None:
    by_meaning = [("a", 0.3), ("b", 0.2)]
    assert [k for k, _ in reciprocal_rank_fusion(["b"], by_meaning, 1.0, floor=0.5)] == [
        "a", "b"]
    # fused, neither passes the floor: words alone decide
    assert [k for k, _ in reciprocal_rank_fusion(["b"], by_meaning, 0.9, floor=0.5)] == ["b"]


def _expected(keyword: list[int], meaning: list[tuple[int, Fraction]], share: Fraction,
              floor: Fraction, k: int) -> list[tuple[int, Fraction]]:
    scores: dict[int, Fraction] = {}
    if share < 1:
        for rank, key in enumerate(keyword, start=1):
            scores[key] = scores.get(key, Fraction(0)) + (1 - share) / (k + rank)
    counted = []
    if share > 0:
        for key, similarity in meaning:
            if share == 1 or similarity > floor:
                counted.append(key)
                scores[key] = scores.get(key, Fraction(0)) + share / (k + len(counted))
    big = len(keyword) + len(meaning) + 1
    keys = [key for key, _ in meaning]

    def order(item: tuple[int, Fraction]) -> tuple[Fraction, int, int]:
        key = item[0]
        place_k = keyword.index(key) if share < 1 and key in keyword else big
        place_m = keys.index(key) if key in counted else big
        return (-item[1], place_k, place_m)

    return sorted(scores.items(), key=order)


rankings = st.lists(st.integers(0, 30), unique=True, max_size=15)


@settings(max_examples=300, deadline=None)
@given(keyword=rankings, meaning=rankings, tenths=st.integers(0, 10), k=st.integers(1, 80),
       similarities=st.lists(st.integers(-10, 10), min_size=15, max_size=15),
       floor_tenths=st.integers(0, 9))
def test_the_fusion_is_the_weighted_sum_of_reciprocal_ranks(
        keyword: list[int], meaning: list[int], tenths: int, k: int,
        similarities: list[int], floor_tenths: int) -> None:
    # a ranking by meaning is best first: its similarities never grow down the list
    ranked = sorted(similarities, reverse=True)[:len(meaning)]
    by_meaning = [(key, Fraction(tenth, 10)) for key, tenth in zip(meaning, ranked, strict=True)]
    share, floor = Fraction(tenths, 10), Fraction(floor_tenths, 10)
    fused = reciprocal_rank_fusion(keyword, [(key, float(s)) for key, s in by_meaning],
                                   tenths / 10, floor_tenths / 10, k=k)
    expected = _expected(keyword, by_meaning, share, floor, k)
    assert {key for key, _ in fused} == {key for key, _ in expected}
    for (_, score), (_, exact) in zip(fused, expected, strict=True):
        assert score == pytest.approx(float(exact), abs=1e-12)
    # the order is exact up to float rounding of equal fractions
    exact_of = dict(expected)
    assert [exact_of[key] for key, _ in fused] == [score for _, score in expected]


def test_the_words_are_complete_when_every_match_fits_the_window() -> None:
    # counted: every match within the window, however many came back
    assert words_complete(100, 100, matching=100) is True
    assert words_complete(100, 100, matching=101) is False
    # not counted: only a half that came back short of its window is known to hold them all
    assert words_complete(99, 100) is True
    assert words_complete(100, 100) is False


def test_meaning_is_complete_when_no_record_beyond_the_window_passes_the_floor() -> None:
    window = [0.9, 0.7, 0.6]
    assert meaning_complete(window[:2], 3, 0.5, floor=0.5) is True  # came back short
    assert meaning_complete(window, 3, 0.5, floor=0.65) is True  # the last one is below
    assert meaning_complete(window, 3, 0.5, floor=0.6) is True  # at the floor: left out
    assert meaning_complete(window, 3, 0.5, floor=0.5) is False  # the next may pass
    # meaning alone ranks every record, whatever its similarity; no meaning, nothing to cut
    assert meaning_complete(window, 3, 1.0, floor=0.65) is False
    assert meaning_complete(window[:2], 3, 1.0, floor=0.65) is True
    assert meaning_complete(window, 3, 0.0, floor=0.5) is True
