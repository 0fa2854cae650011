"""The bound a text query carries on how many documents match every word without a typo
(``TextMatch.exact_most``), against plain counting over the rows."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from searchport.adapters.tantivy.reader import OpenIndex
from tests.integration.conftest import open_books_index

Row = dict[str, Any]


@pytest.fixture(scope="module")
def books_index(tmp_path_factory: pytest.TempPathFactory) -> OpenIndex:
    return open_books_index(tmp_path_factory.mktemp("exact-bound"))


def every_word_exact(row: Row, text: str, ref: SimpleNamespace) -> bool:
    """Each word of ``text`` in a searched text field without a typo (the last one also as
    the start of a word), or the word or the whole text equal to a keyword."""
    query = ref.words(text)
    last = query[-1] if text[-1].isalnum() else None
    keywords = {ref.fold(v) for f in ref.keyword_fields for v in ref.listed(row.get(f))}
    doc_words = {w for f in ref.text_fields for v in ref.listed(row.get(f))
                 for w in ref.words(str(v))}
    return all(any(ref.word_matches(w, q, q == last, 0) for w in doc_words)
               or q in keywords or ref.fold(text.strip()) in keywords for q in query)


def test_the_bound_holds_every_document_matching_every_word_exactly(
        books_index: OpenIndex, rows: list[Row], ref: SimpleNamespace) -> None:
    words = sorted({w for row in rows for f in ref.text_fields
                    for v in ref.listed(row.get(f)) for w in ref.words(str(v))})
    texts = [*words[::3], *(w[:3] for w in words[::5]),
             *(f"{a} {b[:2]}" for a, b in zip(words[::4], words[1::4], strict=False)),
             "zzzzqqq", "zzzzqqq the"]
    bounded = 0
    for text in texts:
        match = books_index.text.build(text, (), True)
        assert match is not None
        assert match.exact_most is not None, text
        want = sum(every_word_exact(row, text, ref) for row in rows)
        assert match.exact_most >= want, text
        bounded += match.exact_most < len(rows)
    assert bounded > len(texts) // 2  # a bound, not a number above every count
    nothing = books_index.text.build("zzzzqqq the", (), True)
    assert nothing is not None and nothing.exact_most == 0  # a word no document holds
