"""Typeahead relevance on a real tantivy index: prefix and typo matching against a plain
Python evaluator (conftest's ``text_matches``: edit distance over the whole table), the
order of equally relevant hits by ``customRanking``, and what highlights mark."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.config import IndexConfig
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import FieldWeight, SearchQuery
from tests.integration.conftest import BOOK_FIELDS, BOOKS, load_rows, words

Row = dict[str, Any]
ROWS = load_rows()
TITLE_WORDS = sorted({w for row in ROWS for w in words(row["title"])})
SEARCHED_WORDS = sorted({w for row in ROWS for f in ("title", "author")
                         for w in words(str(row.get(f) or ""))})
RANKING = [{"field": "year", "order": "desc"}, {"field": "price", "order": "asc"}]
TITLE_ONLY = (FieldWeight(field="title", weight=1.0),)


def engine_for(base: Path, source: Path = BOOKS, fields: dict[str, Any] | None = None,
               **settings: Any) -> TantivyEngine:
    config = msgspec.convert(
        {"engine": "tantivy", "path": str(base / "index"), "source": str(source),
         "fields": fields or BOOK_FIELDS, **settings}, IndexConfig)
    engine = TantivyEngine("books", config, base)
    asyncio.run(engine.start())
    return engine


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as run:
        yield run


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory) -> TantivyEngine:
    return engine_for(tmp_path_factory.mktemp("ranked"), customRanking=RANKING)


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> TantivyEngine:
    return engine_for(tmp_path_factory.mktemp("strict"), prefixSearch=False,
                      typoTolerance={"enabled": False})


def hit_ids(runner: asyncio.Runner, engine: TantivyEngine, **query: Any) -> list[str]:
    result = runner.run(engine.search(SearchQuery(limit=100, **query)))
    assert result.total == len(result.hits)
    return [hit.id for hit in result.hits]


def ranking_key(row: Row) -> tuple[Any, ...]:
    """customRanking year desc, price asc: a missing value last; ties in source order."""
    year, price = row.get("year"), row.get("price")
    return ((1, 0) if year is None else (0, -year), (1, 0.0) if price is None else (0, price),
            ROWS.index(row))


def mutate(word: str, kind: str, at: int, letter: str) -> str:
    """One typo of ``kind`` at position ``at`` (wrapped to the word)."""
    i = at % max(1, len(word))
    if kind == "swap" and len(word) > 1:
        i = min(i, len(word) - 2)
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == "replace":
        return word[:i] + letter + word[i + 1:]
    if kind == "delete" and len(word) > 1:
        return word[:i] + word[i + 1:]
    if kind == "insert":
        return word[:i] + letter + word[i:]
    return word


typo_texts = st.builds(
    lambda first, word, kind, at, letter, cut, space: (
        (f"{first} " if first else "") + mutate(word, kind, at, letter)[: cut or None]
        + (" " if space else "")),
    st.sampled_from(["", "", "the", "night", "river"]),
    st.sampled_from(SEARCHED_WORDS),
    st.sampled_from(["swap", "replace", "delete", "insert", "none"]),
    st.integers(0, 12), st.sampled_from("aeiorstxz"), st.integers(0, 8), st.booleans(),
)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=typo_texts)
def test_prefix_and_typo_matches_follow_the_edit_distance(
        books_engine: TantivyEngine, runner: asyncio.Runner, ref: SimpleNamespace,
        text: str) -> None:
    """Each query word matches a word within its typos (1 from 5 letters, 2 from 9, a
    swap of neighbours counting as one), the word being typed also any word whose start is
    within them; the evaluator computes it over every row."""
    want = {ref.doc_id(r) for r in ROWS if ref.text_matches(r, text)}
    assert set(hit_ids(runner, books_engine, text=text)) == want


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=typo_texts)
def test_prefix_search_and_typos_can_be_turned_off(
        strict: TantivyEngine, runner: asyncio.Runner, ref: SimpleNamespace,
        text: str) -> None:
    want = {ref.doc_id(r) for r in ROWS
            if ref.text_matches(r, text, prefix=False, typos=False)}
    assert set(hit_ids(runner, strict, text=text)) == want


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=st.sampled_from(TITLE_WORDS), length=st.integers(1, 4))
def test_equally_relevant_hits_follow_the_custom_ranking(
        ranked: TantivyEngine, runner: asyncio.Runner, ref: SimpleNamespace, word: str,
        length: int) -> None:
    """A prefix of at most 4 letters allows no typo, so every title it matches is as
    relevant as the next (one word, whole or started, one field): customRanking alone
    orders them, a whole word no better than a started one."""
    prefix = word[:length]
    matching = [r for r in ROWS if any(w.startswith(prefix) for w in words(r["title"]))]
    want = [ref.doc_id(r) for r in sorted(matching, key=ranking_key)]
    assert hit_ids(runner, ranked, text=prefix, search_fields=TITLE_ONLY) == want


def test_exact_words_come_before_typos_then_the_ranking(
        ranked: TantivyEngine, runner: asyncio.Runner, ref: SimpleNamespace) -> None:
    """"castle " (a whole word): titles with the word castle first, then those one typo away
    (castles), each group in ranking order."""
    exact = [r for r in ROWS if "castle" in words(r["title"])]
    typo = [r for r in ROWS if r not in exact
            and any(ref.edit_distance(w, "castle") == 1 for w in words(r["title"]))]
    assert exact and typo
    want = [ref.doc_id(r) for group in (exact, typo) for r in sorted(group, key=ranking_key)]
    assert hit_ids(runner, ranked, text="castle ", search_fields=TITLE_ONLY) == want


def test_more_matched_words_then_adjacent_words_come_first(
        ranked: TantivyEngine, runner: asyncio.Runner) -> None:
    """"of the " on titles: the titles with both words side by side in that order first
    ("Gardens of the Moon"), then those with both apart ("The Castle of Otranto"), each
    in ranking order, then those with one of them."""
    def pairs(row: Row) -> set[tuple[str, str]]:
        found = words(row["title"])
        return set(itertools.pairwise(found))

    both = [r for r in ROWS if {"of", "the"} <= set(words(r["title"]))]
    adjacent = [r for r in both if ("of", "the") in pairs(r)]
    apart = [r for r in both if r not in adjacent]
    one = [r for r in ROWS if r not in both and {"of", "the"} & set(words(r["title"]))]
    assert adjacent and apart and one
    found = hit_ids(runner, ranked, text="of the ", search_fields=TITLE_ONLY)
    want = [str(r["id"]) for group in (adjacent, apart) for r in sorted(group, key=ranking_key)]
    assert found[: len(want)] == want
    assert set(found[len(want):]) == {str(r["id"]) for r in one}


def test_pages_of_a_large_index_follow_the_ranking_exactly(
        tmp_path: Path, runner: asyncio.Runner) -> None:
    """3,000 rows sharing a word with random populations (many equal): every page is the
    matching slice of the rows sorted by population desc, ties in source order, past the
    first fetch of the best-scored hits."""
    rng = random.Random(7)
    rows = [{"id": f"r{i}", "name": f"alpha {'beta' if i % 3 else 'gamma'}",
             **({"population": rng.randrange(500)} if i % 11 else {})} for i in range(3000)]
    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    engine = engine_for(tmp_path, source, {"name": {"type": "text"},
                                           "population": {"type": "integer"}},
                        customRanking=[{"field": "population"}])
    order = sorted(range(len(rows)), key=lambda i: (
        (1, 0) if "population" not in rows[i] else (0, -rows[i]["population"]), i))
    for offset, limit in ((0, 20), (40, 20), (980, 30), (2990, 20)):
        result = runner.run(engine.search(SearchQuery(text="alp", offset=offset, limit=limit)))
        assert result.total == 3000
        assert [h.id for h in result.hits] == [rows[i]["id"] for i in order[offset:][:limit]]
    gammas = [i for i in order if i % 3 == 0]
    result = runner.run(engine.search(SearchQuery(text="alpha gam", offset=5, limit=10)))
    assert [h.id for h in result.hits] == [rows[i]["id"] for i in gammas[5:15]]


@pytest.mark.parametrize(("text", "title", "marked"), [
    ("otra", "The Castle of Otranto", "The Castle of <mark>Otra</mark>nto"),
    ("castel ", "The Castle of Otranto", "The <mark>Castle</mark> of Otranto"),
    ("otrnato", "The Castle of Otranto", "The Castle of <mark>Otranto</mark>"),
    ("tranqul", "Sea of Tranquility", "Sea of <mark>Tranquil</mark>ity"),
    ("zür", "A Night in Zürich", "A Night in <mark>Zür</mark>ich"),
])
def test_highlights_mark_what_matched(books_engine: TantivyEngine, runner: asyncio.Runner,
                                      text: str, title: str, marked: str) -> None:
    """A prefix match marks the letters typed (with a typo: the start it matched), an
    exact or typo match the whole word."""
    result = runner.run(books_engine.search(SearchQuery(text=text, highlight=True, limit=100)))
    by_title = {h.source["title"]: h.highlights.get("title") for h in result.hits}
    assert by_title[title] == [marked]


def expected_correction(ref: SimpleNamespace, typed: str, as_prefix: bool) -> str | None:
    """The title word a misspelled query word becomes: the closest (edit distance within
    one typo from 3 letters, two from 7), the best-ranked title's word among equals; None
    when the titles hold the word (or, typed, a word starting with it)."""
    by_rank = sorted(ROWS, key=ranking_key)
    title_words = [w for r in by_rank for w in words(r["title"])]
    if typed in title_words or (as_prefix and any(w.startswith(typed) for w in title_words)):
        return None
    allowed = 2 if len(typed) >= 7 else 1 if len(typed) >= 3 else 0

    def distance(word: str) -> int:
        if as_prefix:
            return min(ref.edit_distance(word[:end], typed) for end in range(len(word) + 1))
        return int(ref.edit_distance(word, typed))

    near = [(distance(w), i, w) for i, w in enumerate(title_words) if distance(w) <= allowed]
    return min(near)[2] if near else None


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=st.sampled_from(TITLE_WORDS), kind=st.sampled_from(["swap", "replace", "delete",
                                                                 "insert"]),
       at=st.integers(0, 12), letter=st.sampled_from("aeioqxz"), typing=st.booleans())
def test_did_you_mean_corrects_misspelled_words(
        ranked: TantivyEngine, runner: asyncio.Runner, ref: SimpleNamespace, word: str,
        kind: str, at: int, letter: str, typing: bool) -> None:
    """``suggest_field``: "night <typo>" comes back with the typo corrected when the titles
    do not hold it; no suggestion when every word is a title word."""
    typo = mutate(word, kind, at, letter)
    assume(words(typo) == [typo])  # one word still (a letter may be a word break)
    text = f"night {typo}" + ("" if typing else " ")
    result = runner.run(ranked.search(SearchQuery(text=text, suggest_field="title",
                                                  search_fields=TITLE_ONLY)))
    correction = expected_correction(ref, typo, typing)
    assert result.suggestions == ([] if correction is None else [f"night {correction}"])


def test_did_you_mean_needs_a_text_field(ranked: TantivyEngine, runner: asyncio.Runner) -> None:
    with pytest.raises(InvalidRequest) as caught:
        runner.run(ranked.search(SearchQuery(text="fiction", suggest_field="genre")))
    assert str(caught.value) == ('Cannot suggest from "genre": it is a keyword field; set '
                                 'defaults.suggestField to a text field')


def test_search_answers_suggestions_over_http(tmp_path: Path, ref: SimpleNamespace) -> None:
    """``suggest=true`` on ``/search`` of an embedded handle with ``suggestField``: the
    corrected query in ``suggestions``, the field the phrase suggester fills elsewhere."""
    from litestar.testing import TestClient

    from searchport.domain.config import Config
    from searchport.entrypoints.container import create_container
    from searchport.entrypoints.http.app import create_app

    config = msgspec.convert({"indexes": {"books": {
        "engine": "tantivy", "path": str(tmp_path / "index"), "source": str(BOOKS),
        "fields": BOOK_FIELDS, "customRanking": RANKING,
        "defaults": {"suggestField": "title"}}}}, Config)
    with TestClient(create_app(create_container(config, tmp_path))) as client:
        indexes = client.get("/indexes").json()
        assert [i["capabilities"]["suggest"] for i in indexes["indexes"]] == [True]
        for text, typing in (("the castel ", False), ("tokoy", True), ("river", True)):
            body = client.get("/books/search", params={"q": text, "suggest": "true"}).json()
            *known, last = words(text)
            correction = expected_correction(ref, last, typing)
            assert body["suggestions"] == (
                [] if correction is None else [" ".join([*known, correction])])
        assert client.get("/books/search", params={"q": "castel"}).json()["suggestions"] == []


def test_a_date_ranks_by_its_instant(tmp_path: Path, runner: asyncio.Runner,
                                     ref: SimpleNamespace) -> None:
    """``customRanking: [{field: published, order: asc}]``: every hit of a blank query is
    as relevant as the next, so the oldest instant comes first (offsets honoured, a date
    alone is its midnight UTC), documents without a date last in source order."""
    engine = engine_for(tmp_path, customRanking=[{"field": "published", "order": "asc"}])
    result = runner.run(engine.search(SearchQuery(text="", limit=100)))

    def key(row: Row) -> tuple[Any, ...]:
        published = row.get("published")
        when = ref.parse_date(published).timestamp() if published else None
        return ((1, 0.0) if when is None else (0, when), ROWS.index(row))

    assert [h.id for h in result.hits] == [ref.doc_id(r) for r in sorted(ROWS, key=key)]
