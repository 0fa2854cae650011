"""The exact requests the adapter sends for every option of every endpoint.

The expected bodies are written from the query DSL reference and searchport's docs: which
clause a filter becomes, where it goes (query, post_filter, aggregation wrappers), which
Lucene field it names. The aggregation names (``facet_0``, ``histogram_0``, ``geo_grid``,
``inner``, ``docs``) are the adapter's own convention, documented in ``translate.py``; the
parse tests check that the answers to them are read back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pytest

from searchport.adapters.elastic import translate
from searchport.adapters.elastic.fields import FieldCatalog
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import AnyOf, GeoSort, Negated, SearchQuery, SortClause, TermFilter
from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import AppPool, EngineDouble, EsApp, city_yaml

ORDER = [{"_count": "desc"}, {"_key": "asc"}]
FACET_SIZE = 100  # facets ask for 100 values on /search
HIGHLIGHT = {"pre_tags": ["<mark>"], "post_tags": ["</mark>"], "encoder": "html"}
MATCH_ALL: dict[str, Any] = {"match_all": {}}


def q(**params: Any) -> dict[str, str]:
    """Query parameters; dict and list values are sent as JSON text."""
    return {k: json.dumps(v) if isinstance(v, dict | list) else str(v) for k, v in params.items()}


def terms_agg(field: str, size: int = FACET_SIZE, **extra: Any) -> dict[str, Any]:
    return {"terms": {"field": field, "size": size, "order": ORDER, **extra}}


def nested_terms(path: str, field: str, size: int = FACET_SIZE, **extra: Any) -> dict[str, Any]:
    """A facet on a field inside nested objects: counted per root document, and its top
    values chosen by that count (terms aggregation, "ordering by a sub aggregation": a
    single-bucket sub-aggregation orders by its doc_count)."""
    inner = terms_agg(field, size, **extra)
    inner["terms"]["order"] = [{"docs": "desc"}, {"_key": "asc"}]
    inner["aggs"] = {"docs": {"reverse_nested": {}}}
    return {"nested": {"path": path}, "aggs": {"inner": inner}}


def filtered(clauses: list[dict[str, Any]], agg: dict[str, Any]) -> dict[str, Any]:
    return {"filter": {"bool": {"filter": clauses}}, "aggs": {"inner": agg}}


def search_ok(cities: EsApp, double: EngineDouble, **params: Any) -> dict[str, Any]:
    """Run one search answered with an empty result; the body the engine received."""
    double.search((200, es.empty_search()))
    response = cities.get("/cities/search", params=q(**params))
    assert response.status_code == 200, response.text
    sent = cities.last_search()
    assert (sent.method, sent.path, sent.query) == ("POST", "/cities/_search", "")
    assert sent.headers["content-type"] == "application/json"
    assert isinstance(sent.body, dict)
    return sent.body


# ---------------------------------------------------------------- text, paging, totals


def test_plain_text_is_a_bool_prefix_multi_match_over_the_weighted_fields(
    cities: EsApp, double: EngineDouble
) -> None:
    body = search_ok(cities, double, q="new yo", page=2, perPage=5)
    assert body == {
        "from": 5,
        "size": 5,
        "query": {"multi_match": {"query": "new yo", "type": "bool_prefix", "lenient": True,
                                  "fields": ["name^2", "description"]}},
        "track_total_hits": True,
    }


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_text_matches_everything(cities: EsApp, double: EngineDouble, text: str) -> None:
    body = search_ok(cities, double, q=text)
    assert body == {"from": 0, "size": 20, "query": MATCH_ALL, "track_total_hits": True}


def test_boosts_replace_the_configured_weights_and_take_aliases(
    cities: EsApp, double: EngineDouble
) -> None:
    body = search_ok(cities, double, q="lyon", boosts={"region": 3, "name": 1.5, "country": 1})
    assert body["query"] == {"multi_match": {
        "query": "lyon", "type": "bool_prefix", "lenient": True,
        "fields": ["continent^3", "name^1.5", "country"],
    }}


def test_without_weights_or_searchable_fields_every_field_is_searched(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble(engine)
    app = es_app(city_yaml(engine, fields=""), double)
    double.search((200, es.empty_search()))
    assert app.get("/cities/search", params={"q": "x"}).status_code == 200
    assert app.last_search().body["query"] == {
        "multi_match": {"query": "x", "type": "bool_prefix", "lenient": True}
    }


def test_page_and_per_page_become_from_and_size(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(cities, double, page=3, perPage=7)
    assert (body["from"], body["size"]) == (14, 7)


def test_exact_totals_off_leaves_track_total_hits_to_the_engine(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble(engine)
    app = es_app(city_yaml(engine, settings="exactTotals: false"), double)
    double.search((200, es.search([], total=10_000, relation="gte")))
    response = app.get("/cities/search")
    assert response.status_code == 200
    assert "track_total_hits" not in app.last_search().body
    assert response.json()["totalHits"] == 10_000


def test_fields_become_source_filtering(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(cities, double, fields="name,region")
    assert body["_source"] == ["name", "continent"]


# ---------------------------------------------------------------- filters


def test_every_filter_kind_in_the_query_filter(cities: EsApp, double: EngineDouble) -> None:
    filters = {
        "region": "Europe",  # keyword
        "country": ["France", "Spain"],  # text with a keyword sub-field
        "people": {"min": 100000},  # alias of population, open upper bound
        "area": {"max": 99.5},
        "founded": {"min": "1800-01-01", "max": "1900-12-31T23:59:59Z"},
        "capital": True,
        "name": {"not": ["Paris", "Lyon"]},
        "location": {"exists": True},
        "description": {"exists": False},
    }
    body = search_ok(cities, double, filters=filters)
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"term": {"continent": "Europe"}},
        {"terms": {"country.keyword": ["France", "Spain"]}},
        {"range": {"population": {"gte": 100000}}},
        {"range": {"area": {"lte": 99.5}}},
        {"range": {"founded": {"gte": "1800-01-01", "lte": "1900-12-31T23:59:59Z"}}},
        {"term": {"capital": True}},
        {"bool": {"must_not": [{"terms": {"name.keyword": ["Paris", "Lyon"]}}]}},
        {"exists": {"field": "location"}},
        {"bool": {"must_not": [{"exists": {"field": "description"}}]}},
    ]}}
    assert "post_filter" not in body and "aggs" not in body


def test_filters_with_text_keep_the_text_query(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(cities, double, q="port", filters={"people": 3})
    assert body["query"] == {"bool": {
        "must": [{"multi_match": {"query": "port", "type": "bool_prefix", "lenient": True,
                                  "fields": ["name^2", "description"]}}],
        "filter": [{"term": {"population": 3}}],
    }}


def test_filter_values_cannot_change_the_query_shape(cities: EsApp, double: EngineDouble) -> None:
    hostile = '"}}, {"match_all": {}}, {"term": {"x": "'
    body = search_ok(cities, double, filters={"region": hostile})
    assert body["query"]["bool"]["filter"] == [{"term": {"continent": hostile}}]


# ---------------------------------------------------------------- facets


def test_facets_without_filters_are_bare_terms_aggregations(
    cities: EsApp, double: EngineDouble
) -> None:
    body = search_ok(cities, double, facets="region,country,capital")
    assert body["query"] == MATCH_ALL
    assert body["aggs"] == {
        "facet_0": terms_agg("continent"),
        "facet_1": terms_agg("country.keyword"),
        "facet_2": terms_agg("capital"),
    }
    assert "post_filter" not in body


def test_configured_default_facets(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble(engine)
    fields = ("    fields:\n      region: {field: continent}\n"
              "    defaults:\n      facets: [region]\n")
    app = es_app(city_yaml(engine, fields=fields), double)
    double.search((200, es.empty_search()))
    assert app.get("/cities/search").status_code == 200
    assert app.last_search().body["aggs"] == {"facet_0": terms_agg("continent")}


def test_disjunctive_facets(cities: EsApp, double: EngineDouble) -> None:
    """Facet filters narrow the hits through post_filter; each facet is counted under the
    other facets' filters only; other filters narrow everything in the query."""
    body = search_ok(cities, double, facets="region,capital,country",
                     filters={"region": ["Europe", "Asia"], "capital": True,
                              "people": {"min": 1000000}})
    continent = {"terms": {"continent": ["Europe", "Asia"]}}
    capital = {"term": {"capital": True}}
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"range": {"population": {"gte": 1000000}}}
    ]}}
    assert body["post_filter"] == {"bool": {"filter": [continent, capital]}}
    assert body["aggs"] == {
        "facet_0": filtered([capital], terms_agg("continent")),
        "facet_1": filtered([continent], terms_agg("capital")),
        "facet_2": filtered([continent, capital], terms_agg("country.keyword")),
    }


def test_a_lone_facet_filter_leaves_its_own_facet_bare(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(cities, double, facets="region", filters={"region": "Europe"})
    assert body["query"] == MATCH_ALL
    assert body["post_filter"] == {"bool": {"filter": [{"term": {"continent": "Europe"}}]}}
    assert body["aggs"] == {"facet_0": terms_agg("continent")}


# ---------------------------------------------------------------- nested fields


def test_nested_fields_in_filters_facets_and_sort(cities: EsApp, double: EngineDouble) -> None:
    """``tags`` is nested in the mapping only; ``landmarks`` has ``nestedPath`` in the config."""
    body = search_ok(
        cities, double,
        facets="tags.label,landmarks.kind",
        filters={"tags.label": "unesco", "landmarks.title": "Eiffel Tower",
                 "landmarks.kind": {"not": "museum"}, "tags.weight": {"exists": False}},
        sort={"tags.weight": "desc", "landmarks.title": "asc"},
    )
    tags = {"nested": {"path": "tags", "query": {"term": {"tags.label": "unesco"}}}}
    not_museum = {"bool": {"must_not": [
        {"nested": {"path": "landmarks", "query": {"term": {"landmarks.kind": "museum"}}}}
    ]}}
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"nested": {"path": "landmarks",
                    "query": {"term": {"landmarks.title.keyword": "Eiffel Tower"}}}},
        {"bool": {"must_not": [
            {"nested": {"path": "tags", "query": {"exists": {"field": "tags.weight"}}}}
        ]}},
    ]}}
    assert body["post_filter"] == {"bool": {"filter": [tags, not_museum]}}
    assert body["aggs"] == {
        "facet_0": filtered([not_museum], nested_terms("tags", "tags.label")),
        "facet_1": filtered([tags], nested_terms("landmarks", "landmarks.kind")),
    }
    assert body["sort"] == [
        {"tags.weight": {"order": "desc", "nested": {"path": "tags"}}},
        {"landmarks.title.keyword": {"order": "asc", "nested": {"path": "landmarks"}}},
    ]


def test_nested_facet_without_filters(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(cities, double, facets="landmarks.kind")
    assert body["aggs"] == {"facet_0": nested_terms("landmarks", "landmarks.kind")}


def test_text_search_reaches_nested_fields_through_a_nested_query(
    cities: EsApp, double: EngineDouble
) -> None:
    body = search_ok(cities, double, q="tower",
                     boosts={"name": 2, "landmarks.title": 1, "tags.label": 0.5})
    match = {"query": "tower", "type": "bool_prefix", "lenient": True}
    assert body["query"] == {"bool": {"should": [
        {"multi_match": {**match, "fields": ["name^2"]}},
        {"nested": {"path": "landmarks", "score_mode": "max",
                    "query": {"multi_match": {**match, "fields": ["landmarks.title"]}}}},
        {"nested": {"path": "tags", "score_mode": "max",
                    "query": {"multi_match": {**match, "fields": ["tags.label^0.5"]}}}},
    ], "minimum_should_match": 1}}


# ---------------------------------------------------------------- sort and the mapping


def test_sort_resolves_text_fields_to_their_keyword_sub_field(
    cities: EsApp, double: EngineDouble
) -> None:
    body = search_ok(cities, double,
                     sort={"name": "asc", "people": "desc", "_score": "desc", "region": "asc"})
    assert body["sort"] == [
        {"name.keyword": {"order": "asc"}},
        {"population": {"order": "desc"}},
        {"_score": {"order": "desc"}},
        {"continent": {"order": "asc"}},
    ]


def test_the_mapping_is_read_once_and_again_after_the_engine_rejects_a_query(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    renamed = es.mapping({**es.CITY_PROPERTIES, "name": es.text_with_keyword("raw")})
    double = EngineDouble(engine)
    double.on("GET", "/cities/_mapping", (200, es.city_mapping()), (200, renamed))
    double.search((200, es.empty_search()), (200, es.empty_search()),
                  (400, es.text_sort_failure()), (200, es.empty_search()))
    app = es_app(city_yaml(engine), double)
    sort = {"sort": json.dumps({"name": "asc"})}

    assert app.get("/cities/search", params=sort).status_code == 200
    assert app.get("/cities/search", params=sort).status_code == 200
    assert [(m.method, m.path, m.body) for m in app.mapping_fetches()] == [
        ("GET", "/cities/_mapping", None)
    ]
    assert [s.body["sort"] for s in app.searches()] == [[{"name.keyword": {"order": "asc"}}]] * 2

    assert app.get("/cities/search", params={"sort": '{"description": "asc"}'}).status_code == 400
    assert len(app.mapping_fetches()) == 1
    assert app.get("/cities/search", params=sort).status_code == 200
    assert len(app.mapping_fetches()) == 2
    assert app.last_search().body["sort"] == [{"name.raw": {"order": "asc"}}]


def test_without_a_readable_mapping_names_are_used_as_given(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble(engine)
    double.on("GET", "/cities/_mapping", (403, es.security_403(engine)))
    app = es_app(city_yaml(engine), double)
    double.search((200, es.empty_search()))
    response = app.get("/cities/search", params={"sort": '{"name": "asc"}',
                                                 "filters": '{"country": "France"}'})
    assert response.status_code == 200
    body = app.last_search().body
    assert body["sort"] == [{"name": {"order": "asc"}}]
    assert body["query"]["bool"]["filter"] == [{"term": {"country": "France"}}]


# ---------------------------------------------------------------- highlight and suggest


def test_highlight_all_fields(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(cities, double, q="paris", highlight="true")
    assert body["highlight"] == {**HIGHLIGHT, "fields": [{"*": {}}]}


def test_highlight_marks_the_text_matches_not_the_filters(cities: EsApp,
                                                           double: EngineDouble) -> None:
    """With filters in the query, the highlighter would also mark their terms (a keyword
    field holding the filtered value): ``highlight_query`` is the text query alone."""
    body = search_ok(cities, double, q="paris", highlight="true",
                     filters={"region": "Europe"})
    assert body["highlight"] == {**HIGHLIGHT, "fields": [{"*": {}}],
                                 "highlight_query": body["query"]["bool"]["must"][0]}
    assert body["query"]["bool"]["filter"] == [{"term": {"continent": "Europe"}}]


def test_highlight_chosen_fields_by_their_real_names(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(cities, double, q="paris", highlight="name,region")
    assert body["highlight"] == {**HIGHLIGHT, "fields": [{"name": {}}, {"continent": {}}]}


def test_highlight_off_sends_none(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(cities, double, q="paris", highlight="false")
    assert "highlight" not in body


def test_configured_default_highlight(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble(engine)
    fields = ("    fields:\n      region: {field: continent}\n"
              "    defaults:\n      highlight: [region, name]\n")
    app = es_app(city_yaml(engine, fields=fields), double)
    double.search((200, es.empty_search()))
    assert app.get("/cities/search", params={"q": "eu"}).status_code == 200
    assert app.last_search().body["highlight"] == {
        **HIGHLIGHT, "fields": [{"continent": {}}, {"name": {}}]
    }


def test_phrase_suggest(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(cities, double, q=" pariss ", suggest="true")
    assert body["suggest"] == {
        "text": "pariss",
        "phrase_suggestion": {"phrase": {
            "field": "name.shingle",
            "size": 3,
            "direct_generator": [{"field": "name.shingle", "suggest_mode": "popular"}],
        }},
    }


def test_no_suggester_for_an_empty_query(cities: EsApp, double: EngineDouble) -> None:
    double.search((200, es.empty_search()))
    response = cities.get("/cities/search", params={"suggest": "true"})
    assert response.status_code == 200
    assert response.json()["suggestions"] == []
    assert "suggest" not in cities.last_search().body


# ---------------------------------------------------------------- histogram and geo grid


BOX = {"top_left": {"lat": 60, "lon": -10}, "bottom_right": {"lat": 35, "lon": 30}}


def test_histogram_and_geo_grid_follow_the_post_filter(cities: EsApp, double: EngineDouble) -> None:
    body = search_ok(
        cities, double, facets="region", fields="name,region",
        filters={"region": "Europe", "capital": True},
        histogram={"people": 1000000},
        geoGrid={"field": "where", "precision": 4, "bounds": BOX},
    )
    europe = {"term": {"continent": "Europe"}}
    box = {"top_left": {"lat": 60, "lon": -10}, "bottom_right": {"lat": 35, "lon": 30}}
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"term": {"capital": True}},
        {"geo_bounding_box": {"location": box}},
    ]}}
    assert body["post_filter"] == {"bool": {"filter": [europe]}}
    assert body["_source"] == ["name", "continent"]
    assert body["aggs"] == {
        "facet_0": terms_agg("continent"),
        "histogram_0": filtered([europe], {"histogram": {
            "field": "population", "interval": 1000000, "min_doc_count": 1}}),
        "geo_grid": filtered([europe], {
            "geotile_grid": {"field": "location", "precision": 4, "size": 1000,
                             "bounds": box},
            "aggs": {
                "centroid": {"geo_centroid": {"field": "location"}},
                "sample": {"top_hits": {"size": 1, "_source": ["name", "continent"]}},
            },
        }),
    }


def test_histogram_and_geo_grid_without_facet_filters_are_bare(
    cities: EsApp, double: EngineDouble
) -> None:
    body = search_ok(cities, double, histogram={"area": 2.5}, geoGrid={"field": "location"})
    assert body["query"] == MATCH_ALL
    assert body["aggs"] == {
        "histogram_0": {"histogram": {"field": "area", "interval": 2.5, "min_doc_count": 1}},
        "geo_grid": {
            "geotile_grid": {"field": "location", "precision": 5, "size": 1000},
            "aggs": {
                "centroid": {"geo_centroid": {"field": "location"}},
                "sample": {"top_hits": {"size": 1}},
            },
        },
    }


def test_histogram_and_geo_grid_on_nested_fields_count_documents(
    cities: EsApp, double: EngineDouble
) -> None:
    """SPEC rule 4: aggregations on fields inside nested objects are wrapped in ``nested``;
    like facets, each bucket counts root documents (``reverse_nested``), and the geo sample
    is read at the root, so it is a whole document (top_hits under reverse_nested)."""
    body = search_ok(cities, double, facets="region", filters={"region": "Europe"},
                     histogram={"landmarks.height": 50},
                     geoGrid={"field": "landmarks.location", "precision": 6, "bounds": BOX})
    europe = {"term": {"continent": "Europe"}}
    box = {"top_left": {"lat": 60, "lon": -10}, "bottom_right": {"lat": 35, "lon": 30}}
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"nested": {"path": "landmarks",
                    "query": {"geo_bounding_box": {"landmarks.location": box}}}},
    ]}}
    assert body["post_filter"] == {"bool": {"filter": [europe]}}
    assert body["aggs"] == {
        "facet_0": terms_agg("continent"),
        "histogram_0": filtered([europe], {"nested": {"path": "landmarks"}, "aggs": {"inner": {
            "histogram": {"field": "landmarks.height", "interval": 50, "min_doc_count": 1},
            "aggs": {"docs": {"reverse_nested": {}}},
        }}}),
        "geo_grid": filtered([europe], {"nested": {"path": "landmarks"}, "aggs": {"inner": {
            "geotile_grid": {"field": "landmarks.location", "precision": 6, "size": 1000,
                             "bounds": box},
            "aggs": {
                "centroid": {"geo_centroid": {"field": "landmarks.location"}},
                "docs": {"reverse_nested": {}, "aggs": {"sample": {"top_hits": {"size": 1}}}},
            },
        }}}),
    }


# ---------------------------------------------------------------- facet value search


def facet_values(cities: EsApp, double: EngineDouble, field: str, answer: dict[str, Any],
                 **params: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    double.search((200, answer))
    response = cities.get(f"/cities/facets/{field}", params=q(**params))
    assert response.status_code == 200, response.text
    sent = cities.last_search()
    assert (sent.method, sent.path) == ("POST", "/cities/_search")
    return sent.body, response.json()


def values_answer(agg: dict[str, Any]) -> dict[str, Any]:
    return {**es.search([], total=0), "aggregations": {"facet_0": agg}}


def test_facet_value_search(cities: EsApp, double: EngineDouble) -> None:
    answer = values_answer(es.terms([es.bucket("Europe", 3), es.bucket("Eurasia", 5)]))
    body, result = facet_values(cities, double, "region", answer, q="eu.r", maxValues=5,
                                filters={"capital": True, "tags.label": "unesco"})
    assert body == {
        "size": 0,
        "track_total_hits": False,
        "query": {"bool": {"filter": [
            {"term": {"capital": True}},
            {"nested": {"path": "tags", "query": {"term": {"tags.label": "unesco"}}}},
        ]}},
        "aggs": {"facet_0": terms_agg("continent", 5, include=".*[eE][uU]\\.[rR].*")},
    }
    assert result == {"field": "region", "values": [{"value": "Eurasia", "count": 5},
                                                    {"value": "Europe", "count": 3}]}


def test_facet_value_search_without_text_or_filters(cities: EsApp, double: EngineDouble) -> None:
    answer = values_answer(es.terms([es.bucket("France", 9)]))
    body, result = facet_values(cities, double, "country", answer)
    assert body == {"size": 0, "track_total_hits": False, "query": MATCH_ALL,
                    "aggs": {"facet_0": terms_agg("country.keyword", 20)}}
    assert result["values"] == [{"value": "France", "count": 9}]


def letter_classes_sorted(pattern: str) -> str:
    """``[Uu]`` and ``[uU]`` are the same class: compare patterns with sorted classes."""
    return re.sub(r"(?<!\\)\[([^\]]+)\]", lambda m: "[" + "".join(sorted(m[1])) + "]", pattern)


@pytest.mark.parametrize(("text", "pattern", "matching", "other"), [
    ("Sc@t", ".*[sS][cC]\\@[tT].*", "xSC@Tx", "scat"),
    ('a&b~c<d>e#f"g', '.*[aA]\\&[bB]\\~[cC]\\<[dD]\\>[eE]\\#[fF]\\"[gG].*',
     'A&B~C<D>E#F"G', "abcdefg"),
    ("new york", ".*[nN][eE][wW]\\ [yY][oO][rR][kK].*", "New York City", "newyork"),
    ("(x)*+?|{1}[2]^$\\", ".*\\([xX]\\)\\*\\+\\?\\|\\{1\\}\\[2\\]\\^\\$\\\\.*",
     "(X)*+?|{1}[2]^$\\", "x"),
    ("Zürich 9", ".*[zZ][üÜ][rR][iI][cC][hH]\\ 9.*", "ZÜRICH 9", "Zurich 9"),
])
def test_facet_value_text_is_a_case_insensitive_literal(
    cities: EsApp, double: EngineDouble, text: str, pattern: str, matching: str, other: str
) -> None:
    """Every character but letters and digits is escaped (Lucene's regular expression
    syntax: a backslash makes any character literal), each letter matches both cases."""
    body, _ = facet_values(cities, double, "region", values_answer(es.terms([])), q=text)
    sent = body["aggs"]["facet_0"]["terms"]["include"]
    assert letter_classes_sorted(sent) == letter_classes_sorted(pattern)
    # the constructs used here mean the same in Python's re as in Lucene's RegExp
    assert re.fullmatch(sent, matching) and not re.fullmatch(sent, other)


def test_facet_value_search_in_a_nested_field(cities: EsApp, double: EngineDouble) -> None:
    answer = values_answer(es.single(40, inner=es.terms([
        es.bucket("museum", 30, docs=es.single(12)), es.bucket("monument", 9, docs=es.single(9)),
    ])))
    body, result = facet_values(cities, double, "landmarks.kind", answer, q="mu", maxValues=3)
    assert body["aggs"] == {"facet_0": nested_terms("landmarks", "landmarks.kind", 3,
                                                    include=".*[mM][uU].*")}
    assert result["values"] == [{"value": "museum", "count": 12},
                                {"value": "monument", "count": 9}]


def test_facet_value_search_on_a_number_reads_the_values_and_matches_them_here(
    cities: EsApp, double: EngineDouble
) -> None:
    answer = values_answer(es.terms([
        es.bucket(1000, 4), es.bucket(2100, 3), es.bucket(310, 2), es.bucket(77, 9),
    ]))
    body, result = facet_values(cities, double, "people", answer, q="10", maxValues=2)
    assert body["aggs"] == {"facet_0": terms_agg("population", 1000)}
    assert result == {"field": "people", "values": [{"value": "1000", "count": 4},
                                                    {"value": "2100", "count": 3}]}


# ---------------------------------------------------------------- autocomplete


def test_autocomplete(cities: EsApp, double: EngineDouble) -> None:
    def answer(request: Any) -> Any:
        body = json.loads(request.content)
        if "aggs" in body:
            return double.response(200, values_answer(es.terms([es.bucket("Europe", 2)])))
        return double.response(200, es.search([es.hit("1", {"name": "Paris"})]))

    double.search(answer)
    response = cities.get("/cities/autocomplete",
                          params={"q": "eu", "facets": "region", "perPage": "3"})
    assert response.status_code == 200, response.text
    bodies = sorted((s.body for s in cities.searches()), key=lambda b: "aggs" in b)
    assert bodies == [
        {"from": 0, "size": 3, "track_total_hits": True,
         "query": {"multi_match": {"query": "eu", "type": "bool_prefix", "lenient": True,
                                   "fields": ["name^2", "description"]}}},
        {"size": 0, "track_total_hits": False, "query": MATCH_ALL,
         "aggs": {"facet_0": terms_agg("continent", 4, include=".*[eE][uU].*")}},
    ]
    assert response.json()["facets"] == {"region": [{"value": "Europe", "count": 2}]}
    assert response.json()["hits"][0]["objectID"] == "1"


# ---------------------------------------------------------------- documents, mapping, raw


@pytest.mark.parametrize(("doc_id", "wire"), [
    ("42", "42"),
    ("a/b", "a%2Fb"),
    ("what?x=1#y", "what%3Fx%3D1%23y"),  # every reserved character encoded, sent as built
    ("two words", "two%20words"),
    ("Zürich-€", "Z%C3%BCrich-%E2%82%AC"),
    ("100%", "100%25"),
])
def test_a_document_of_one_index_is_a_get_by_id(
    cities: EsApp, double: EngineDouble, engine: str, doc_id: str, wire: str
) -> None:
    double.on("GET", f"/cities/_doc/{wire}",
              (200, es.doc_found(doc_id, {"name": "Somewhere"}, engine=engine)))
    response = cities.get("/cities/documents/" + quote(doc_id, safe="/"))
    assert response.status_code == 200, response.text
    assert response.json() == {"objectID": doc_id, "_index": "cities", "name": "Somewhere"}
    [sent] = cities.data_requests()
    assert (sent.method, sent.path, sent.content) == ("GET", f"/cities/_doc/{wire}", b"")
    assert "content-type" not in sent.headers


@pytest.mark.parametrize("index_name", [["cities", "towns"], "cities,towns"])
def test_a_document_of_several_indices_is_an_ids_search(
    engine: str, es_app: Callable[..., EsApp], index_name: list[str] | str
) -> None:
    double = EngineDouble(engine)
    double.on("GET", "/cities,towns/_mapping",
              (200, {**es.city_mapping("cities"), **es.city_mapping("towns")}))
    double.on("POST", "/cities,towns/_search",
              (200, es.search([es.hit("a/b", {"name": "Hamlet"}, index="towns")])))
    app = es_app(city_yaml(engine, index_name=index_name), double)
    response = app.get("/cities/documents/a%2Fb")
    assert response.status_code == 200, response.text
    assert response.json() == {"objectID": "a/b", "_index": "towns", "name": "Hamlet"}
    [sent] = app.data_requests()
    assert (sent.method, sent.path) == ("POST", "/cities,towns/_search")
    assert sent.body == {"size": 1, "query": {"ids": {"values": ["a/b"]}}}


def test_search_across_several_indices(engine: str, es_app: Callable[..., EsApp]) -> None:
    double = EngineDouble(engine)
    double.on("GET", "/cities,towns/_mapping",
              (200, {**es.city_mapping("cities"), **es.city_mapping("towns")}))
    double.on("POST", "/cities,towns/_search", (200, es.search([
        es.hit("1", {"name": "Paris"}, index="cities", score=2.0),
        es.hit("1", {"name": "Paris"}, index="towns", score=1.0),
    ])))
    app = es_app(city_yaml(engine, index_name=["cities", "towns"]), double)
    response = app.get("/cities/search", params={"q": "paris"})
    assert response.status_code == 200
    assert [(h["objectID"], h["_index"]) for h in response.json()["hits"]] == [
        ("1", "cities"), ("1", "towns")
    ]
    assert [(s.method, s.path) for s in app.sent] == [
        ("GET", "/cities,towns/_mapping"), ("POST", "/cities,towns/_search")
    ]


def test_mapping_is_the_engine_answer_unmodified(cities: EsApp) -> None:
    response = cities.get("/cities/mapping")
    assert response.status_code == 200
    assert response.json() == es.city_mapping()
    assert [(m.method, m.path, m.content) for m in cities.mapping_fetches()] == [
        ("GET", "/cities/_mapping", b"")
    ]
    assert cities.get("/cities/mapping").json() == es.city_mapping()
    assert len(cities.mapping_fetches()) == 2  # read again: the engine's word, not a memo


def test_raw_query_goes_to_the_configured_index_only(cities: EsApp, double: EngineDouble) -> None:
    answer = (b'{"took" : 1,"timed_out":false, "_shards":{"total":1,"successful":1,'
              b'"skipped":0,"failed":0},"hits":{"total":{"value":0,"relation":"eq"},'
              b'"max_score":null,"hits":[ ]}}')
    double.search((200, answer))
    response = cities.post("/cities/query", content=json.dumps({
        "index": "secrets", "indices": ["a"], "_index": "b",
        "query": {"match": {"name": "x"}}, "size": 2,
    }), headers={"Content-Type": "application/json"})
    assert response.status_code == 200
    assert response.content == answer
    sent = cities.last_search()
    assert (sent.method, sent.path, sent.query) == ("POST", "/cities/_search", "")
    assert sent.body == {"query": {"match": {"name": "x"}}, "size": 2}
    assert sent.headers["content-type"] == "application/json"


def test_index_list_names_the_engine_and_its_capabilities(cities: EsApp, engine: str) -> None:
    response = cities.get("/indexes")
    assert response.status_code == 200
    assert response.json() == {"indexes": [{
        "handle": "cities", "engine": engine,
        "capabilities": {"suggest": True, "boosts": True, "histogram": True, "geoGrid": True,
                         "geoRadius": True, "nested": True, "multiIndex": True, "rawQuery": True,
                         "semantic": False},
    }]}
    assert cities.data_requests() == []


# ---------------------------------------------------------------- once defects, now pinned
# (test_raw_query.py covers every construct that names an index)


def test_a_nested_facet_keeps_the_values_with_the_most_documents(
    cities: EsApp, double: EngineDouble
) -> None:
    """A nested facet reports ``docs`` (root documents, via reverse_nested) per value, so the
    engine must pick the top values by that count: ordering a terms aggregation by a
    single-bucket sub-aggregation's name orders by its doc_count (terms aggregation,
    "Ordering by a sub aggregation"). Ordered by ``_count`` (nested objects), a value
    found 30 times in 5 documents pushes out one found once in each of 9 documents."""
    body, _ = facet_values(cities, double, "landmarks.kind",
                           values_answer(es.single(0, inner=es.terms([]))), maxValues=2)
    terms = body["aggs"]["facet_0"]["aggs"]["inner"]["terms"]
    assert terms["order"] == [{"docs": "desc"}, {"_key": "asc"}]


def test_a_raw_query_cannot_read_another_index_through_a_terms_lookup(
    cities: EsApp, double: EngineDouble
) -> None:
    """docs/http-api.md: the raw body goes to the handle's configured index only. A terms
    lookup (``{"terms": {"f": {"index": "other", "id": "1", "path": "p"}}}``) makes the
    engine fetch a document of ``other``; so do ``more_like_this`` ``like`` documents with
    ``_index`` and ``geo_shape`` ``indexed_shape``."""
    double.search((200, es.empty_search()))
    lookup = {"query": {"terms": {"continent": {"index": "salaries", "id": "ceo",
                                                "path": "amount"}}}}
    response = cities.post("/cities/query", content=json.dumps(lookup),
                           headers={"Content-Type": "application/json"})
    sent = [s.content for s in cities.data_requests()]
    assert response.status_code == 400 or all(b"salaries" not in c for c in sent)


# ---------------------------------------------------------------- the Algolia endpoints


def algolia_ok(cities: EsApp, double: EngineDouble, params: dict[str, Any]) -> dict[str, Any]:
    double.search((200, es.empty_search()))
    response = cities.post("/1/indexes/cities/query", json={"params": params})
    assert response.status_code == 200, response.text
    body = cities.last_search().body
    assert isinstance(body, dict)
    return body


def test_algolia_strict_bounds_are_gt_and_lt(cities: EsApp, double: EngineDouble) -> None:
    body = algolia_ok(cities, double, {"numericFilters": ["people>100000", "people<=900000"],
                                       "filters": "area < 99.5 AND area >= 10"})
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"range": {"population": {"gt": 100000}}},
        {"range": {"population": {"lte": 900000}}},
        {"range": {"area": {"lt": 99.5}}},
        {"range": {"area": {"gte": 10}}},
    ]}}


def test_algolia_ors_across_attributes_and_negations_are_bool_should_and_must_not(
    cities: EsApp, double: EngineDouble
) -> None:
    """Clauses no single filter expresses: ``bool.should`` with ``minimum_should_match: 1``
    (at least one), ``bool.must_not`` (the complement: records without the field too); a
    member on a nested field is wrapped on its own, a negation outside the wrapper."""
    body = algolia_ok(cities, double, {
        "filters": "(region:Europe OR people > 100000) AND NOT area:10 TO 20 "
                   "AND (area < 5 OR area > 100) AND (NOT landmarks.kind:museum OR country:FR)",
        "facets": ["region"], "attributesToHighlight": []})
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"bool": {"should": [{"term": {"continent": "Europe"}},
                             {"range": {"population": {"gt": 100000}}}],
                  "minimum_should_match": 1}},
        {"bool": {"must_not": [{"range": {"area": {"gte": 10, "lte": 20}}}]}},
        {"bool": {"should": [{"range": {"area": {"lt": 5}}}, {"range": {"area": {"gt": 100}}}],
                  "minimum_should_match": 1}},
        {"bool": {"should": [
            {"bool": {"must_not": [{"nested": {"path": "landmarks", "query": {
                "term": {"landmarks.kind": "museum"}}}}]}},
            {"term": {"country.keyword": "FR"}}],
            "minimum_should_match": 1}},
    ]}}
    assert "post_filter" not in body  # Algolia: every filter narrows every facet
    assert body["aggs"] == {"facet_0": terms_agg("continent")}


def test_groups_are_never_a_facets_own_filter_on_search(
    cities: EsApp, double: EngineDouble
) -> None:
    """With disjunctive facets (``/search``), a group narrows every facet: it stays in the
    query, outside the post_filter and the facets' wrappers."""
    group = AnyOf(filters=(TermFilter(field="continent", values=("Europe",)),
                           Negated(filter=TermFilter(field="capital", values=(True,)))))
    own = TermFilter(field="continent", values=("Asia",))
    body = translate.search_body(SearchQuery(filters=(group, own), facets=("continent",)),
                                 FieldCatalog())
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"bool": {"should": [{"term": {"continent": "Europe"}},
                             {"bool": {"must_not": [{"term": {"capital": True}}]}}],
                  "minimum_should_match": 1}}]}}
    assert body["post_filter"] == {"bool": {"filter": [{"term": {"continent": "Asia"}}]}}
    assert body["aggs"] == {"facet_0": terms_agg("continent")}


def test_algolia_facet_counts_follow_every_filter(cities: EsApp, double: EngineDouble) -> None:
    """Algolia's semantics: a filter on a faceted field narrows that facet's counts too, so
    it goes into the query, not into a post_filter left out of its own aggregation."""
    body = algolia_ok(cities, double, {"facetFilters": [["region:Europe", "region:Asia"]],
                                       "facets": ["region"], "hitsPerPage": 0})
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"terms": {"continent": ["Europe", "Asia"]}}]}}
    assert "post_filter" not in body
    assert body["aggs"] == {"facet_0": terms_agg("continent")}
    assert body["size"] == 0


GEO_SORT = {"order": "asc", "unit": "m", "mode": "min", "distance_type": "arc"}


@pytest.mark.parametrize(("fields", "clause", "nearest"), [
    ("      where: {field: location, type: geo_point}\n",
     {"geo_distance": {"distance": "1500m", "location": {"lat": 48.85, "lon": 2.35}}},
     {"_geo_distance": {"location": [{"lat": 48.85, "lon": 2.35}], **GEO_SORT}}),
    # a geo point inside nested objects: some landmark within the radius, sorted by the
    # closest landmark
    ("      spot: {field: landmarks.location, nestedPath: landmarks, type: geo_point}\n",
     {"nested": {"path": "landmarks", "query": {"geo_distance": {
         "distance": "1500m", "landmarks.location": {"lat": 48.85, "lon": 2.35}}}}},
     {"_geo_distance": {"landmarks.location": [{"lat": 48.85, "lon": 2.35}], **GEO_SORT,
                        "nested": {"path": "landmarks"}}}),
])
def test_algolia_around_radius_is_a_geo_distance_filter_and_sort(
    engine: str, es_app: Callable[..., EsApp], fields: str, clause: dict[str, Any],
    nearest: dict[str, Any],
) -> None:
    """aroundLatLng + aroundRadius (meters): a geo_distance filter, arc distance (the
    default), on the handle's one geo_point field, next to the other filters; and the
    hits closest first (``_geo_distance`` sort, arc distance, a document's closest point),
    then by relevance (``_score``, which a sort list leaves uncomputed unless named)."""
    double = EngineDouble(engine)
    yaml = ("    fields:\n      region: {field: continent}\n" + fields)
    app = es_app(city_yaml(engine, fields=yaml), double)
    double.search((200, es.empty_search()))
    response = app.post("/1/indexes/cities/query", json={"params": {
        "aroundLatLng": "48.85, 2.35", "aroundRadius": 1500, "facetFilters": ["region:Europe"],
        "attributesToHighlight": []}})
    assert response.status_code == 200, response.text
    assert app.last_search().body == {
        "from": 0,
        "size": 20,
        "query": {"bool": {"must": [MATCH_ALL], "filter": [
            {"term": {"continent": "Europe"}}, clause]}},
        "track_total_hits": True,
        "sort": [nearest, {"_score": {"order": "desc"}}],
    }


def test_algolia_boxes_and_polygons_are_geo_bounding_box_and_geo_polygon_clauses(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    """Several boxes: a ``bool.should`` of ``geo_bounding_box`` clauses (top-left and
    bottom-right corners from the two corners given in any order); a polygon: a
    ``geo_polygon`` clause with its points in order; both in filter context."""
    double = EngineDouble(engine)
    yaml = "    fields:\n      where: {field: location, type: geo_point}\n"
    app = es_app(city_yaml(engine, fields=yaml), double)
    body = algolia_ok(app, double, {"insideBoundingBox": [[50, 10, 40, 0], [-1, -2, 1, 2]],
                                    "attributesToHighlight": []})
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [{"bool": {"should": [
        {"geo_bounding_box": {"location": {"top_left": {"lat": 50, "lon": 0},
                                           "bottom_right": {"lat": 40, "lon": 10}}}},
        {"geo_bounding_box": {"location": {"top_left": {"lat": 1, "lon": -2},
                                           "bottom_right": {"lat": -1, "lon": 2}}}}],
        "minimum_should_match": 1}}]}}
    body = algolia_ok(app, double, {"insidePolygon": "55,-5,55,20,38,7.5",
                                    "attributesToHighlight": []})
    assert body["query"] == {"bool": {"must": [MATCH_ALL], "filter": [
        {"geo_polygon": {"location": {"points": [
            {"lat": 55, "lon": -5}, {"lat": 55, "lon": 20}, {"lat": 38, "lon": 7.5}]}}}]}}


@pytest.mark.parametrize("stored", [
    {"lat": 48.5, "lon": 2.25}, [2.25, 48.5], "48.5,2.25", "POINT (2.25 48.5)",
])
def test_algolia_hits_carry_the_stored_point_as_geoloc(
    engine: str, es_app: Callable[..., EsApp], stored: Any
) -> None:
    """Every form Elasticsearch and OpenSearch store a geo_point in (an object, GeoJSON's
    ``[lon, lat]``, ``"lat,lon"``, WKT) is ``_geoloc: {lat, lng}``."""
    double = EngineDouble(engine)
    yaml = "    fields:\n      where: {field: location, type: geo_point}\n"
    app = es_app(city_yaml(engine, fields=yaml), double)
    double.search((200, es.search([es.hit("1", {"name": "x", "location": stored})])))
    response = app.post("/1/indexes/cities/query", json={"params": {}})
    assert response.status_code == 200, response.text
    assert response.json()["hits"][0]["_geoloc"] == {"lat": 48.5, "lng": 2.25}


def test_algolia_around_radius_all_sorts_by_distance_without_a_filter(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    """``aroundRadius: "all"``: no radius filter, still closest first (Algolia's geo
    criterion comes before the words)."""
    double = EngineDouble(engine)
    yaml = "    fields:\n      where: {field: location, type: geo_point}\n"
    app = es_app(city_yaml(engine, fields=yaml), double)
    body = algolia_ok(app, double, {"aroundLatLng": "-33.9,151.2", "aroundRadius": "all",
                                    "attributesToHighlight": []})
    assert body["query"] == MATCH_ALL
    assert body["sort"] == [
        {"_geo_distance": {"location": [{"lat": -33.9, "lon": 151.2}], **GEO_SORT}},
        {"_score": {"order": "desc"}}]


def test_a_geo_sort_comes_before_the_sort_keys() -> None:
    """Closest first, then the sort keys in their order (relevance only when named)."""
    query = SearchQuery(sort=(SortClause(field="population", order="desc"),
                              SortClause(field="_score", order="desc")),
                        geo_sort=GeoSort(field="location", lat=1.5, lon=-2))
    assert translate.search_body(query, FieldCatalog())["sort"] == [
        {"_geo_distance": {"location": [{"lat": 1.5, "lon": -2}], **GEO_SORT}},
        {"population": {"order": "desc"}},
        {"_score": {"order": "desc"}},
    ]


@pytest.mark.parametrize("name", ["order", "unit", "mode", "nested", "distance_type"])
def test_a_geo_sort_on_a_field_named_like_an_option_is_refused(name: str) -> None:
    """``_geo_distance`` reads its options and the field from one object: a field named
    like an option would be read as that option, so it is a 400, never a wrong sort."""
    query = SearchQuery(geo_sort=GeoSort(field=name, lat=1, lon=2))
    with pytest.raises(InvalidRequest) as caught:
        translate.search_body(query, FieldCatalog())
    assert repr(name) in str(caught.value)


# ---------------------------------------------------------------- custom ranking


RANKED_SETTINGS = "customRanking: [{field: people}, {field: founded, order: asc}]"


@pytest.fixture
def ranked(engine: str, app_pool: AppPool) -> Iterator[EsApp]:
    """``cities`` with a custom ranking: the alias people, then a field not configured."""
    app = app_pool.get(city_yaml(engine, settings=RANKED_SETTINGS), lambda: EngineDouble(engine))
    yield app
    assert not app.double.unexpected


def ranked_search(app: EsApp, **params: Any) -> dict[str, Any]:
    app.double.search((200, es.empty_search()))
    response = app.get("/cities/search", params=q(**params))
    assert response.status_code == 200, response.text
    body = app.last_search().body
    assert isinstance(body, dict)
    return body


RANKING_SORT = [{"_score": {"order": "desc"}},
                {"population": {"order": "desc", "missing": "_last"}},
                {"founded": {"order": "asc", "missing": "_last"}}]


def test_custom_ranking_sorts_by_score_then_its_fields(ranked: EsApp) -> None:
    """Relevance first; the ranking's fields (real names) only order equal scores, and a
    document without a value comes after those with one."""
    body = ranked_search(ranked, q="new yo")
    assert body["sort"] == RANKING_SORT
    assert body["query"]["multi_match"]["query"] == "new yo"
    assert ranked_search(ranked)["sort"] == RANKING_SORT  # match_all: the ranking alone


def test_an_explicit_sort_replaces_the_custom_ranking(ranked: EsApp) -> None:
    body = ranked_search(ranked, q="paris", sort={"name": "asc"})
    assert body["sort"] == [{"name.keyword": {"order": "asc"}}]


def test_algolia_queries_get_the_custom_ranking(ranked: EsApp) -> None:
    ranked.double.search((200, es.empty_search()))
    response = ranked.post("/1/indexes/cities/query", json={"query": "par"})
    assert response.status_code == 200, response.text
    body = ranked.last_search().body
    assert isinstance(body, dict) and body["sort"] == RANKING_SORT


def test_a_geo_sort_comes_before_relevance_and_the_custom_ranking() -> None:
    ranking = (SortClause(field="population", order="desc"),)
    query = SearchQuery(text="x", geo_sort=GeoSort(field="location", lat=1.5, lon=-2))
    assert translate.search_body(query, FieldCatalog(), ranking)["sort"] == [
        # the centre as a list of one point: what both engines' specifications accept
        {"_geo_distance": {"location": [{"lat": 1.5, "lon": -2}], **GEO_SORT}},
        {"_score": {"order": "desc"}},
        {"population": {"order": "desc", "missing": "_last"}},
    ]


def words(text: str, kind: str) -> dict[str, Any]:
    """A ``multi_match`` over the cities handle's searched fields, with their weights."""
    return {"multi_match": {"query": text, "type": kind, "lenient": True,
                            "fields": ["name^2", "description"]}}


def required(word: str, kind: str) -> dict[str, Any]:
    """One required word: every term the analyzer makes of it must match."""
    clause = words(word, kind)
    clause["multi_match"]["operator"] = "and"
    return clause


def test_algolia_words_are_each_required_but_the_optional_ones(cities: EsApp,
                                                                double: EngineDouble) -> None:
    """Algolia's rule, every word must match (each in any searched field, the last one as
    a prefix): one ``multi_match`` per required word in ``must``, the whole text in
    ``should`` for relevance; an optional word only in ``should``."""
    body = algolia_ok(cities, double, {"query": "harbour zebra", "attributesToHighlight": []})
    whole = words("harbour zebra", "bool_prefix")
    assert body["query"] == {"bool": {
        "must": [required("harbour", "best_fields"),
                 required("zebra", "bool_prefix")],
        "should": [whole]}}
    body = algolia_ok(cities, double, {"query": "harbour zebra", "optionalWords": "zebra",
                                       "attributesToHighlight": []})
    assert body["query"] == {"bool": {
        "must": [required("harbour", "best_fields")],
        "should": [whole]}}
    body = algolia_ok(cities, double, {"query": "harbour zebra", "attributesToHighlight": [],
                                       "optionalWords": ["harbour", "zebra"]})
    assert body["query"] == whole  # every word optional: any word matches


def test_a_required_word_the_analyzer_splits_needs_every_part(cities: EsApp,
                                                               double: EngineDouble) -> None:
    """``saint-malo`` is one word to Algolia's rule but two terms to the standard analyzer:
    a hit needs both (``operator: and``), not either, as on the other engines."""
    body = algolia_ok(cities, double, {"query": "saint-malo port", "attributesToHighlight": []})
    assert body["query"] == {"bool": {
        "must": [required("saint-malo", "best_fields"), required("port", "bool_prefix")],
        "should": [words("saint-malo port", "bool_prefix")]}}
