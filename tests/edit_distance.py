"""The tests' reference edit distance: optimal string alignment computed over the whole table,
cell by cell (insertions, deletions, substitutions and swaps of two neighbouring letters cost
one each), the plain-Python truth the engine's typo matching is checked against."""

from __future__ import annotations


def table_row(a: str, b: str) -> list[int]:
    """The last row of the full table: the distance of ``a`` to each prefix ``b[:j]``."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)]


def edit_distance(a: str, b: str) -> int:
    return table_row(a, b)[len(b)]
