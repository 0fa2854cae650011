"""``POST /:handle/query`` reads the handle's own indices only (docs/http-api.md).

The constructs below are those of the query DSL reference that make the engine fetch a
document from an index they name (terms query "terms lookup", more_like_this "like",
percolate "percolating an existing document", geo_shape/shape "pre-indexed shape", runtime
field type ``lookup``), plus the two that hide the query they run (the ``wrapper`` query,
the phrase suggester's ``collate`` template). Naming another index is a 400 before any
engine traffic; naming the configured index passes the body on unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.adapters.elastic.raw_query import scoped_body
from searchport.domain.errors import InvalidRequest
from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import EngineDouble, EsApp, city_yaml
from tests.contract.scripted import OffSpec

Json = dict[str, Any]
OWN = "this handle's own index"


def post(app: EsApp, body: Any) -> httpx.Response:
    return app.post("/cities/query", content=json.dumps(body),
                    headers={"Content-Type": "application/json"})


# ---------------------------------------------------------------- what reads an index


def clauses(index: str) -> dict[str, tuple[Json, str]]:
    """Query clauses that read a document of ``index``, with the construct's name."""
    return {
        "terms lookup": ({"terms": {"continent": {"index": index, "id": "ceo",
                                                  "path": "amount"}}}, "a terms lookup"),
        "terms lookup with routing": ({"terms": {"boost": 2, "country": {
            "index": index, "id": "1", "path": "c", "routing": "r"}}}, "a terms lookup"),
        "mlt like": ({"more_like_this": {"fields": ["name"], "min_term_freq": 1, "like": [
            "free text", {"_index": index, "_id": "1"}]}}, "a more_like_this document"),
        "mlt unlike": ({"more_like_this": {"fields": ["name"], "like": "paris",
                                           "unlike": {"_index": index, "_id": "2"}}},
                       "a more_like_this document"),
        "percolate": ({"percolate": {"field": "query", "index": index, "id": "2"}},
                      "a percolate query of a stored document"),
        "geo_shape": ({"geo_shape": {"location": {"indexed_shape": {
            "index": index, "id": "deu", "path": "location"}}}}, "an indexed shape"),
        "shape": ({"shape": {"geometry": {"indexed_shape": {
            "index": index, "id": "1", "path": "geometry"}}}}, "an indexed shape"),
    }


def positions() -> dict[str, Callable[[Json], Json]]:
    """Every place a query clause may sit in a search body, and one the DSL does not have
    yet (a future compound query must not hide a lookup)."""
    return {
        "query": lambda c: {"query": c},
        "bool filter": lambda c: {"query": {"bool": {"filter": [{"match_all": {}}, c]}}},
        "bool must_not": lambda c: {"query": {"bool": {"must_not": c}}},
        "post_filter": lambda c: {"post_filter": c},
        "nested": lambda c: {"query": {"nested": {"path": "landmarks", "query": c}}},
        "function_score": lambda c: {"query": {"function_score": {
            "query": {"match_all": {}}, "functions": [{"filter": c, "weight": 2}]}}},
        "aggregation filter": lambda c: {"size": 0, "aggs": {"a": {
            "filter": c, "aggs": {"b": {"terms": {"field": "country"}}}}}},
        "filters aggregation": lambda c: {"aggs": {"a": {"filters": {"filters": {"x": c}}}}},
        "knn filter": lambda c: {"knn": {"field": "v", "query_vector": [0.1, 0.2], "k": 3,
                                         "num_candidates": 10, "filter": [c]}},
        "retriever": lambda c: {"retriever": {"rrf": {"retrievers": [
            {"standard": {"query": c}}]}}},
        "rescore": lambda c: {"rescore": {"window_size": 5, "query": {"rescore_query": c}}},
        "highlight_query": lambda c: {"highlight": {"fields": {"*": {}},
                                                    "highlight_query": c}},
        "unknown compound": lambda c: {"query": {"some_future_query": {"parts": [[c]]}}},
    }


def lookup_field(index: Any) -> Json:
    return {"runtime_mappings": {"salary": {
        "type": "lookup", "target_index": index, "input_field": "name",
        "target_field": "name", "fetch_fields": ["amount"]}}, "fields": ["salary"]}


CLAUSES = list(clauses("x"))
POSITIONS = list(positions())


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("construct", CLAUSES)
def test_a_raw_query_reading_another_index_is_a_400_without_engine_traffic(
    cities: EsApp, construct: str, position: str
) -> None:
    clause, name = clauses("salaries")[construct]
    response = post(cities, positions()[position](clause))
    assert response.status_code == 400, response.text
    message = response.json()["error"]
    assert message.startswith(f'The raw query reads index "salaries" through {name} (at ')
    assert message.endswith(f"); a raw query may only read {OWN}")
    assert cities.data_requests() == []


@pytest.mark.parametrize("construct", CLAUSES)
def test_a_raw_query_reading_its_own_index_passes_unchanged(
    cities: EsApp, double: EngineDouble, construct: str
) -> None:
    # a raw query is the caller's body, here one written for Elasticsearch's own features
    # (runtime_mappings, pinned, indexed shapes): passed through, not held to a specification
    double.search(OffSpec((200, es.empty_search())))
    body = positions()["bool filter"](clauses("cities")[construct][0])
    response = post(cities, body)
    assert response.status_code == 200, response.text
    assert cities.last_search().body == body


def allowing_runtime_fields(engine: str, es_app: Callable[..., EsApp]) -> EsApp:
    """A handle whose raw queries may use runtime fields and scripts (``rawQueryDeny: []``)."""
    double = EngineDouble(engine)
    # a raw query is the caller's body, here one written for Elasticsearch's own features
    # (runtime_mappings, pinned, indexed shapes): passed through, not held to a specification
    double.on("POST", "/cities/_search", OffSpec((200, es.empty_search())))
    return es_app(city_yaml(engine, settings="rawQueryDeny: []"), double)


def test_a_lookup_runtime_field(engine: str, es_app: Callable[..., EsApp]) -> None:
    cities = allowing_runtime_fields(engine, es_app)
    assert post(cities, lookup_field("cities")).status_code == 200
    assert cities.last_search().body == lookup_field("cities")
    for index in ("salaries", None, ["cities"]):
        response = post(cities, lookup_field(index))
        assert response.status_code == 400
        named = 'index "salaries"' if index == "salaries" else "an index"
        assert response.json()["error"] == (
            f"The raw query reads {named} through a lookup runtime field "
            f"(at runtime_mappings.salary); a raw query may only read {OWN}"
        )
    assert len(cities.data_requests()) == 1


def test_an_indexed_shape_without_an_index_reads_the_shapes_index(cities: EsApp) -> None:
    """geo_shape query reference: ``index`` of a pre-indexed shape defaults to ``shapes``."""
    body = {"query": {"geo_shape": {"location": {"indexed_shape": {"id": "deu"}}}}}
    response = post(cities, body)
    assert response.status_code == 400
    assert response.json()["error"] == (
        'The raw query reads index "shapes" through an indexed shape '
        f"(at query.geo_shape.location.indexed_shape); a raw query may only read {OWN}"
    )


@pytest.mark.parametrize(("body", "construct", "where"), [
    ({"query": {"wrapper": {"query": "eyJ0ZXJtIiA6IHsgInVzZXIuaWQiIDogImtpbWNoeSIgfX0="}}},
     "a wrapper query", "query.wrapper"),
    ({"query": {"bool": {"should": [{"wrapper": {"query": "e30="}}]}}},
     "a wrapper query", "query.bool.should[0].wrapper"),
    ({"suggest": {"text": "x", "s": {"phrase": {"field": "name.shingle", "collate": {
        "query": {"source": {"match": {"{{field}}": "{{suggestion}}"}}},
        "params": {"field": "name"}}}}}},
     "a collate template", "suggest.s.phrase.collate"),
    ({"suggest": {"s": {"text": "x", "phrase": {"field": "f", "collate": {
        "query": {"id": "stored-template"}}}}}},
     "a collate template", "suggest.s.phrase.collate"),
])
def test_constructs_that_hide_their_query_are_refused(
    cities: EsApp, body: Json, construct: str, where: str
) -> None:
    response = post(cities, body)
    assert response.status_code == 400
    assert response.json()["error"] == (
        f"The raw query contains {construct} (at {where}), which hides the query it runs; "
        "send the query itself"
    )
    assert cities.data_requests() == []


@pytest.mark.parametrize("body", [
    # only pick among the documents searched: no document of another index is read
    {"query": {"pinned": {"docs": [{"_index": "salaries", "_id": "1"}],
                          "organic": {"match_all": {}}}}},
    {"query": {"term": {"_index": "salaries"}}},
    {"indices_boost": [{"salaries": 2.0}], "query": {"match_all": {}}},
    # field names and aggregation options that look like the constructs' keys
    {"query": {"term": {"index": "salaries"}}},
    {"query": {"bool": {"filter": [{"terms": {"index": ["a", "b"]}},
                                   {"match": {"percolate": "x"}},
                                   {"term": {"target_index": {"value": "salaries"}}}]}}},
    {"aggs": {"t": {"terms": {"field": "country", "order": {"_key": "asc"},
                              "include": {"partition": 0, "num_partitions": 4}}}}},
    {"query": {"more_like_this": {"fields": ["name"], "like": [{"_id": "1"}, "text"]}}},
    {"query": {"geo_shape": {"location": {"shape": {"type": "point",
                                                    "coordinates": [2.3, 48.8]}}}}},
])
def test_bodies_that_read_no_other_index_pass_unchanged(
    cities: EsApp, double: EngineDouble, body: Json
) -> None:
    # a raw query is the caller's body, here one written for Elasticsearch's own features
    # (runtime_mappings, pinned, indexed shapes): passed through, not held to a specification
    double.search(OffSpec((200, es.empty_search())))
    response = post(cities, body)
    assert response.status_code == 200, response.text
    assert cities.last_search().body == body


def test_a_script_runtime_field_reads_no_other_index(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    cities = allowing_runtime_fields(engine, es_app)
    body = {"runtime_mappings": {"day": {"type": "keyword", "script": "emit('x')"}}}
    assert post(cities, body).status_code == 200
    assert cities.last_search().body == body


# ---------------------------------------------------------------- denied features


SCRIPTED: dict[str, tuple[Json, str]] = {
    "script query": ({"query": {"bool": {"filter": {"script": {"script": {
        "source": "doc['population'].value > 1"}}}}}}, "query.bool.filter.script"),
    "script_score": ({"query": {"script_score": {"query": {"match_all": {}}, "script": {
        "source": "_score * 2"}}}}, "query.script_score.script"),
    "script sort": ({"sort": [{"_script": {"type": "number", "script": "1"}}]},
                    "sort[0]._script"),
    "script_fields": ({"script_fields": {"x": {"script": "1"}}}, "script_fields"),
    "scripted_metric": ({"aggs": {"m": {"scripted_metric": {"map_script": "state.x = 1"}}}},
                        "aggs.m.scripted_metric"),
    "bucket_script": ({"aggs": {"t": {"terms": {"field": "country"}, "aggs": {"b": {
        "bucket_script": {"buckets_path": {}, "script": "1"}}}}}},
                      "aggs.t.aggs.b.bucket_script.script"),
}


@pytest.mark.parametrize("case", list(SCRIPTED))
def test_scripts_are_denied_by_default_with_a_403_naming_them(
    cities: EsApp, case: str
) -> None:
    body, where = SCRIPTED[case]
    response = post(cities, body)
    assert response.status_code == 403, response.text
    assert response.json()["error"] == (
        f"The raw query uses scripts (at {where}), which this handle does not allow "
        "(rawQueryDeny)"
    )
    assert cities.data_requests() == []


def test_runtime_fields_are_denied_by_default(cities: EsApp) -> None:
    response = post(cities, {"runtime_mappings": {"day": {"type": "keyword"}},
                             "query": {"match_all": {}}})
    assert response.status_code == 403
    assert response.json()["error"] == (
        "The raw query uses runtime fields (at runtime_mappings), which this handle does not "
        "allow (rawQueryDeny)"
    )
    assert cities.data_requests() == []


def test_the_deny_list_is_per_handle(engine: str, es_app: Callable[..., EsApp]) -> None:
    double = EngineDouble(engine)
    # a raw query is the caller's body, here one written for Elasticsearch's own features
    # (runtime_mappings, pinned, indexed shapes): passed through, not held to a specification
    double.on("POST", "/cities/_search", OffSpec((200, es.empty_search())))
    only_scripts = es_app(city_yaml(engine, settings="rawQueryDeny: [scripts]"), double)
    runtime = {"runtime_mappings": {"day": {"type": "keyword"}}}
    assert post(only_scripts, runtime).status_code == 200
    assert post(only_scripts, SCRIPTED["script query"][0]).status_code == 403
    everything = allowing_runtime_fields(engine, es_app)
    for body, _ in SCRIPTED.values():
        assert post(everything, body).status_code == 200
        assert everything.last_search().body == body


@pytest.mark.parametrize(("index_name", "allowed", "refused"), [
    (["cities", "towns"], ["cities", "towns"], ["villages", "cities,towns", "*"]),
    ("cities,towns", ["cities", "towns"], ["cities,towns", "town*"]),
    ("logs-*", ["logs-*"], ["logs-2024", "cities"]),
])
def test_with_several_indices_a_lookup_may_read_any_of_them(
    engine: str, es_app: Callable[..., EsApp], index_name: list[str] | str,
    allowed: list[str], refused: list[str],
) -> None:
    path = index_name if isinstance(index_name, str) else ",".join(index_name)
    double = EngineDouble(engine, index=path)
    double.on("POST", f"/{path}/_search", (200, es.empty_search()))
    app = es_app(city_yaml(engine, index_name=index_name), double)
    for index in allowed:
        body = {"query": clauses(index)["terms lookup"][0]}
        assert post(app, body).status_code == 200
        assert app.last_search().body == body
    for index in refused:
        response = post(app, {"query": clauses(index)["terms lookup"][0]})
        assert response.status_code == 400
        assert f'reads index "{index}" through a terms lookup' in response.json()["error"]
    assert len(app.data_requests()) == len(allowed)


# ---------------------------------------------------------------- properties


TRIGGERS = {"terms", "percolate", "indexed_shape", "more_like_this", "runtime_mappings",
            "wrapper", "collate"}
# keys of harmless bodies: names that matter inside a construct, never one that opens it
KEYS = st.sampled_from(["query", "bool", "filter", "must", "index", "_index", "id", "path",
                        "like", "target_index", "type", "aggs", "field", "x", "lookup"])
SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.sampled_from(
    ["salaries", "cities", "lookup"])
TREES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(KEYS, inner, max_size=3), max_leaves=20)
BODIES = st.dictionaries(KEYS.filter(lambda k: k not in ("index", "_index")), TREES,
                         max_size=4)
FOREIGN = [c for c, _ in clauses("salaries").values()] + [
    {"runtime_mappings": {"f": {"type": "lookup", "target_index": "salaries"}}},
    {"wrapper": {"query": "e30="}},
    {"collate": {"query": {"source": "{}"}}},
]


def containers(node: Any) -> list[Any]:
    found = [node] if isinstance(node, dict | list) else []
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) \
        else []
    for child in children:
        found += containers(child)
    return found


@settings(max_examples=500, deadline=None)
@given(BODIES)
def test_a_body_without_the_constructs_passes_whole(body: Json) -> None:
    assert not TRIGGERS & {k for c in containers(body) if isinstance(c, dict) for k in c}
    assert scoped_body(body, frozenset({"cities"})) == body


@settings(max_examples=500, deadline=None)
@given(BODIES, st.sampled_from(FOREIGN), st.data())
def test_a_construct_reading_another_index_is_found_anywhere(
    body: Json, construct: Json, data: st.DataObject
) -> None:
    places = containers(body)
    place = data.draw(st.sampled_from(places), label="place")
    if isinstance(place, list):
        place.insert(data.draw(st.integers(0, len(place))), construct)
    else:
        place["inserted"] = construct
    with pytest.raises(InvalidRequest):
        scoped_body(body, frozenset({"cities"}))


def test_top_level_retargeting_keys_are_removed_whatever_they_hold() -> None:
    body = {"index": {"terms": {"f": {"index": "salaries"}}}, "indices": ["a"], "_index": "b",
            "size": 1}
    assert scoped_body(body, frozenset({"cities"})) == {"size": 1}
