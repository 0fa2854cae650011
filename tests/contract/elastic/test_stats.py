"""Numeric stats (Algolia's ``facets_stats``) from a ``stats`` aggregation.

Requests are checked against the adapter's aggregation layout (``stats_N`` positional
names, ``filter``/``nested`` wrappers named ``inner``, see ``translate.py``); the canned
answers are shaped as the Elasticsearch reference documents the ``stats`` aggregation
(``count``, ``min``, ``max``, ``avg``, ``sum``; ``null`` min/max/avg when nothing was
counted), their numbers computed here from a few rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from searchport.adapters.elastic import translate
from searchport.adapters.elastic.fields import FieldCatalog
from searchport.domain.query import RangeFilter, SearchQuery, TermFilter
from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import EngineDouble, EsApp, city_yaml
from tests.contract.scripted import OffSpec

TYPED_FIELDS = """\
    fields:
      name: {type: text, weight: 2}
      region: {field: continent, type: keyword}
      people: {field: population, type: integer}
      height: {field: landmarks.height, type: float, nestedPath: landmarks}
      rank: {type: integer}
"""
POPULATIONS = [2102650, 522250, 86000, 1_000_000, 3]
HEIGHTS = [330.0, 61.5, 12.25]  # every landmark of the matching cities


def es_stats(values: list[float]) -> dict[str, Any]:
    """The ``stats`` aggregation's answer over ``values``, as the reference shows it."""
    if not values:
        return {"count": 0, "min": None, "max": None, "avg": None, "sum": 0.0}
    return {"count": len(values), "min": float(min(values)), "max": float(max(values)),
            "avg": sum(values) / len(values), "sum": float(sum(values))}


@pytest.fixture
def typed(engine: str, es_app: Callable[..., EsApp]) -> tuple[EsApp, EngineDouble]:
    double = EngineDouble(engine)
    return es_app(city_yaml(engine, fields=TYPED_FIELDS), double), double


def algolia(app: EsApp, double: EngineDouble, answer: dict[str, Any], **params: Any
            ) -> tuple[dict[str, Any], dict[str, Any]]:
    double.search((200, answer))
    response = app.post("/1/indexes/cities/query", json=params)
    assert response.status_code == 200, response.text
    sent = app.last_search().body
    assert isinstance(sent, dict)
    return sent, response.json()


def test_numeric_facets_get_a_stats_aggregation_nested_aware(
        typed: tuple[EsApp, EngineDouble]) -> None:
    app, double = typed
    sent, _ = algolia(app, double, es.empty_search(), facets=["people", "region", "height"],
                      numericFilters=["people>=10"], hitsPerPage=0)
    aggs = sent["aggs"]
    # Algolia's semantics: every filter in the query, so the stats follow it unwrapped
    assert sent["query"]["bool"]["filter"] == [{"range": {"population": {"gte": 10}}}]
    assert aggs["stats_0"] == {"stats": {"field": "population"}}
    assert aggs["stats_1"] == {"nested": {"path": "landmarks"},
                               "aggs": {"inner": {"stats": {"field": "landmarks.height"}}}}
    assert "stats_2" not in aggs  # a keyword facet has no stats


def test_facets_stats_come_from_the_stats_aggregation(
        typed: tuple[EsApp, EngineDouble]) -> None:
    app, double = typed
    buckets = [es.bucket(v, 1) for v in range(100)]  # 100 values: not necessarily all
    answer = es.search([], total=len(POPULATIONS), aggregations={
        "facet_0": es.terms(buckets, other=7),
        "facet_1": es.single(len(POPULATIONS), inner=es.terms([es.bucket(330.0, 1)])),
        "stats_0": es_stats([float(p) for p in POPULATIONS]),
        "stats_1": es.single(len(HEIGHTS), inner=es_stats(HEIGHTS)),
    })
    _, body = algolia(app, double, answer, facets=["people", "height"], hitsPerPage=0)
    assert body["facets_stats"] == {
        "people": {"min": min(POPULATIONS), "max": max(POPULATIONS),
                   "avg": sum(POPULATIONS) / len(POPULATIONS), "sum": sum(POPULATIONS)},
        "height": {"min": min(HEIGHTS), "max": max(HEIGHTS),
                   "avg": sum(HEIGHTS) / len(HEIGHTS), "sum": sum(HEIGHTS)},
    }


def test_no_counted_value_means_no_facets_stats(typed: tuple[EsApp, EngineDouble]) -> None:
    app, double = typed
    answer = es.search([], total=0, aggregations={"facet_0": es.terms([]),
                                                  "stats_0": es_stats([])})
    _, body = algolia(app, double, answer, facets=["people"], hitsPerPage=0)
    assert "facets_stats" not in body


def test_an_unreadable_stats_answer_is_a_502(typed: tuple[EsApp, EngineDouble]) -> None:
    app, double = typed
    double.search(OffSpec((200, es.search([], total=1, aggregations={  # broken on purpose
        "facet_0": es.terms([es.bucket(3, 1)]),
        "stats_0": {"count": 1, "min": "three", "max": 3.0, "avg": 3.0, "sum": 3.0}}))))
    response = app.post("/1/indexes/cities/query", json={"facets": ["people"]})
    assert response.status_code == 502


def test_disjunctive_stats_leave_out_their_own_filters() -> None:
    """Not used by the Algolia routes, but defined: stats follow the filters as a facet on
    the same field would, so a stats field's own filters go to ``post_filter`` only."""
    own = RangeFilter(field="population", min=10)
    other = TermFilter(field="continent", values=("Europe",))
    query = SearchQuery(filters=(own, other), facets=("continent",),
                        stats=("population", "rank"))
    body = translate.search_body(query, FieldCatalog())
    own_clause = {"range": {"population": {"gte": 10}}}
    other_clause = {"term": {"continent": "Europe"}}
    assert body["post_filter"] == {"bool": {"filter": [own_clause, other_clause]}}
    assert body["aggs"]["stats_0"] == {"filter": {"bool": {"filter": [other_clause]}},
                                       "aggs": {"inner": {"stats": {"field": "population"}}}}
    assert body["aggs"]["stats_1"] == {
        "filter": {"bool": {"filter": [own_clause, other_clause]}},
        "aggs": {"inner": {"stats": {"field": "rank"}}}}
