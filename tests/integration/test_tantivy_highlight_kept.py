"""A text's highlighter is kept with its built query, and what it marked is kept per document:
later requests get the same highlights as a highlighter made afresh, within bounds."""

from __future__ import annotations

import gc
import random
from typing import Any

import pytest

from searchport.adapters.tantivy import highlight, text_query
from searchport.adapters.tantivy.highlight import Highlighter, highlight_specs, highlighter
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.text_query import TextMatch
from tests.integration.conftest import books_index_with_vocabulary

Row = dict[str, Any]


@pytest.fixture(scope="module")
def books_index(tmp_path_factory: pytest.TempPathFactory) -> OpenIndex:
    return books_index_with_vocabulary(tmp_path_factory.mktemp("highlight-kept"))


def texts(rows: list[Row]) -> list[str]:
    """Prefixes and whole words of the rows' titles, some with two letters swapped."""
    rng = random.Random(5)
    words = sorted({w.lower() for row in rows for w in str(row.get("title", "")).split()
                    if w.isalpha()})
    found = []
    for word in words:
        found += [word[:2], word[:3], word, word + " "]
        if len(word) >= 5:
            i = rng.randrange(len(word) - 1)
            found.append(word[:i] + word[i + 1] + word[i] + word[i + 2:])
    return found


def test_kept_highlights_are_those_of_a_fresh_highlighter(
        books_index: OpenIndex, rows: list[Row]) -> None:
    marked = 0
    for text in texts(rows):
        for _ in range(2):  # a text's first search lists no typo ways; later ones do
            match = books_index.text.build(text, (), True)
            assert match is not None
            specs = highlight_specs(books_index.layout, (), match)
            kept = highlighter(match, specs)
            assert highlighter(match, specs) is kept
            for document, row in enumerate(rows):
                expected = Highlighter(match, specs).highlight(row)
                first = kept.highlight(row, document)
                assert first == expected, (text, row["id"])
                first.clear()  # the caller's copy: what is kept does not change
                assert kept.highlight(row, document) == expected, (text, row["id"])
                marked += bool(expected)
    assert marked > 100


def test_what_is_kept_stays_bounded(books_index: OpenIndex, rows: list[Row],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(highlight, "MARKED_KEPT", 50)
    highlight._MARKED.clear()
    most_marked = 0
    for text in texts(rows)[:60]:
        match = books_index.text.build(text, (), True)
        assert match is not None
        kept = highlighter(match, highlight_specs(books_index.layout, (), match))
        for document, row in enumerate(rows):
            kept.highlight(row, document)
            most_marked = max(most_marked, len(highlight._MARKED))
    assert most_marked == 50


def test_a_query_built_for_one_request_keeps_nothing(books_index: OpenIndex,
                                                     rows: list[Row]) -> None:
    # a word with a typo, never searched before: its listed ways wait for a second search,
    # so its query is built again then, with another highlighter
    word = next(w for w in (str(r.get("title", "")).split()[-1].lower() for r in rows)
                if len(w) >= 6 and w.isalpha())
    text = word[1] + word[0] + word[2:] + " zq"
    first = books_index.text.build(text, (), True)
    assert first is not None and not first.lasting
    highlight._MARKED.clear()
    kept = highlighter(first, highlight_specs(books_index.layout, (), first))
    for document, row in enumerate(rows):
        kept.highlight(row, document)
    assert not highlight._MARKED
    again = books_index.text.build(text, (), True)
    assert again is not None and again.lasting and again is not first
    assert books_index.text.build(text, (), True) is again


def _cyclic_garbage(make: Any) -> list[object]:
    """The text matches and highlighters that ``make()`` leaves to the garbage collector
    (in reference cycles) instead of freeing them as soon as nothing refers to them."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        make()
        gc.collect()
        return [o for o in gc.garbage if isinstance(o, (TextMatch, Highlighter))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_a_dropped_query_and_its_highlighter_are_freed_at_once(
        books_index: OpenIndex, rows: list[Row], monkeypatch: pytest.MonkeyPatch) -> None:
    # a match keeps its highlighter: were the highlighter to point back, each dropped match
    # would wait, with its native tantivy queries, for a full collection (rare in a server)
    word = next(w for w in (str(r.get("title", "")).split()[-1].lower() for r in rows)
                if len(w) >= 6 and w.isalpha())

    def one_request(text: str) -> None:
        match = books_index.text.build(text, (), True)
        assert match is not None
        kept = highlighter(match, highlight_specs(books_index.layout, (), match))
        for document, row in enumerate(rows):
            kept.highlight(row, document)

    # built for one request (a typo never searched before), then dropped
    assert not _cyclic_garbage(lambda: one_request(word[1] + word[0] + word[2:] + " qz"))
    # built to last, then dropped from the built queries, which are emptied when full
    monkeypatch.setattr(text_query, "MATCHES_CACHED", 1)

    def evicted() -> None:
        for text in texts(rows)[:20]:
            one_request(text)
        highlight._MARKED.clear()

    assert not _cyclic_garbage(evicted)
