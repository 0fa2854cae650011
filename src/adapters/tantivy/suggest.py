"""Did-you-mean on the embedded engine: the query with its misspelled words corrected.

A query word is misspelled when the suggest field (``defaults.suggestField``, a text
field) holds no such word, and, for the word being typed, no word starting with it. Its
correction is the closest word of that field within the typos allowed (at least one
from 3 letters, two from 7, or the handle's rule when more lenient), found in the
best-ranked documents holding one (custom ranking first: "pariss" becomes "paris", the
word of the most populous city on the demo). Without a misspelled word, or without a
correction for any of them, there is no suggestion.
"""

from __future__ import annotations

import tantivy

from searchport.adapters.tantivy.documents import field_value
from searchport.adapters.tantivy.filters import field_spec
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.schema import MAX_PREFIX_CHARS, prefix_field, text_analyzer
from searchport.adapters.tantivy.sorting import sorted_page
from searchport.adapters.tantivy.text_query import QueryWord
from searchport.domain.errors import InvalidRequest
from searchport.domain.typos import osa_distance, prefix_distance

_LOOKED_AT = 20  # documents read for the corrections of one word
_ANALYZER = text_analyzer()


def did_you_mean(ix: OpenIndex, words: list[QueryWord], field: str) -> list[str]:
    """The corrected query (at most one suggestion), or nothing."""
    spec = field_spec(ix.layout, field, "suggest from")
    if spec.type != "text":
        raise InvalidRequest(
            f'Cannot suggest from "{field}": it is a {spec.type} field; set '
            f"defaults.suggestField to a text field"
        )
    corrected = []
    changed = False
    for word in words:
        if _known(ix, field, word):
            corrected.append(word.text)
            continue
        better = _correction(ix, field, word)
        changed = changed or better is not None
        corrected.append(better or word.text)
    return [" ".join(corrected)] if changed else []


def _known(ix: OpenIndex, field: str, word: QueryWord) -> bool:
    if ix.count(tantivy.Query.term_query(ix.schema, field, word.text)) > 0:
        return True
    if word.prefix and len(word.text) <= MAX_PREFIX_CHARS:
        starts = tantivy.Query.term_query(ix.schema, prefix_field(field), word.text)
        return ix.count(starts) > 0
    return False


def _typos(word: QueryWord) -> int:
    length = len(word.text)
    lenient = 2 if length >= 7 else 1 if length >= 3 else 0
    return max(lenient, word.typos)


def _correction(ix: OpenIndex, field: str, word: QueryWord) -> str | None:
    typos = _typos(word)
    if typos == 0:
        return None
    near = tantivy.Query.const_score_query(tantivy.Query.fuzzy_term_query(
        ix.schema, field, word.text, distance=typos, transposition_cost_one=True,
        prefix=word.prefix), 1.0)
    _, page, _ = sorted_page(ix, near, (), 0, _LOOKED_AT)
    best: tuple[int, str] | None = None  # (typos, the word)
    for _, address in page:
        value = field_value(ix.row(address), field)
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str):
                continue
            for token in _ANALYZER.analyze(item):
                found = _distance(token, word, typos)
                if found <= typos and (best is None or found < best[0]):
                    best = (found, token)
        if best is not None and best[0] == 1:
            break  # the best-ranked document with a word one typo away
    return None if best is None else best[1]


def _distance(token: str, word: QueryWord, typos: int) -> int:
    """Typos from the query word to ``token`` (``typos + 1`` beyond ``typos``); for the
    word being typed, to the start of ``token`` (the correction is the whole word)."""
    if word.prefix:
        return prefix_distance(token, word.text, typos)[0]
    return osa_distance(token, word.text, typos)
