"""The bit-parallel edit distance of ``domain/typos.py`` against the whole alignment table
computed cell by cell, and the typo rule by word length."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from searchport.domain.config import TypoToleranceConfig
from searchport.domain.typos import (
    allowed_typos,
    osa_distance,
    prefix_distance,
    shortest_prefix_within,
)
from tests.edit_distance import table_row

words = st.text(alphabet="abcdé", max_size=10)


@given(words, words, st.integers(0, 3))
def test_the_distance_is_the_tables_capped_at_the_limit(a: str, b: str, limit: int) -> None:
    assert osa_distance(a, b, limit) == min(table_row(a, b)[len(b)], limit + 1)


@given(words, words, st.integers(0, 3))
def test_the_prefix_distance_is_the_best_prefix_the_longest_among_equals(
        word: str, typed: str, limit: int) -> None:
    row = table_row(typed, word)
    best = min(row)
    typos, letters = prefix_distance(word, typed, limit)
    if best > limit:
        assert typos == limit + 1
    else:
        assert (typos, letters) == (best, max(j for j, d in enumerate(row) if d == best))


@given(words, words, st.integers(0, 3))
def test_the_shortest_prefix_within_the_limit(word: str, typed: str, limit: int) -> None:
    row = table_row(typed, word)
    within = [j for j in range(1, len(word) + 1) if row[j] <= limit]
    assert shortest_prefix_within(word, typed, limit) == (within[0] if within else 0)


def test_a_swap_of_neighbours_is_one_typo() -> None:
    assert osa_distance("pairs", "paris", 2) == 1
    assert osa_distance("ca", "abc", 3) == 3  # not two: no edit inside a swapped pair


def test_typos_by_word_length() -> None:
    rules = TypoToleranceConfig()
    assert [allowed_typos("x" * n, rules) for n in (1, 4, 5, 8, 9, 20)] == [0, 0, 1, 1, 2, 2]
    lenient = TypoToleranceConfig(one_typo_from=4, two_typos_from=8)
    assert [allowed_typos("x" * n, lenient) for n in (3, 4, 7, 8)] == [0, 1, 1, 2]
    assert allowed_typos("x" * 30, TypoToleranceConfig(enabled=False)) == 0
