"""Keyword facets counted through the sort column's ranks: which fields qualify, and counts
equal to plain counting over the rows a text matches, narrow (the page sees every match)
and wide."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest

from searchport.adapters.tantivy import TantivyEngine
from searchport.adapters.tantivy.ranked_facets import RankedValues
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.domain.query import SearchQuery
from searchport.domain.results import FacetValue
from tests.integration.conftest import open_books_index

pytestmark = pytest.mark.anyio
Row = dict[str, Any]
FACETS = ("genre", "tags", "language")


@pytest.fixture(scope="module")
def books_index(tmp_path_factory: pytest.TempPathFactory) -> OpenIndex:
    return open_books_index(tmp_path_factory.mktemp("ranked-facets"))


def values_of(row: Row, field: str) -> set[str]:
    value = row.get(field)
    return {str(v) for v in (value if isinstance(value, list) else [value]) if v is not None}


def test_single_valued_keyword_fields_are_counted_by_rank(
        books_index: OpenIndex, rows: list[Row]) -> None:
    ranked = RankedValues(books_index.searcher)
    for field in FACETS:
        spec = books_index.layout.fields[field]
        several = any(len(values_of(row, field)) > 1 for row in rows)
        found = ranked.values(spec)
        if several:  # a document with two values: its rank names only one of them
            assert found is None, field
        else:
            assert found is not None, field
            # each rank names a value, in the values' sorted order
            assert [found[rank] for rank in sorted(found)] == sorted(
                {v for row in rows for v in values_of(row, field)})
    assert ranked.values(books_index.layout.fields["year"]) is None  # not a keyword
    assert any(ranked.values(books_index.layout.fields[f]) is not None for f in FACETS)
    assert any(ranked.values(books_index.layout.fields[f]) is None for f in FACETS)


def expected(rows: list[Row], field: str, limit: int) -> list[FacetValue]:
    counts = Counter(v for row in rows for v in values_of(row, field))
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [FacetValue(value=v, count=c) for v, c in ordered[:limit]]


@pytest.mark.parametrize("facets", [FACETS, ("genre", "language"), ("tags",)])
async def test_facets_of_narrow_and_wide_texts(
        books_engine: TantivyEngine, rows: list[Row], ref: SimpleNamespace,
        facets: tuple[str, ...]) -> None:
    words = sorted({w for row in rows for field in ref.text_fields
                    for value in ref.listed(row.get(field)) for w in ref.words(str(value))})
    texts = [*words[::7], *sorted({w[:2] for w in words}), *sorted({w[:1] for w in words}),
             *(" ".join(words[i::4][:40]) for i in range(4))]  # any word: wide
    sizes = set()
    for text in texts:
        matched = [row for row in rows if ref.text_matches(row, text)]
        result = await books_engine.search(SearchQuery(text=text, facets=facets, limit=3,
                                                       max_facet_values=5))
        assert result.total == len(matched), text
        for field in facets:
            assert result.facets[field] == expected(matched, field, 5), (text, field)
        sizes.add(len(matched) <= 3 * 2 + 32)  # the page search sees every match
    assert sizes == {True, False}
