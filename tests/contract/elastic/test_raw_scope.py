"""A raw query under a key with forced filters, on Elasticsearch and OpenSearch: allowed
only when the key says ``rawQuery: true``, and then sent as ``bool.must`` [the query] with
``bool.filter`` [the forced filters] (query DSL reference, "Boolean query"), so every hit
and every aggregation bucket stays inside them; what could read past the query is a 403
before any engine traffic. The handle's own guards (rawQueryDeny) still apply."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import EngineDouble, EsApp, city_yaml

Json = dict[str, Any]
MASTER, TENANT, NARROW = "master-1", "tenant-2", "narrow-3"
KEYS = f"""\
apiKey: {MASTER}
keys:
  tenant: {{key: {TENANT}, filters: {{cities: {{region: Europe}}}}, rawQuery: true}}
  narrow: {{key: {NARROW}, filters: {{cities: {{region: Europe}}}}}}
"""
# region is an alias of the keyword field continent (city_yaml): one value is a term query,
# inside the bool.filter of the group the key's filters travel in
FORCED = {"bool": {"filter": [{"term": {"continent": "Europe"}}]}}


@pytest.fixture
def app(engine: str, es_app: Callable[..., EsApp]) -> Iterator[EsApp]:
    double = EngineDouble(engine)
    double.on("POST", "/cities/_search", (200, es.empty_search()))
    yield es_app(KEYS + city_yaml(engine), double)


def post(app: EsApp, body: Any, key: str) -> httpx.Response:
    return app.post("/cities/query", content=json.dumps(body),
                    headers={"Content-Type": "application/json",
                             "Authorization": f"Bearer {key}"})


def test_the_query_is_wrapped_in_the_forced_filters(app: EsApp) -> None:
    query = {"bool": {"should": [{"match": {"name": "paris"}},
                                 {"term": {"continent": "Asia"}}]}}
    body = {"query": query, "size": 5, "aggs": {"by": {"terms": {"field": "continent"}}}}
    assert post(app, body, TENANT).status_code == 200
    sent = app.last_search().body
    assert sent == {**body, "query": {"bool": {"must": [query], "filter": [FORCED]}}}


def test_a_body_without_a_query_matches_all_inside_the_filters(app: EsApp) -> None:
    assert post(app, {"size": 0}, TENANT).status_code == 200
    assert app.last_search().body == {
        "size": 0, "query": {"bool": {"must": [{"match_all": {}}], "filter": [FORCED]}}}


def test_an_unrestricted_key_sends_the_body_unchanged(app: EsApp) -> None:
    # the suggestion's text at the top of ``suggest``: OpenSearch's specification refuses it
    # beside the suggester kind (docs/engine-specifications.md)
    body = {"query": {"match_all": {}}, "suggest": {"text": "x", "s": {"term": {
        "field": "name"}}}}
    assert post(app, body, MASTER).status_code == 200
    assert app.last_search().body == body


ESCAPES: dict[str, Json] = {
    "a global aggregation": {"aggs": {"all": {"global": {}, "aggs": {
        "n": {"value_count": {"field": "name"}}}}}},
    "a nested global aggregation": {"aggs": {"t": {"terms": {"field": "continent"},
                                                   "aggs": {"g": {"global": {}}}}}},
    "significant terms": {"aggs": {"s": {"significant_terms": {"field": "continent"}}}},
    "empty buckets": {"aggs": {"t": {"terms": {"field": "continent", "min_doc_count": 0}}}},
    "a suggester": {"suggest": {"s": {"text": "pari", "term": {"field": "name"}}}},
    "a knn search": {"knn": {"field": "v", "query_vector": [1.0], "k": 1,
                             "num_candidates": 1}},
    "a retriever": {"retriever": {"standard": {"query": {"match_all": {}}}}},
    "a terms lookup of its own index": {"query": {"terms": {"name": {
        "index": "cities", "id": "secret", "path": "name"}}}},
    "a join query": {"query": {"has_child": {"type": "c", "query": {"match_all": {}}}}},
}


@pytest.mark.parametrize("case", list(ESCAPES))
def test_what_could_read_past_the_filters_is_refused(app: EsApp, case: str) -> None:
    response = post(app, ESCAPES[case], TENANT)
    assert response.status_code == 403, response.text
    assert "outside the filters this API key forces" in response.json()["error"]
    assert app.data_requests() == []


def test_the_handles_deny_list_still_applies(app: EsApp) -> None:
    body = {"query": {"script": {"script": "true"}}}
    response = post(app, body, TENANT)
    assert response.status_code == 403
    assert "rawQueryDeny" in response.json()["error"]
    assert app.data_requests() == []


def test_a_key_without_raw_queries_is_refused_naming_why(app: EsApp) -> None:
    response = post(app, {"query": {"match_all": {}}}, NARROW)
    assert response.status_code == 403
    assert response.json()["error"].startswith("This API key may not run raw queries")
    assert app.data_requests() == []
