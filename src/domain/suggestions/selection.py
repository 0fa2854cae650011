"""Which popular queries may become suggestions: Algolia's ``minLetters`` and ``exclude``,
before the source is asked about each (``minHits`` is checked on its answer)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_PLAIN = re.compile(r"[\w\s'-]+")


def letters(query: str) -> int:
    """How many letters and digits the query has (spaces and punctuation do not count)."""
    return sum(1 for c in query if c.isalnum())


def nb_words(query: str) -> int:
    return len(query.split())


def exclusion(patterns: Sequence[str]) -> re.Pattern[str] | None:
    """One expression for ``exclude``: a plain word or phrase excludes the queries that
    hold it as whole words (``kill`` excludes "kill bill", not "skill"); any other entry
    is a regular expression that excludes a query wherever it matches in it. Case is
    ignored (queries are logged case-folded). ``re.error`` for an invalid expression."""
    if not patterns:
        return None
    parts = []
    for pattern in patterns:
        if _PLAIN.fullmatch(pattern):
            words = r"\s+".join(re.escape(w) for w in pattern.split())
            parts.append(rf"(?<![\w'-]){words}(?![\w'-])")
        else:
            re.compile(pattern)  # each entry checked alone, so the error names it
            parts.append(f"(?:{pattern})")
    return re.compile("|".join(parts), re.IGNORECASE)


def eligible(query: str, *, min_letters: int, excluded: re.Pattern[str] | None) -> bool:
    if letters(query) < min_letters:
        return False
    return excluded is None or excluded.search(query) is None
