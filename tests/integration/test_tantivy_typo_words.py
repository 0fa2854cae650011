"""One-typo ways listed from a field's words match what the reference typo rule matches."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
import tantivy

from searchport.adapters.tantivy import typo_words
from searchport.adapters.tantivy.highlight import Highlighter, highlight_specs
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.text_query import TextQueryBuilder
from tests.integration.conftest import books_index_with_vocabulary

Row = dict[str, Any]
TEXT_FIELDS = ("title", "author")


@pytest.fixture(scope="module")
def books_index(tmp_path_factory: pytest.TempPathFactory) -> OpenIndex:
    return books_index_with_vocabulary(tmp_path_factory.mktemp("typo-words"))


def matched_ids(index: OpenIndex, query: tantivy.Query) -> set[str]:
    total = index.count(query)
    _, hits = index.top(query, max(total, 1))
    return {str(index.row(address)["id"]) for _, address in hits}


def one_edit_away(word: str, rng: random.Random) -> str:
    letters = "abcdeilnorstuz019"
    at = rng.randrange(len(word))
    edit = rng.randrange(4)
    if edit == 0:
        return word[:at] + word[at + 1:]
    if edit == 1:
        return word[:at] + rng.choice(letters) + word[at + 1:]
    if edit == 2:
        return word[:at] + rng.choice(letters) + word[at:]
    if at + 1 < len(word):
        return word[:at] + word[at + 1] + word[at] + word[at + 2:]
    return word


def query_words(rows: list[Row], ref: SimpleNamespace) -> list[str]:
    """The rows' words, some of their prefixes, and each with one random edit."""
    rng = random.Random(23)
    found = {w for row in rows for field in TEXT_FIELDS
             for value in ref.listed(row.get(field)) for w in ref.words(str(value))}
    chosen = sorted(found)
    chosen += [w[: max(1, len(w) // 2)] for w in chosen]
    chosen += [one_edit_away(w, rng) for w in chosen]
    chosen += ["xq", "zzzz", "a", "9"]
    return sorted({w for w in chosen if w})


@pytest.mark.parametrize("field", TEXT_FIELDS)
def test_listed_ways_match_the_reference_typo_rule(
        books_index: OpenIndex, rows: list[Row], ref: SimpleNamespace, field: str) -> None:
    listed = books_index.vocabulary.words(field)
    assert listed is not None
    checked = 0
    for word in query_words(rows, ref):
        for as_prefix in (True, False):
            want = {ref.doc_id(row) for row in rows
                    if any(ref.word_matches(w, word, as_prefix, 1)
                           for value in ref.listed(row.get(field))
                           for w in ref.words(str(value)))}
            way, terms = listed.prefix_way(word) if as_prefix else listed.word_way(word)
            assert matched_ids(books_index, way) == want, (word, as_prefix)
            # the terms: the words (or shortest prefixes) of the field within one typo
            assert all(ref.edit_distance(term, word) <= 1 for term in terms), word
            checked += 1
    assert checked > 100


def test_a_field_written_with_too_many_letters_keeps_the_automaton(
        books_index: OpenIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(typo_words, "MAX_LETTERS", 3)
    vocabulary = typo_words.Vocabulary(books_index.searcher, books_index.schema,
                                       list(TEXT_FIELDS))
    vocabulary.wait(30)
    assert vocabulary.ready
    assert all(vocabulary.words(field) is None for field in TEXT_FIELDS)



def test_highlights_are_those_of_the_automata(
        books_index: OpenIndex, rows: list[Row], ref: SimpleNamespace) -> None:
    automata = TextQueryBuilder(books_index.layout, books_index.schema)  # no vocabulary
    typed = [w for w in query_words(rows, ref) if 5 <= len(w) <= 8]  # one typo allowed
    assert len(typed) > 20
    listed_words = 0
    for word in typed[::3]:
        for text in (word, word + " "):  # typed, and complete
            books_index.text.build(text, (), True)  # a word's first search: its automaton
            listed = books_index.text.build(text, (), True)
            plain = automata.build(text, (), True)
            assert listed is not None and plain is not None
            listed_words += len(listed.near)
            specs = highlight_specs(books_index.layout, (), listed)
            for row in rows:
                assert (Highlighter(listed, specs).highlight(row)
                        == Highlighter(plain, specs).highlight(row)), (text, row["id"])
    assert listed_words > 0
