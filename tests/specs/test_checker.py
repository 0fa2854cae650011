"""The specification checker itself: it refuses known-wrong bodies (a misspelt key, a wrong
type, a value out of its enum) and accepts examples from the engines' own documentation,
so a green suite means the exchanges were checked, not that the checker accepts anything."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.specs.checker import SPECS, SpecViolation, check, document, problems
from tests.specs.exchanges import typesense_params
from tests.specs.meilisearch import request_problems as meili_problems

ELASTIC = ("elasticsearch", "opensearch")

# ---------------------------------------------------------------- documentation examples
# Request bodies from the Elasticsearch and OpenSearch reference pages (search API, term,
# terms aggregation, geo-distance query, sort, highlighting, count, get, get mapping).
ELASTIC_REQUESTS: list[dict[str, Any]] = [
    {"query": {"term": {"user.id": "kimchy"}}},
    {"query": {"term": {"user.id": {"value": "kimchy", "boost": 1.0}}}},
    {"aggs": {"genres": {"terms": {"field": "genre"}}}},
    {"query": {"bool": {"must": {"match_all": {}}, "filter": {"geo_distance": {
        "distance": "200km", "pin.location": {"lat": 40, "lon": -70}}}}}},
    {"sort": [{"post_date": {"order": "asc"}}, "user", {"name": "desc"}, {"age": "desc"},
              "_score"], "query": {"term": {"user": "kimchy"}}},
    {"query": {"match": {"content": "kimchy"}}, "highlight": {"fields": {"content": {}}}},
    {"from": 5, "size": 20, "query": {"match": {"user.id": "kimchy"}}},
    {"sort": [{"_geo_distance": {"pin.location": [{"lat": 40, "lon": -70}], "order": "asc",
                                 "unit": "km"}}], "query": {"match_all": {}}},
    {"query": {"multi_match": {"query": "this is a test", "fields": ["subject^3", "message"]}}},
    {"query": {"nested": {"path": "obj1", "query": {"bool": {"must": [
        {"match": {"obj1.name": "blue"}}, {"range": {"obj1.count": {"gt": 5}}}]}}}}},
]
ELASTIC_ANSWERS: dict[str, Any] = {
    "search.response": {
        "took": 5, "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {"total": {"value": 20, "relation": "eq"}, "max_score": 1.3862942,
                 "hits": [{"_index": "my-index-000001", "_id": "0", "_score": 1.3862942,
                           "_source": {"user": {"id": "kimchy"}, "message": "GET /search"}}]}},
    "count.response": {"count": 1, "_shards": {"total": 1, "successful": 1, "skipped": 0,
                                               "failed": 0}},
    "get.response": {"_index": "my-index-000001", "_id": "0", "_version": 1, "_seq_no": 0,
                     "_primary_term": 1, "found": True, "_source": {"message": "hi"}},
    "mapping.response": {"my-index-000001": {"mappings": {"properties": {
        "age": {"type": "integer"}, "email": {"type": "keyword"}, "name": {"type": "text"}}}}},
}


@pytest.mark.parametrize("engine", ELASTIC)
@pytest.mark.parametrize("body", ELASTIC_REQUESTS, ids=lambda b: json.dumps(b)[:40])
def test_documented_search_bodies_are_accepted(engine: str, body: dict[str, Any]) -> None:
    check(engine, "search.request", body)


@pytest.mark.parametrize("engine", ELASTIC)
@pytest.mark.parametrize("endpoint", sorted(ELASTIC_ANSWERS))
def test_documented_answers_are_accepted(engine: str, endpoint: str) -> None:
    check(engine, endpoint, ELASTIC_ANSWERS[endpoint])


WRONG_ELASTIC: list[tuple[dict[str, Any], str]] = [
    ({"qeury": {"match_all": {}}}, "qeury"),  # a misspelt top-level key
    ({"size": "ten"}, "size"),  # a wrong type
    ({"query": {"match": {"title": {"query": "x", "fuzzyness": 1}}}}, "fuzzyness"),
    ({"query": {"bool": {"filter": [{"term": {"a": "b"}}], "mustnot": []}}}, "mustnot"),
    ({"aggs": {"a": {"terms": {"field": "genre", "sise": 10}}}}, "sise"),
    ({"sort": [{"year": {"order": "up"}}]}, "up"),  # outside the enum
    ({"highlight": {"fields": {"title": {"pre_tag": ["<b>"]}}}}, "pre_tag"),
    ({"query": {"range": {"year": {"gte": 1, "lessthan": 2}}}}, "lessthan"),
]


@pytest.mark.parametrize("engine", ELASTIC)
@pytest.mark.parametrize(("body", "named"), WRONG_ELASTIC, ids=lambda x: str(x)[:30])
def test_known_wrong_search_bodies_are_refused(engine: str, body: dict[str, Any],
                                               named: str) -> None:
    found = problems(engine, "search.request", body)
    assert found and named in " ".join(found), found
    with pytest.raises(SpecViolation, match=engine):
        check(engine, "search.request", body)


def test_a_wrong_answer_is_refused() -> None:
    answer = json.loads(json.dumps(ELASTIC_ANSWERS["search.response"]))
    answer["hits"]["total"] = {"value": 20, "relation": "about"}
    for engine in ELASTIC:
        assert problems(engine, "search.response", answer)
        assert problems(engine, "count.response", {"count": "one", "_shards": {
            "total": 1, "successful": 1, "failed": 0}})


def test_a_geo_distance_sort_centre_as_an_object_is_opensearch_s_finding() -> None:
    """OpenSearch's specification takes only an array of points as the centre of a
    ``_geo_distance`` sort; Elasticsearch's takes a point or an array."""
    as_object = {"sort": [{"_geo_distance": {"where": {"lat": 48.8, "lon": 2.3},
                                             "order": "asc"}}]}
    assert problems("opensearch", "search.request", as_object)
    assert not problems("elasticsearch", "search.request", as_object)
    as_array = {"sort": [{"_geo_distance": {"where": [{"lat": 48.8, "lon": 2.3}],
                                            "order": "asc"}}]}
    for engine in ELASTIC:
        assert not problems(engine, "search.request", as_array)


# ---------------------------------------------------------------- Typesense

def test_typesense_documented_parameters_and_answers() -> None:
    # the reference's search and multi_search examples
    assert not problems("typesense", "search.params", typesense_params("search.params", {
        "q": "harry potter", "query_by": "title", "filter_by": "num_pages:>100",
        "sort_by": "ratings_count:desc", "per_page": "10", "page": "1"}))
    assert not problems("typesense", "multi_search.request", {"searches": [
        {"collection": "products", "q": "shoe", "query_by": "name",
         "filter_by": "price:=[50..120]"},
        {"collection": "brands", "q": "Nike", "query_by": "name"}]})
    assert not problems("typesense", "search.response", {
        "facet_counts": [], "found": 1, "out_of": 1, "page": 1, "search_time_ms": 1,
        "request_params": {"collection_name": "books", "per_page": 10, "q": "harry"},
        "hits": [{"highlights": [{"field": "title", "snippet": "<mark>Harry</mark> Potter",
                                  "matched_tokens": ["Harry"]}],
                  "document": {"id": "1", "title": "Harry Potter"}, "text_match": 130916}]})


def test_typesense_wrong_parameters_are_refused() -> None:
    assert problems("typesense", "search.params", {"q": "x", "query_by": "t",
                                                   "per_pagee": 10})
    assert problems("typesense", "search.params", typesense_params(
        "search.params", {"q": "x", "query_by": "t", "per_page": "ten"}))
    assert problems("typesense", "multi_search.request", {"searches": [
        {"collection": "books", "q": "x", "query_by": "t", "filterby": "a:1"}]})
    assert problems("typesense", "search.response", {"found": "1", "hits": []})


# ---------------------------------------------------------------- Algolia

ALGOLIA_HIT = {"objectID": "1", "name": "Paris", "_highlightResult": {"name": {
    "value": "<em>Paris</em>", "matchLevel": "full", "matchedWords": ["paris"],
    "fullyHighlighted": True}}}
ALGOLIA_SEARCH = {"hits": [ALGOLIA_HIT], "nbHits": 1, "page": 0, "nbPages": 1,
                  "hitsPerPage": 20, "exhaustiveNbHits": True, "query": "paris",
                  "params": "query=paris", "processingTimeMS": 1}


def test_algolia_documented_answers_are_accepted() -> None:
    check("algolia", "search.response", ALGOLIA_SEARCH)
    check("algolia", "multi.response", {"results": [ALGOLIA_SEARCH]})
    check("algolia", "facet_values.response", {
        "facetHits": [{"value": "Mobile phones", "highlighted": "<em>Mob</em>ile phones",
                       "count": 507}], "exhaustiveFacetsCount": True, "processingTimeMS": 1})
    check("algolia", "error.response", {"message": "Invalid Application-Id or API-Key"})


def test_algolia_wrong_answers_are_refused() -> None:
    assert problems("algolia", "search.response", {**ALGOLIA_SEARCH, "nbHits": "one"})
    bad_hit = {**ALGOLIA_HIT, "_highlightResult": {"name": {
        **ALGOLIA_HIT["_highlightResult"]["name"], "matchLevel": "most"}}}
    assert problems("algolia", "search.response", {**ALGOLIA_SEARCH, "hits": [bad_hit]})
    assert problems("algolia", "facet_values.response", {
        "facetHits": [{"value": "x", "highlighted": "x", "count": 1, "cnt": 1}],
        "exhaustiveFacetsCount": True})
    assert problems("algolia", "multi.response", {"results": [ALGOLIA_SEARCH],
                                                  "resluts": []})


def test_hits_per_page_zero_is_the_one_tolerated_deviation() -> None:
    facets_only = {**ALGOLIA_SEARCH, "hits": [], "hitsPerPage": 0, "nbPages": 0}
    check("algolia", "search.response", facets_only)
    check("algolia", "multi.response", {"results": [facets_only]})
    assert problems("algolia", "search.response", {**facets_only, "hitsPerPage": -1})
    assert problems("algolia", "search.response", {**facets_only, "hitsPerPage": 1001})


# ---------------------------------------------------------------- Meilisearch

def test_meilisearch_documented_bodies_are_accepted() -> None:
    """The reference's examples, their string values quoted: the filter grammar of the
    tests reads strings quoted, as searchport always writes them."""
    path = "/indexes/movies/search"
    assert not meili_problems("POST", path, {"q": "shifu", "filter": "genres = \"action\"",
                                             "limit": 5})
    assert not meili_problems("POST", path, {"q": "", "filter": [
        ["genres = \"Horror\"", "genres = \"Mystery\""], "director = \"Jordan Peele\""],
        "facets": ["genres"], "sort": ["release_date:desc"]})
    assert not meili_problems("POST", "/indexes/books/facet-search",
                              {"facetQuery": "c", "facetName": "genres"})
    assert not meili_problems("POST", "/multi-search", {"queries": [
        {"indexUid": "movies", "q": "pooh", "limit": 5},
        {"indexUid": "books", "q": "Adventures", "limit": 5}]})


def test_meilisearch_wrong_bodies_and_filters_are_refused() -> None:
    path = "/indexes/movies/search"
    assert meili_problems("POST", path, {"q": "x", "limitt": 5})
    assert meili_problems("POST", path, {"q": "x", "limit": "5"})
    assert meili_problems("POST", path, {"q": "x", "matchingStrategy": "some"})
    assert meili_problems("POST", path, {"filter": "genres = (action"})
    assert meili_problems("POST", path, {"filter": ["year >"]})
    assert meili_problems("POST", "/multi-search", {"queries": [{"q": "no index uid"}]})
    assert meili_problems("POST", "/indexes/books/facet-search", {"facetQuery": "c"})


# ---------------------------------------------------------------- the vendored files

@pytest.mark.parametrize("spec", SPECS)
def test_every_vendored_specification_says_where_it_comes_from(spec: str) -> None:
    source = document(spec)["source"]
    assert source["licence"]
    if spec != "meilisearch":
        assert len(source["commit"]) == 40 and source["repository"].startswith("https://")


def test_checking_a_body_is_fast() -> None:
    """Validators are built once a process; a body costs milliseconds, not seconds."""
    body = ELASTIC_REQUESTS[3]
    for engine in ELASTIC:
        check(engine, "search.request", body)
    started = time.perf_counter()
    for _ in range(20):
        for engine in ELASTIC:
            check(engine, "search.request", body)
    assert time.perf_counter() - started < 2.0
