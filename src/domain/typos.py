"""Typo rules of the embedded engine, and the edit distance the highlighters and the
did-you-mean suggestions use to find what a typo query word matched.

The distance is the optimal string alignment (Damerau-Levenshtein without edits inside a
transposed pair): an insertion, a deletion, a substitution or a transposition of two
neighbouring letters is one typo. It is what tantivy's ``FuzzyTermQuery`` counts with
``transposition_cost_one``, so the words marked are the words the query matched.
"""

from __future__ import annotations

import functools

from searchport.domain.config import TypoToleranceConfig

# Distances of a typed word to the words it marks, shared by requests: search-as-you-type
# asks the same words again and again (pairs of short strings; bounded).
PREFIX_DISTANCES_CACHED = 8_192


def allowed_typos(word: str, rules: TypoToleranceConfig) -> int:
    """How many typos a query word of this many letters may have (0, 1 or 2)."""
    if not rules.enabled:
        return 0
    if len(word) >= rules.two_typos_from:
        return 2
    return 1 if len(word) >= rules.one_typo_from else 0


def _last_row(typed: str, word: str, limit: int) -> list[int]:
    """The last row of the alignment table of ``typed`` against ``word``: entry ``j`` is the
    distance from ``typed`` to ``word[:j]``, capped at ``limit + 1``.

    Bit-parallel (Myers' algorithm with Hyyrö's transposition term, "A bit-vector algorithm
    for computing Levenshtein and Damerau edit distances", 2002): one bit per letter of
    ``typed`` holds whether the table goes up or down a column, so each letter of ``word``
    costs a few integer operations instead of a loop over ``typed``."""
    over = limit + 1
    if len(set(typed).difference(word)) > limit:  # each letter missing costs an edit
        return [over] * (len(word) + 1)
    size = len(typed)
    if size == 0:
        return [min(j, over) for j in range(len(word) + 1)]
    mask = (1 << size) - 1
    high = 1 << (size - 1)
    equal: dict[str, int] = {}
    for i, letter in enumerate(typed):
        equal[letter] = equal.get(letter, 0) | (1 << i)
    up, down, diagonal, before = mask, 0, 0, 0
    score = size
    row = [min(size, over)]
    for letter in word:
        same = equal.get(letter, 0)
        swapped = (((~diagonal) & same) << 1) & before
        diagonal = ((((same & up) + up) ^ up) | same | down | swapped) & mask
        right = (down | ~(diagonal | up)) & mask
        left = diagonal & up
        if right & high:
            score += 1
        elif left & high:
            score -= 1
        right = ((right << 1) | 1) & mask
        up = ((left << 1) | ~(diagonal | right)) & mask
        down = right & diagonal
        before = same
        row.append(min(score, over))
    return row


def osa_distance(a: str, b: str, limit: int) -> int:
    """The optimal string alignment distance of ``a`` and ``b``, or ``limit + 1`` when it is
    above ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    return _last_row(a, b, limit)[len(b)]


@functools.lru_cache(maxsize=PREFIX_DISTANCES_CACHED)
def prefix_distance(word: str, typed: str, limit: int) -> tuple[int, int]:
    """(typos, letters): the fewest typos between ``typed`` and a prefix of ``word``, and
    the length of that prefix (the longest among the best); ``limit + 1`` typos when none
    is within ``limit``."""
    row = _last_row(typed, word, limit)
    best = min(row)
    if best > limit:
        return limit + 1, 0
    return best, max(j for j, d in enumerate(row) if d == best)


def shortest_prefix_within(word: str, typed: str, limit: int) -> int:
    """The length of the shortest prefix of ``word`` within ``limit`` typos of ``typed``
    (0 when none is)."""
    row = _last_row(typed, word, limit)
    return next((j for j, d in enumerate(row) if d <= limit and j > 0), 0)
