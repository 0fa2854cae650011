"""Algolia's ``_snippetResult`` from engine fragments: a window of N words around the first
match, highlight tags kept balanced, the ellipsis exactly where words were left out (by the
window or by the engine's own fragment), the attribute's match level; checked on examples
and, with hypothesis, against the words of the value itself."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchport.domain.errors import InvalidRequest
from searchport.entrypoints.algolia.highlight import Tags
from searchport.entrypoints.algolia.snippet import snippet_result, snippet_sizes

HTML = Tags()  # <em> ... </em>: the value stays HTML-escaped
PLACEHOLDER = Tags("__ais-highlight__", "__/ais-highlight__")  # plain text
TWELVE = "one two three four five six seven eight nine ten eleven twelve"


def marked(words: list[str], at: set[int]) -> str:
    """The engine's fragment of the whole value: HTML-escaped, the words at ``at`` marked."""
    return " ".join(f"<mark>{html.escape(w)}</mark>" if i in at else html.escape(w)
                    for i, w in enumerate(words))


@pytest.mark.parametrize(("size", "expected"), [
    (4, "… five <em>six</em> seven eight …"),
    (3, "… five <em>six</em> seven …"),
    (1, "… <em>six</em> …"),
    (12, f"{TWELVE.replace('six', '<em>six</em>')}"),
    (50, f"{TWELVE.replace('six', '<em>six</em>')}"),
])
def test_a_window_of_words_around_the_first_match(size: int, expected: str) -> None:
    fragment = TWELVE.replace("six", "<mark>six</mark>")
    found = snippet_result(TWELVE, [fragment], ["six"], HTML, size, "…")
    assert found is not None
    assert (found.value, found.match_level) == (expected, "full")


def test_near_the_edges_the_window_keeps_its_size() -> None:
    first = TWELVE.replace("one", "<mark>one</mark>")
    last = TWELVE.replace("twelve", "<mark>twelve</mark>")
    assert snippet_result(TWELVE, [first], ["one"], HTML, 3, "…").value == (  # type: ignore[union-attr]
        "<em>one</em> two three …")
    assert snippet_result(TWELVE, [last], ["twelve"], HTML, 3, "…").value == (  # type: ignore[union-attr]
        "… ten eleven <em>twelve</em>")


def test_without_a_match_the_first_words() -> None:
    found = snippet_result("Port & Harbour of the North", None, ["ship"], HTML, 3, "…")
    assert found is not None
    assert (found.value, found.match_level) == ("Port &amp; Harbour …", "none")
    plain = snippet_result("Port & Harbour", [], [], PLACEHOLDER, 10, "…")
    assert plain is not None and plain.value == "Port & Harbour"


def test_a_mark_cut_by_the_window_is_closed_and_reopened() -> None:
    value = "in New York City today"
    fragment = "in <mark>New York City</mark> today"
    assert snippet_result(value, [fragment], ["new", "york", "city"], HTML, 1, "…").value == (  # type: ignore[union-attr]
        "… <em>New</em> …")
    found = snippet_result(value, [fragment], ["new", "york", "city"], PLACEHOLDER, 2, "[…]")
    assert found is not None
    assert found.value == "[…] __ais-highlight__New York__/ais-highlight__ […]"


def test_an_engine_fragment_cut_from_a_longer_value_gets_the_ellipsis() -> None:
    """Elasticsearch, Meilisearch and Typesense may send part of a long value: the text it
    left out is cut too, on the side it was left out."""
    value = "A tale of the sea and of a castle by the sea, told at night"
    middle = "and of a <mark>castle</mark> by the"
    assert snippet_result(value, [middle], ["castle"], HTML, 10, "…").value == (  # type: ignore[union-attr]
        "… and of a <em>castle</em> by the …")
    start = "A tale of the sea and of a <mark>castle</mark>"
    assert snippet_result(value, [start], ["castle"], HTML, 20, "…").value == (  # type: ignore[union-attr]
        "A tale of the sea and of a <em>castle</em> …")


def test_the_ellipsis_text_and_the_tags_follow_the_request() -> None:
    fragment = TWELVE.replace("six", "<mark>six</mark>")
    assert snippet_result(TWELVE, [fragment], ["six"], HTML, 2, "").value == (  # type: ignore[union-attr]
        "<em>six</em> seven")
    # HTML tags: the ellipsis text is escaped like the value, never markup of its own
    assert snippet_result(TWELVE, [fragment], ["six"], HTML, 1, "<b>").value == (  # type: ignore[union-attr]
        "&lt;b&gt; <em>six</em> &lt;b&gt;")
    assert snippet_result(TWELVE, [fragment], ["six"], PLACEHOLDER, 1, "<b>").value == (  # type: ignore[union-attr]
        "<b> __ais-highlight__six__/ais-highlight__ <b>")


def test_match_levels_and_values_that_are_no_text() -> None:
    fragment = "<mark>Castle</mark> of Otranto"
    partial = snippet_result("Castle of Otranto", [fragment], ["castle", "night"], HTML, 5, "…")
    assert partial is not None and partial.match_level == "partial"
    assert snippet_result(1925, None, [], HTML, 5, "…").value == "1925"  # type: ignore[union-attr]
    assert snippet_result(["a", "b"], None, [], HTML, 5, "…") is None
    assert snippet_result(True, None, [], HTML, 5, "…") is None


@pytest.mark.parametrize(("entries", "expected"), [
    (["description"], {"description": 10}),
    (["description:20", "title:3"], {"description": 20, "title": 3}),
    ([" title : 4 "], {"title": 4}),
    (["*:5", "title"], {"*": 5, "title": 10}),
    (["title:2", "title:7"], {"title": 7}),
])
def test_snippet_sizes(entries: list[str], expected: dict[str, int]) -> None:
    assert snippet_sizes(entries) == expected


@pytest.mark.parametrize("entry", ["title:0", "title:-1", "title:many", ":5", "title:"])
def test_bad_snippet_sizes_are_a_400_naming_the_parameter(entry: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        snippet_sizes([entry])
    assert "attributesToSnippet" in str(caught.value)


# ---------------------------------------------------------------- properties

words_st = st.lists(st.text(st.characters(categories=("L", "N", "P", "S"),
                                          exclude_characters="…"), min_size=1, max_size=6),
                    min_size=1, max_size=30)
TAG = re.compile(r"</?em>")


@given(words_st, st.data(), st.integers(1, 40))
def test_the_window_is_the_words_around_the_first_match(words: list[str], data: st.DataObject,
                                                        size: int) -> None:
    """Whatever the words, the marks and the size: the snippet is min(size, words) words in
    a row of the value, holding the first marked word (the first words when none is), tags
    balanced, and the ellipsis on a side exactly when the value has words beyond it there."""
    at = data.draw(st.sets(st.integers(0, len(words) - 1), max_size=4))
    value = " ".join(words)
    fragments = [marked(words, at)] if at else None
    found = snippet_result(value, fragments, ["\x00"], HTML, size, "…")  # no word matches it
    assert found is not None
    text = found.value
    cut_before, cut_after = text.startswith("… "), text.endswith(" …")
    text = text.removeprefix("… ") if cut_before else text
    text = text.removesuffix(" …") if cut_after else text
    tags = TAG.findall(text)
    assert tags == ["<em>", "</em>"] * (len(tags) // 2)  # balanced, never nested
    shown = html.unescape(TAG.sub("", text)).split(" ")
    count = min(size, len(words))
    starts = [i for i in range(len(words) - count + 1) if words[i:i + count] == shown]
    assert starts, (words, shown)
    first = min(at) if at else 0
    assert any(s <= first < s + count for s in starts)
    assert any((s > 0) == cut_before and (s + count < len(words)) == cut_after for s in starts)
    assert found.match_level == ("none" if not at else "partial")
