"""Numeric stats from Meilisearch's ``facetStats`` (min and max only, of the numeric fields
in ``facets``), and the ``facets_stats`` of the Algolia routes built from them. The canned
answers are shaped as the search reference documents ``facetStats``; expected values are
computed here from a few rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from searchport.adapters.meilisearch import translate
from searchport.adapters.meilisearch.parse import UnreadableAnswer, search_result
from searchport.domain.query import RangeFilter, SearchQuery, TermFilter
from searchport.domain.results import FieldStats
from tests.contract.meilisearch import meili_answers as ma
from tests.contract.meilisearch.conftest import (
    MULTI,
    SEARCH,
    MeiliApp,
    MeiliDouble,
    books_yaml,
)

TYPED_FIELDS = """\
    fields:
      title: {weight: 2}
      kind: {field: genre, type: keyword}
      when: {field: year, type: integer}
      pages: {type: integer}
"""
FEW_YEARS = [1925, 2004, 1971, 2004, 1850]  # the matching books' years: every value shown
MANY_YEARS = list(range(1800, 1950))  # 150 distinct years: more than the 100 values shown


@pytest.fixture
def typed(double: MeiliDouble, meili_app: Callable[..., MeiliApp]) -> MeiliApp:
    return meili_app(books_yaml(fields=TYPED_FIELDS), double)


def distribution(values: list[int]) -> dict[str, int]:
    return {str(v): c for v, c in Counter(values).items()}


def test_stats_fields_are_requested_as_facets(typed: MeiliApp, double: MeiliDouble) -> None:
    double.search((200, ma.search()))
    response = typed.post("/1/indexes/books/query",
                          json={"facets": ["kind", "when"], "numericFilters": ["pages>=10"]})
    assert response.status_code == 200, response.text
    sent = typed.last()
    assert (sent.method, sent.path) == ("POST", SEARCH)
    assert isinstance(sent.body, dict)
    assert sent.body["facets"] == ["genre", "year"]
    assert sent.body["filter"] == ["pages >= 10"]


def test_min_and_max_only_when_not_every_value_is_shown(typed: MeiliApp,
                                                        double: MeiliDouble) -> None:
    shown = dict(list(distribution(MANY_YEARS).items())[:100])  # maxValuesPerFacet: 100
    double.search((200, ma.search([], total=len(MANY_YEARS), facets={"year": shown},
                                  stats={"year": {"min": min(MANY_YEARS),
                                                  "max": max(MANY_YEARS)}})))
    response = typed.post("/1/indexes/books/query", json={"facets": ["when"]})
    assert response.status_code == 200, response.text
    # avg and sum cannot be known from min, max and 100 of 150 values: left out
    assert response.json()["facets_stats"] == {"when": {"min": min(MANY_YEARS),
                                                        "max": max(MANY_YEARS)}}


def test_every_value_shown_gives_all_four(typed: MeiliApp, double: MeiliDouble) -> None:
    double.search((200, ma.search([], total=len(FEW_YEARS),
                                  facets={"year": distribution(FEW_YEARS)},
                                  stats={"year": {"min": min(FEW_YEARS),
                                                  "max": max(FEW_YEARS)}})))
    response = typed.post("/1/indexes/books/query", json={"facets": ["when"]})
    assert response.json()["facets_stats"] == {"when": {
        "min": min(FEW_YEARS), "max": max(FEW_YEARS),
        "avg": sum(FEW_YEARS) / len(FEW_YEARS), "sum": sum(FEW_YEARS)}}


def test_a_distribution_cut_below_100_values_is_not_taken_for_every_value(
        typed: MeiliApp, double: MeiliDouble) -> None:
    """An index with ``maxValuesPerFacet`` 3: the values shown miss the extremes, which
    ``facetStats`` still has; the value counts must not pass for complete stats."""
    cut = dict(list(distribution(FEW_YEARS).items())[:3])
    double.search((200, ma.search([], total=len(FEW_YEARS), facets={"year": cut},
                                  stats={"year": {"min": min(FEW_YEARS),
                                                  "max": max(FEW_YEARS)}})))
    response = typed.post("/1/indexes/books/query", json={"facets": ["when"]})
    assert response.json()["facets_stats"] == {"when": {"min": min(FEW_YEARS),
                                                        "max": max(FEW_YEARS)}}


def test_no_numeric_value_no_stats(typed: MeiliApp, double: MeiliDouble) -> None:
    double.search((200, ma.search([], total=0, facets={}, stats={})))
    response = typed.post("/1/indexes/books/query", json={"facets": ["when"]})
    assert "facets_stats" not in response.json()


def test_disjunctive_stats_come_from_the_fields_own_count_query() -> None:
    """Not used by the Algolia routes, but defined: a stats field with a filter of its own
    is counted like a facet, in a query without that filter."""
    query = SearchQuery(filters=(RangeFilter(field="year", min=1900),
                                 TermFilter(field="genre", values=("fiction",))),
                        stats=("year", "pages"))
    plan = translate.search_plan(query, ma.INDEX, "id")
    assert plan.path == MULTI and plan.own_facets == ("year",)
    main, counts = plan.body["queries"]
    assert main["facets"] == ["pages"]
    assert counts["facets"] == ["year"] and counts["filter"] == ['genre = "fiction"']
    answer = ma.multi(
        ma.search([], total=2, facets={}, stats={"pages": {"min": 157, "max": 880}}),
        ma.search([], total=9, hits_per_page=0, facets={},
                  stats={"year": {"min": 1764, "max": 2021}}),
    )
    result = search_result(answer, plan, query, uid=ma.INDEX, primary_key="id")
    assert result.stats == {"pages": FieldStats(min=157, max=880),
                            "year": FieldStats(min=1764, max=2021)}


def test_an_unreadable_facet_stat_is_refused() -> None:
    query = SearchQuery(stats=("year",))
    plan = translate.search_plan(query, ma.INDEX, "id")
    answer = ma.search([], total=1, facets={}, stats={"year": {"min": "old", "max": 2}})
    with pytest.raises(UnreadableAnswer):
        search_result(answer, plan, query, uid=ma.INDEX, primary_key="id")
