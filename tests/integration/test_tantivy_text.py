"""Full-text matching and highlighting on a real tantivy index."""

from __future__ import annotations

import html
import re
from types import SimpleNamespace
from typing import Any

import pytest

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import FieldWeight, SearchQuery, TermFilter

pytestmark = pytest.mark.anyio
Row = dict[str, Any]


async def found(engine: TantivyEngine, **query: Any) -> set[str]:
    result = await engine.search(SearchQuery(limit=100, **query))
    assert result.total == len(result.hits)
    return {hit.id for hit in result.hits}


@pytest.mark.parametrize("text", [
    "castle", "Castles", "night", "zurich", "ZÜRICH", "garden moon", "river", "r", "ca",
    "the", "sea", "cafe", "fiction", "FICTION", "Art", "ja", "castle ", "nig", "xyzzy",
    "ga castle ga", "1925 tok",
])
async def test_text_matches_any_word_and_a_prefix_of_the_last(
        books_engine: TantivyEngine, rows: list[Row], ref: SimpleNamespace, text: str) -> None:
    want = {ref.doc_id(r) for r in rows if ref.text_matches(r, text)}
    assert await found(books_engine, text=text) == want


async def test_prefix_matching_can_be_switched_off(
        books_engine: TantivyEngine, rows: list[Row], ref: SimpleNamespace) -> None:
    want = {ref.doc_id(r) for r in rows if ref.text_matches(r, "nig", prefix=False)}
    assert want == set()
    assert await found(books_engine, text="nig", prefix_last_word=False) == want
    full = {ref.doc_id(r) for r in rows if ref.text_matches(r, "night", prefix=False)}
    assert await found(books_engine, text="night", prefix_last_word=False) == full


async def test_blank_text_matches_everything(books_engine: TantivyEngine,
                                             rows: list[Row]) -> None:
    for text in ("", "   "):
        result = await books_engine.search(SearchQuery(text=text, limit=1))
        assert result.total == len(rows)


@pytest.mark.parametrize("text", [
    'title:castle AND (', "genre:*", '"unbalanced', "a OR b", "-castle", "castle^10",
    "[1 TO 2]", "\\", "*", "~", "ti*le", "(((", "\x00",
])
async def test_user_text_is_never_query_syntax(books_engine: TantivyEngine, rows: list[Row],
                                               ref: SimpleNamespace, text: str) -> None:
    want = {ref.doc_id(r) for r in rows if ref.text_matches(r, text)}
    assert await found(books_engine, text=text) == want


async def test_search_fields_restrict_and_weight(books_engine: TantivyEngine, rows: list[Row],
                                                 ref: SimpleNamespace) -> None:
    only_author = (FieldWeight(field="author", weight=1.0),)
    want = {ref.doc_id(r) for r in rows
            if ref.text_matches(r, "anne", fields=("author",), keywords=())}
    assert want
    assert await found(books_engine, text="anne", search_fields=only_author) == want

    # A hit matching both words ("Castles in the Air" by Anne Rice: castles is one typo
    # from castle) comes first whatever the weights; among hits matching one word, the
    # field with the higher weight comes first.
    def matched(row: Row, word: str) -> bool:
        return bool(ref.text_matches(row, word, keywords=(), prefix=word == "rice"))

    both = {ref.doc_id(r) for r in rows if matched(r, "castle") and matched(r, "rice")}
    assert both
    heavy_title = (FieldWeight(field="title", weight=10.0), FieldWeight(field="author", weight=0.1))
    light_title = (FieldWeight(field="title", weight=0.1), FieldWeight(field="author", weight=10.0))
    for weights, field, word in ((heavy_title, "title", "castle"), (light_title, "author", "rice")):
        result = await books_engine.search(SearchQuery(text="castle rice", search_fields=weights,
                                                       limit=100))
        hit_ids = [hit.id for hit in result.hits]
        assert set(hit_ids[:len(both)]) == both
        first = next(r for r in rows if ref.doc_id(r) == hit_ids[len(both)])
        assert matched({field: first.get(field)}, word) if field == "author" else (
            any(ref.word_matches(w, "castle", False, 1) for w in ref.words(first["title"])))


async def test_numbers_match_listed_number_fields(books_engine: TantivyEngine, rows: list[Row],
                                                  ref: SimpleNamespace) -> None:
    fields = (FieldWeight(field="year", weight=1.0), FieldWeight(field="title", weight=1.0))
    want = {ref.doc_id(r) for r in rows
            if r.get("year") == 1999 or ref.text_matches(r, "1999", fields=("title",),
                                                         keywords=())}
    assert want
    assert await found(books_engine, text="1999", search_fields=fields) == want


async def test_unknown_search_field_is_invalid(books_engine: TantivyEngine) -> None:
    with pytest.raises(InvalidRequest, match='"nope"'):
        await books_engine.search(SearchQuery(text="x", search_fields=(
            FieldWeight(field="nope", weight=1.0),)))


async def test_scores_rank_better_matches_first(books_engine: TantivyEngine) -> None:
    result = await books_engine.search(SearchQuery(text="castle river", limit=100))
    scores = [hit.score for hit in result.hits]
    assert all(isinstance(s, float) for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert result.hits[0].id == "b08"  # "The River & the Castle": both words


# --- highlighting -----------------------------------------------------------------------

MARK = re.compile(r"<mark>(.*?)</mark>")


async def test_highlights_escape_html_and_mark_matched_words(
        books_engine: TantivyEngine, rows: list[Row]) -> None:
    result = await books_engine.search(SearchQuery(text="tango", highlight=True, limit=100))
    by_id = {r["id"]: r for r in rows}
    deluxe = next(h for h in result.hits if "<Deluxe>" in by_id[h.id]["title"])
    assert deluxe.highlights["title"] == ["<mark>Tango</mark> &amp; Cash &lt;Deluxe&gt;"]
    for hit in result.hits:
        for fragment in hit.highlights["title"]:
            # Without the marks, a fragment is exactly the escaped original text.
            assert fragment.replace("<mark>", "").replace("</mark>", "") == html.escape(
                by_id[hit.id]["title"])
            assert all(w.lower() == "tango" for w in MARK.findall(fragment))


async def test_highlights_cover_prefix_matches_and_accents(books_engine: TantivyEngine) -> None:
    result = await books_engine.search(SearchQuery(text="zur", highlight=True, limit=100))
    fragments = sorted(f for h in result.hits for f in h.highlights.get("title", []))
    # a prefix match marks the letters typed, accents kept as written
    assert fragments == ["<mark>Zur</mark>ich Nights &amp; Days", "A Night in <mark>Zür</mark>ich"]


async def test_highlights_leave_out_unmatched_fields(books_engine: TantivyEngine,
                                                      rows: list[Row]) -> None:
    result = await books_engine.search(SearchQuery(text="anne", highlight=True, limit=100))
    assert result.hits
    for hit in result.hits:
        assert set(hit.highlights) == {"author"}
        assert hit.highlights["author"] == ["<mark>Anne</mark> Rice"]


async def test_highlight_fields_choose_fields(books_engine: TantivyEngine) -> None:
    result = await books_engine.search(SearchQuery(
        text="kate smith", highlight=True, highlight_fields=("author", "genre"), limit=5))
    assert result.hits[0].highlights == {
        "author": ["<mark>Kate</mark> &lt;K&gt; <mark>Smith</mark>"]}
    keyword = await books_engine.search(SearchQuery(
        text="fiction", highlight=True, highlight_fields=("genre",), limit=100,
        filters=(TermFilter(field="genre", values=("fiction",)),)))
    assert {tuple(h.highlights["genre"]) for h in keyword.hits} == {("<mark>fiction</mark>",)}


async def test_highlight_of_a_number_field_is_invalid(books_engine: TantivyEngine) -> None:
    with pytest.raises(InvalidRequest, match='"year"'):
        await books_engine.search(SearchQuery(text="x", highlight=True,
                                              highlight_fields=("year",)))


async def test_no_highlights_unless_asked(books_engine: TantivyEngine) -> None:
    result = await books_engine.search(SearchQuery(text="castle", limit=100))
    assert all(hit.highlights == {} for hit in result.hits)
