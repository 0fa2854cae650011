"""Typo rules of the embedded engine, and the edit distance the highlighters and the
did-you-mean suggestions use to find what a typo query word matched.

The distance is the optimal string alignment (Damerau-Levenshtein without edits inside a
transposed pair): an insertion, a deletion, a substitution or a transposition of two
neighbouring letters is one typo. It is what tantivy's ``FuzzyTermQuery`` counts with
``transposition_cost_one``, so the words marked are the words the query matched.
"""

from __future__ import annotations

from searchport.domain.config import TypoToleranceConfig


def allowed_typos(word: str, rules: TypoToleranceConfig) -> int:
    """How many typos a query word of this many letters may have (0, 1 or 2)."""
    if not rules.enabled:
        return 0
    if len(word) >= rules.two_typos_from:
        return 2
    return 1 if len(word) >= rules.one_typo_from else 0


def _last_row(typed: str, word: str, limit: int) -> list[int]:
    """The last row of the alignment table of ``typed`` against ``word``: entry ``j`` is the
    distance from ``typed`` to ``word[:j]``, capped at ``limit + 1``. Only the band of cells
    within ``limit`` of the diagonal can hold a distance within ``limit``: only it is
    computed."""
    over = limit + 1
    width = len(word)
    if len(set(typed).difference(word)) > limit:  # each letter missing costs an edit
        return [over] * (width + 1)
    previous2: list[int] = []
    previous = [j if j <= limit else over for j in range(width + 1)]
    for i in range(1, len(typed) + 1):
        current = [over] * (width + 1)
        if i <= limit:
            current[0] = i
        low, high = max(1, i - limit), min(width, i + limit)
        letter = typed[i - 1]
        for j in range(low, high + 1):
            best = previous[j - 1] + (letter != word[j - 1])
            if previous[j] + 1 < best:
                best = previous[j] + 1
            if current[j - 1] + 1 < best:
                best = current[j - 1] + 1
            if (i > 1 and j > 1 and letter == word[j - 2] and typed[i - 2] == word[j - 1]
                    and previous2[j - 2] + 1 < best):
                best = previous2[j - 2] + 1
            current[j] = best if best < over else over
        previous2, previous = previous, current
    return previous


def osa_distance(a: str, b: str, limit: int) -> int:
    """The optimal string alignment distance of ``a`` and ``b``, or ``limit + 1`` when it is
    above ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    return _last_row(a, b, limit)[len(b)]


def prefix_distance(word: str, typed: str, limit: int) -> tuple[int, int]:
    """(typos, letters): the fewest typos between ``typed`` and a prefix of ``word``, and
    the length of that prefix (the longest among the best); ``limit + 1`` typos when none
    is within ``limit``."""
    row = _last_row(typed, word, limit)
    best = min(row)
    if best > limit:
        return limit + 1, 0
    return best, max(j for j, d in enumerate(row) if d == best)
