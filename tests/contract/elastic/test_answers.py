"""Engine answers of every shape the adapter asks for, read back through the HTTP API.

Each canned answer is what the engine documents for the request the adapter sent (the
test checks that request's aggregation layout first, so the answer cannot drift from it);
the expectations are the public response rules of docs/http-api.md: metadata
first and winning, aliases both ways, facet values by count then value, booleans as
true/false, dates as ISO-8601, numbers as JSON writes them, histograms with their gaps
filled, geo clusters at the documents' centroid with a sample hit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from searchport.adapters.elastic import parse
from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import EngineDouble, EsApp, city_yaml

PARIS = {"name": "Paris", "continent": "Europe", "population": 2102650, "capital": True,
         "_score": 99, "objectID": "stored-id"}
LYON = {"name": "Lyon", "continent": "Europe", "population": 522250, "capital": False}


def aggregation_layout(body: dict[str, Any]) -> dict[str, Any]:
    """The aggregation tree of a request reduced to its kinds: {name: (kind, children)}."""
    layout = {}
    for name, agg in body.get("aggs", {}).items():
        kind = next(k for k in agg if k != "aggs")
        layout[name] = (kind, aggregation_layout(agg))
    return layout


def search(app: EsApp, double: EngineDouble, answer: dict[str, Any], **params: Any
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    double.search((200, answer))
    response = app.get("/cities/search", params={
        k: json.dumps(v) if isinstance(v, dict) else str(v) for k, v in params.items()
    })
    assert response.status_code == 200, response.text
    return app.last_search().body, response.json()


def test_hits_facets_highlights_and_suggestions(cities: EsApp, double: EngineDouble) -> None:
    answer = es.search(
        [
            es.hit("1", PARIS, score=3.5, highlight={
                "name": ["<mark>Par</mark>is"], "continent": ["<mark>Europe</mark>"],
            }),
            es.hit("2", LYON, score=1.25),
        ],
        total=1234,
        aggregations={
            "facet_0": es.terms([es.bucket("Europe", 40), es.bucket("Asia", 52),
                                 es.bucket("Africa", 40)]),
            "facet_1": es.terms([es.bucket(0, 90, key_as_string="false"),
                                 es.bucket(1, 42, key_as_string="true")]),
            "facet_2": es.terms([es.bucket(1704067200000, 2,
                                           key_as_string="2024-01-01T00:00:00.000Z")]),
            "facet_3": es.terms([es.bucket(3, 7), es.bucket(2102650, 1)]),
            "facet_4": es.terms([es.bucket(3.0, 5), es.bucket(2.5, 5)]),
            "facet_5": es.single(300, inner=es.terms([
                es.bucket("unesco", 120, docs=es.single(31)),
                es.bucket("port", 14, docs=es.single(14)),
            ])),
        },
        suggest={"phrase_suggestion": [
            *es.phrase_suggest("pari", [("paris", 0.51), ("parish", 0.12)])["phrase_suggestion"],
            *es.phrase_suggest("pari", [("paris", 0.40), ("pavia", 0.02)])["phrase_suggestion"],
        ]},
    )
    body, result = search(cities, double, answer, q="pari", highlight="true", suggest="true",
                          facets="region,capital,founded,people,area,tags.label")
    assert aggregation_layout(body) == {
        "facet_0": ("terms", {}), "facet_1": ("terms", {}), "facet_2": ("terms", {}),
        "facet_3": ("terms", {}), "facet_4": ("terms", {}),
        "facet_5": ("nested", {"inner": ("terms", {"docs": ("reverse_nested", {})})}),
    }
    assert result == {
        "hits": [
            {"objectID": "1", "_index": "cities", "_score": 3.5,
             "_highlights": {"name": ["<mark>Par</mark>is"], "region": ["<mark>Europe</mark>"]},
             "name": "Paris", "region": "Europe", "people": 2102650, "capital": True},
            {"objectID": "2", "_index": "cities", "_score": 1.25, "_highlights": {},
             "name": "Lyon", "region": "Europe", "people": 522250, "capital": False},
        ],
        "totalHits": 1234,
        "page": 1,
        "perPage": 20,
        "totalPages": 62,
        "facets": {
            "region": [{"value": "Asia", "count": 52}, {"value": "Africa", "count": 40},
                       {"value": "Europe", "count": 40}],
            "capital": [{"value": "false", "count": 90}, {"value": "true", "count": 42}],
            "founded": [{"value": "2024-01-01T00:00:00Z", "count": 2}],
            "people": [{"value": "3", "count": 7}, {"value": "2102650", "count": 1}],
            "area": [{"value": "2.5", "count": 5}, {"value": "3", "count": 5}],
            "tags.label": [{"value": "unesco", "count": 31}, {"value": "port", "count": 14}],
        },
        "suggestions": ["paris", "parish", "pavia"],
    }


def test_filter_wrapped_and_filter_nested_buckets(cities: EsApp, double: EngineDouble) -> None:
    answer = es.search([es.hit("1", LYON)], total=1, aggregations={
        "facet_0": es.single(6, inner=es.terms([es.bucket("Europe", 4), es.bucket("Asia", 2)])),
        "facet_1": es.single(4, inner=es.single(11, inner=es.terms([
            es.bucket("unesco", 9, docs=es.single(3)), es.bucket("harbour", 2, docs=es.single(2)),
        ]))),
        "facet_2": es.single(3, inner=es.terms([
            es.bucket(1, 2, key_as_string="true"), es.bucket(0, 1, key_as_string="false"),
        ])),
    })
    body, result = search(cities, double, answer, facets="region,tags.label,capital",
                          filters={"region": "Europe", "tags.label": "unesco"})
    assert aggregation_layout(body) == {
        "facet_0": ("filter", {"inner": ("terms", {})}),
        "facet_1": ("filter", {"inner": ("nested", {"inner": (
            "terms", {"docs": ("reverse_nested", {})})})}),
        "facet_2": ("filter", {"inner": ("terms", {})}),
    }
    assert result["facets"] == {
        "region": [{"value": "Europe", "count": 4}, {"value": "Asia", "count": 2}],
        "tags.label": [{"value": "unesco", "count": 3}, {"value": "harbour", "count": 2}],
        "capital": [{"value": "true", "count": 2}, {"value": "false", "count": 1}],
    }
    assert result["totalHits"] == 1


def test_histograms_and_geo_clusters(cities: EsApp, double: EngineDouble) -> None:
    sample = es.hit("7", {"name": "Paris", "continent": "Europe",
                          "location": {"lat": 48.86, "lon": 2.35}}, score=1.0)
    answer = es.search([], total=9, aggregations={
        "facet_0": es.terms([es.bucket("Europe", 9)]),
        "histogram_0": es.single(9, inner=es.histogram([
            es.bucket(0.0, 3), es.bucket(2000000.0, 4), es.bucket(3000000.0, 2),
        ])),
        "geo_grid": es.single(9, inner=es.geotile([
            es.bucket("3/4/2", 8, centroid=es.centroid(48.6, 2.7, 8),
                      sample=es.top_hits([sample], 8)),
            es.bucket("3/3/3", 1, centroid=es.centroid(36.1, -5.3, 1),
                      sample=es.top_hits([], 1)),
        ])),
    })
    body, result = search(cities, double, answer, facets="region",
                          filters={"region": "Europe"}, histogram={"people": 1000000},
                          geoGrid={"field": "where", "precision": 3})
    assert aggregation_layout(body) == {
        "facet_0": ("terms", {}),
        "histogram_0": ("filter", {"inner": ("histogram", {})}),
        "geo_grid": ("filter", {"inner": ("geotile_grid", {
            "centroid": ("geo_centroid", {}), "sample": ("top_hits", {})})}),
    }
    assert result["histograms"] == {"people": [
        {"key": 0, "count": 3}, {"key": 1000000, "count": 0},
        {"key": 2000000, "count": 4}, {"key": 3000000, "count": 2},
    ]}
    assert result["geoClusters"] == [
        {"lat": 48.6, "lng": 2.7, "count": 8, "key": "3/4/2",
         "hit": {"objectID": "7", "_index": "cities", "_score": 1.0, "_highlights": {},
                 "name": "Paris", "region": "Europe", "where": {"lat": 48.86, "lon": 2.35}}},
        {"lat": 36.1, "lng": -5.3, "count": 1, "key": "3/3/3", "hit": None},
    ]


def test_histograms_and_geo_clusters_on_nested_fields_count_documents(
    cities: EsApp, double: EngineDouble
) -> None:
    sample = es.hit("7", {"name": "Paris", "continent": "Europe"}, score=1.0)
    answer = es.search([], total=5, aggregations={
        "histogram_0": es.single(12, inner=es.histogram([
            es.bucket(0.0, 9, docs=es.single(4)), es.bucket(100.0, 3, docs=es.single(2)),
        ])),
        "geo_grid": es.single(12, inner=es.geotile([
            es.bucket("6/32/22", 7, centroid=es.centroid(48.85, 2.33, 7),
                      docs=es.single(3, sample=es.top_hits([sample], 3))),
            es.bucket("6/33/21", 2, centroid=es.centroid(50.1, 8.6, 2),
                      docs=es.single(1, sample=es.top_hits([], 1))),
        ])),
    })
    body, result = search(cities, double, answer, histogram={"landmarks.height": 50},
                          geoGrid={"field": "landmarks.location", "precision": 6})
    assert aggregation_layout(body) == {
        "histogram_0": ("nested", {"inner": ("histogram", {"docs": ("reverse_nested", {})})}),
        "geo_grid": ("nested", {"inner": ("geotile_grid", {
            "centroid": ("geo_centroid", {}),
            "docs": ("reverse_nested", {"sample": ("top_hits", {})})})}),
    }
    assert result["histograms"] == {"landmarks.height": [
        {"key": 0, "count": 4}, {"key": 50, "count": 0}, {"key": 100, "count": 2},
    ]}
    assert result["geoClusters"] == [
        {"lat": 48.85, "lng": 2.33, "count": 3, "key": "6/32/22",
         "hit": {"objectID": "7", "_index": "cities", "_score": 1.0, "_highlights": {},
                 "name": "Paris", "region": "Europe"}},
        {"lat": 50.1, "lng": 8.6, "count": 1, "key": "6/33/21", "hit": None},
    ]


def test_empty_histogram_and_grid(cities: EsApp, double: EngineDouble) -> None:
    answer = es.search([], total=0, aggregations={
        "histogram_0": es.histogram([]), "geo_grid": es.geotile([]),
    })
    _, result = search(cities, double, answer, histogram={"area": 10},
                       geoGrid={"field": "location", "precision": 2})
    assert (result["histograms"], result["geoClusters"]) == ({"area": []}, [])
    assert (result["totalHits"], result["totalPages"]) == (0, 0)


def test_sorted_hits_have_no_score_and_old_servers_a_plain_total(
    cities: EsApp, double: EngineDouble
) -> None:
    answer = es.search([
        es.hit("2", LYON, score=None, sort=["lyon"]),
        es.hit("1", PARIS, score=None, sort=["paris"]),
    ], total=("plain", 41))
    _, result = search(cities, double, answer, sort={"name": "asc"}, perPage=2)
    assert [(h["objectID"], h["_score"]) for h in result["hits"]] == [("2", None), ("1", None)]
    assert (result["totalHits"], result["perPage"], result["totalPages"]) == (41, 2, 21)


def test_a_total_beyond_the_tracking_limit_is_reported_as_given(
    cities: EsApp, double: EngineDouble
) -> None:
    _, result = search(cities, double, es.search([], total=10_000, relation="gte"))
    assert result["totalHits"] == 10_000


def test_only_the_chosen_fields_come_back(cities: EsApp, double: EngineDouble) -> None:
    answer = es.search([es.hit("1", {"name": "Paris", "continent": "Europe"})])
    body, result = search(cities, double, answer, fields="region,name")
    assert body["_source"] == ["continent", "name"]
    assert result["hits"] == [{"objectID": "1", "_index": "cities", "_score": 1.0,
                               "_highlights": {}, "name": "Paris", "region": "Europe"}]


def test_a_document(cities: EsApp, double: EngineDouble, engine: str) -> None:
    double.on("GET", "/cities/_doc/1", (200, es.doc_found("1", PARIS, engine=engine)))
    response = cities.get("/cities/documents/1")
    assert response.status_code == 200
    assert response.json() == {"objectID": "1", "_index": "cities", "name": "Paris",
                               "region": "Europe", "people": 2102650, "capital": True}


def test_a_missing_document(cities: EsApp, double: EngineDouble, engine: str) -> None:
    double.on("GET", "/cities/_doc/nope", (404, es.doc_not_found("nope", engine=engine)))
    response = cities.get("/cities/documents/nope")
    assert response.status_code == 404
    assert response.json() == {"error": "Document not found"}


def test_a_missing_document_of_several_indices(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble(engine, index="cities-*")
    double.on("POST", "/cities-*/_search", (200, es.search([], total=0)))
    app = es_app(city_yaml(engine, index_name="cities-*"), double)
    response = app.get("/cities/documents/7")
    assert response.status_code == 404
    assert response.json() == {"error": "Document not found"}
    assert app.last_search().body == {"size": 1, "query": {"ids": {"values": ["7"]}}}


@pytest.mark.parametrize(("key_as_string", "value"), [
    ("2024-01-01T00:00:00.000Z", "2024-01-01T00:00:00Z"),  # the default date format
    ("2002-07-18T12:54:00.000+00:00", "2002-07-18T12:54:00Z"),
    ("2002-07-18T12:54:00.000+02:00", "2002-07-18T12:54:00+02:00"),
    ("2002-07-18T12:54:00.250Z", "2002-07-18T12:54:00.250Z"),  # real milliseconds stay
    ("2024-01-01", "2024-01-01"),  # a custom format: as written
    ("true", "true"),
])
def test_date_facet_values_read_as_every_engine_writes_them(
    key_as_string: str, value: str
) -> None:
    assert parse.bucket_value({"key": 0, "key_as_string": key_as_string}) == value


@pytest.mark.parametrize(("q", "marked", "shown"), [
    # the word being typed: its letters, as Typesense, Meilisearch and tantivy mark them
    ("par", "<mark>Parma</mark> &amp; <mark>Paris</mark>",
     "<mark>Par</mark>ma &amp; <mark>Par</mark>is"),
    ("paris", "<mark>Paris</mark>ienne", "<mark>Paris</mark>ienne"),
    # a whole query word keeps its mark; a completed word (trailing space) too
    ("parma par", "<mark>Parma</mark> <mark>Paris</mark>",
     "<mark>Parma</mark> <mark>Par</mark>is"),
    ("par ", "<mark>Parma</mark>", "<mark>Parma</mark>"),
    # the typed letters in any case; a fragment without them is left as it is
    ("PAR", "<mark>Parma</mark>", "<mark>Par</mark>ma"),
    ("parm", "<mark>Paris</mark> &amp; <mark>Lyon</mark>",
     "<mark>Paris</mark> &amp; <mark>Lyon</mark>"),
])
def test_prefix_marks_cover_the_letters_typed(cities: EsApp, double: EngineDouble, q: str,
                                              marked: str, shown: str) -> None:
    answer = es.search([es.hit("1", PARIS, highlight={"name": [marked]})], total=1)
    _, result = search(cities, double, answer, q=q, highlight="true")
    assert result["hits"][0]["_highlights"]["name"] == [shown]
