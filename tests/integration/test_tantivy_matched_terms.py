"""Two-typo ways listed from what their automata matched match what the reference typo rule
matches, and stay automata when they cannot be listed."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
import tantivy

from searchport.adapters.tantivy import matched_terms
from searchport.adapters.tantivy.matched_terms import MatchedTerms
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.schema import prefix_field
from tests.integration.conftest import open_books_index

Row = dict[str, Any]
TEXT_FIELDS = ("title", "author")


@pytest.fixture(scope="module")
def books_index(tmp_path_factory: pytest.TempPathFactory) -> OpenIndex:
    return open_books_index(tmp_path_factory.mktemp("matched-terms"))


def matched_ids(index: OpenIndex, query: tantivy.Query) -> set[str]:
    total = index.count(query)
    _, hits = index.top(query, max(total, 1))
    return {str(index.row(address)["id"]) for _, address in hits}


def automaton(index: OpenIndex, field: str, word: str, typed: bool) -> tantivy.Query:
    """The automaton a search builds for a two-typo word (``TextQueryBuilder``)."""
    return tantivy.Query.fuzzy_term_query(
        index.schema, prefix_field(field) if typed else field, word, distance=2,
        transposition_cost_one=True, prefix=False)


def two_edits_away(word: str, rng: random.Random) -> str:
    letters = "abcdeilnorstuz019"
    for _ in range(2):
        at = rng.randrange(len(word))
        edit = rng.randrange(4)
        if edit == 0 and len(word) > 1:
            word = word[:at] + word[at + 1:]
        elif edit == 1:
            word = word[:at] + rng.choice(letters) + word[at + 1:]
        elif edit == 2:
            word = word[:at] + rng.choice(letters) + word[at:]
        elif at + 1 < len(word):
            word = word[:at] + word[at + 1] + word[at] + word[at + 2:]
    return word


def query_words(rows: list[Row], ref: SimpleNamespace) -> list[str]:
    """The rows' words of five letters or more, each as it is and with two random edits."""
    rng = random.Random(23)
    found = sorted({w for row in rows for field in TEXT_FIELDS
                    for value in ref.listed(row.get(field)) for w in ref.words(str(value))
                    if len(w) >= 5})
    return sorted(set(found + [two_edits_away(w, rng) for w in found]))


@pytest.mark.parametrize("field", TEXT_FIELDS)
def test_listed_ways_match_the_reference_typo_rule(
        books_index: OpenIndex, rows: list[Row], ref: SimpleNamespace, field: str) -> None:
    terms = MatchedTerms(books_index.searcher, books_index.schema, books_index.row)
    listed = 0
    for word in query_words(rows, ref):
        for typed in (True, False):
            walk = automaton(books_index, field, word, typed)
            # asked the first time: the automaton stays, and the word is noted
            assert terms.way(field, word, typed, walk) == (None, False)
            way, settled = terms.way(field, word, typed, walk)
            assert settled
            want = {ref.doc_id(row) for row in rows
                    if any(ref.word_matches(w, word, typed, 2)
                           for value in ref.listed(row.get(field))
                           for w in ref.words(str(value)))}
            assert matched_ids(books_index, walk) == want, (word, typed)
            if way is not None:
                assert matched_ids(books_index, way) == want, (word, typed)
                listed += 1
            # the third time, the settled answer again, without reading
            again, settled = terms.way(field, word, typed, walk)
            assert settled and again is way
    assert listed > 100


def test_a_word_matching_too_many_documents_keeps_its_automaton(
        books_index: OpenIndex, rows: list[Row], ref: SimpleNamespace,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matched_terms, "MAX_DOCUMENTS", 1)
    terms = MatchedTerms(books_index.searcher, books_index.schema, books_index.row)
    word = next(w for w in query_words(rows, ref)
                if books_index.count(automaton(books_index, "title", w, True)) > 1)
    walk = automaton(books_index, "title", word, True)
    assert terms.way("title", word, True, walk) == (None, False)
    assert terms.way("title", word, True, walk) == (None, True)  # settled: no listing


def test_a_typed_word_too_long_for_the_prefix_field_is_not_listable() -> None:
    assert MatchedTerms.listable("x" * 18, typed=True)
    assert not MatchedTerms.listable("x" * 19, typed=True)
    assert MatchedTerms.listable("x" * 30, typed=False)
