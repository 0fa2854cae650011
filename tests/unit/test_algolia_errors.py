"""Error bodies on the Algolia routes through the real app over fakes: ``{"error": s}`` plus
Algolia's ``"message": s`` and ``"status"`` (the ``algoliasearch`` clients show ``message``),
for every status and wherever the error is built (auth, rate limit, size guards, the
exception handlers, a failing multi-query), while the other routes keep ``{"error": s}``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from litestar.testing import TestClient

from searchport.domain.config import Config, LimitsConfig, RateLimitConfig, RateRule
from searchport.domain.errors import EngineTimeout, EngineUnavailable
from searchport.entrypoints.http.app import create_app
from searchport.entrypoints.http.error_bodies import error_body, is_algolia_path
from searchport.entrypoints.http.http_errors import ALGOLIA_READ_ONLY, ALGOLIA_UNSUPPORTED
from tests.fakes import FailingEngine, FakeEngine, fake_container
from tests.unit.test_algolia_http import engines, settings
from tests.unit.test_http_contract import KEY

QUERY = "/1/indexes/cities/query"
QUERIES = "/1/indexes/*/queries"


def algolia(sentence: str, status: int, **extra: Any) -> dict[str, Any]:
    return {"error": sentence, "message": sentence, "status": status, **extra}


@contextmanager
def app(config: Config, found: dict[str, FakeEngine] | None = None) -> Iterator[TestClient[Any]]:
    with TestClient(create_app(fake_container(config, found or engines()))) as client:
        yield client


def assert_body(response: Any, status: int, body: dict[str, Any]) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["cache-control"] == "no-store"
    assert response.json() == body


# ------------------------------------------------------------------------------ the helper


@pytest.mark.parametrize(("path", "algolia_route"), [
    ("/1/indexes/*/queries", True), ("/1/indexes/cities/query", True),
    ("/1/indexes/cities/facets/region/query", True), ("/cities/instantsearch", True),
    ("/cities/search", False), ("/cities/query", False), ("/1/indexes", True),
    ("/1/keys", True),
    ("/indexes", False), ("/health", False),
])
def test_the_helper_decides_by_path(path: str, algolia_route: bool) -> None:
    assert is_algolia_path(path) is algolia_route
    expected = (b'{"error":"No","message":"No","status":404}' if algolia_route
                else b'{"error":"No"}')
    assert error_body(404, "No", path) == expected


def test_the_helper_keeps_details_and_request_id() -> None:
    assert error_body(400, "Bad", QUERY, details=["a", "b"], request_id="r1") == (
        b'{"error":"Bad","message":"Bad","status":400,"details":["a","b"],"requestId":"r1"}')
    assert error_body(400, "Bad", "/cities/search", details=["a"], request_id="r1") == (
        b'{"error":"Bad","details":["a"],"requestId":"r1"}')


# ------------------------------------------------------------------------ over HTTP, by status


def test_400_bad_input() -> None:
    with app(settings()) as client:
        not_json = client.post(QUERIES, content=b"{")
        bad_value = client.post(QUERY, json={"hitsPerPage": "x"})
        search = client.get("/cities/search?page=x")
    assert_body(not_json, 400, algolia("The request body is not valid JSON", 400))
    sentence = bad_value.json()["error"]
    assert "hitsPerPage" in sentence
    assert_body(bad_value, 400, algolia(sentence, 400))
    assert_body(search, 400, {"error": "Invalid value for parameter 'page': expected `int`, "
                                       "got `str`"})


LONG = "x" * 2049  # one character past the cap of q on /search


@pytest.mark.parametrize(("path", "body", "name"), [
    (QUERY, {"query": LONG}, "query"),
    (QUERY, {"params": f"query={LONG}"}, "query"),
    (QUERIES, {"requests": [{"indexName": "cities", "query": "ok"},
                            {"indexName": "towns", "params": f"query={LONG}"}]}, "query"),
    ("/cities/instantsearch", {"requests": [{"indexName": "cities", "query": LONG}]}, "query"),
    ("/1/indexes/cities/facets/region/query", {"facetQuery": LONG}, "facetQuery"),
    ("/1/indexes/cities/facets/region/query", {"query": LONG}, "query"),
    ("/1/indexes/cities/browse", {"query": LONG}, "query"),
])
def test_400_a_query_past_the_cap_of_search(path: str, body: dict[str, Any], name: str) -> None:
    with app(settings()) as client:
        refused = client.post(path, json=body)
        search = client.get("/cities/search", params={"q": LONG})
        fits = client.post(path, json=json.loads(json.dumps(body).replace(LONG, LONG[1:])))
    sentence = f"Invalid value for parameter '{name}': expected `str` of length <= 2048"
    assert_body(refused, 400, algolia(sentence, 400))
    assert_body(search, 400, {"error": sentence.replace(f"'{name}'", "'q'")})
    assert fits.status_code == 200, fits.text


@pytest.mark.parametrize("path", [QUERIES, QUERY, "/cities/instantsearch",
                                  "/1/indexes/cities/facets/region/query"])
def test_401_wrong_or_missing_key(path: str) -> None:
    with app(settings(api_key=KEY)) as client:
        missing = client.post(path, json={})
        wrong = client.post(path, json={}, headers={"x-algolia-api-key": "wrong"})
        in_query = client.post(f"{path}?x-algolia-api-key=wrong", json={})
        search = client.get("/cities/search")
    for refused in (missing, wrong, in_query):
        assert_body(refused, 401, algolia("Unauthorized", 401))
        assert refused.headers["www-authenticate"] == 'Bearer realm="searchport"'
    assert_body(search, 401, {"error": "Unauthorized"})
    assert search.content == b'{"error":"Unauthorized"}'


def test_404_unknown_handle_in_a_multi_query_and_unknown_route() -> None:
    with app(settings()) as client:
        multi = client.post(QUERIES, json={"requests": [{"indexName": "cities"},
                                                        {"indexName": "nope"}]})
        one = client.post("/1/indexes/nope/query", json={})
        instantsearch = client.post("/nope/instantsearch", json={"requests": [{}]})
        route = client.post("/1/indexes/cities/nothing/more", json={})
        write = client.post("/1/indexes/cities/some-object-id", json={})
        search = client.get("/nope/search")
    for response in (multi, one, instantsearch):
        assert_body(response, 404, algolia('Index "nope" not found', 404))
    assert_body(route, 404, algolia(ALGOLIA_UNSUPPORTED, 404))
    assert_body(write, 405, algolia(ALGOLIA_READ_ONLY, 405))  # GET reads it
    assert_body(search, 404, {"error": 'Index "nope" not found'})


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/1/indexes/cities/batch"),              # saveObjects, deleteObjects...
    ("PUT", "/1/indexes/cities/2988507"),             # addOrUpdateObject
    ("DELETE", "/1/indexes/cities"),                  # deleteIndex
    ("PUT", "/1/indexes/cities/settings"),            # setSettings
    ("POST", "/1/indexes/cities/clear"),              # clearObjects
    ("POST", "/1/indexes/cities/2988507/partial"),    # partialUpdateObject
    ("GET", "/1/keys"),                               # listApiKeys
    ("POST", "/1/indexes/cities/synonyms/search"),    # searchSynonyms
])
def test_algolia_calls_searchport_does_not_answer_say_so(method: str, path: str) -> None:
    """The stock clients show ``message``: it says searchport does not do this call and never
    writes, instead of a bare "No such route" (404: no route; 405: a route read by another
    method, as GET reads /1/indexes/{index}/settings)."""
    with app(settings()) as client:
        response = client.request(method, path, json={})
    status = response.status_code
    assert status in (404, 405)
    expected = ALGOLIA_READ_ONLY if status == 405 else ALGOLIA_UNSUPPORTED
    assert_body(response, status, algolia(expected, status))
    assert "read-only" in expected and "getObjects" in expected


def test_405_wrong_method() -> None:
    with app(settings()) as client:
        queries = client.get(QUERIES)
        instantsearch = client.get("/cities/instantsearch")
        search = client.delete("/cities/search")
    assert_body(queries, 405, algolia("Method not allowed on this route", 405))
    assert_body(instantsearch, 405, algolia("Method not allowed on this route", 405))
    assert_body(search, 405, {"error": "Method not allowed on this route"})


def test_413_body_too_large() -> None:
    big = b'{"query":"' + b"x" * 2000 + b'"}'
    with app(settings(limits=LimitsConfig(max_body_bytes=1024))) as client:
        queries = client.post(QUERIES, content=b'{"requests":[' + big + b"]}")
        query = client.post(QUERY, content=big)
        raw = client.post("/cities/query", content=big)
    assert_body(queries, 413, algolia("The request body is too large", 413))
    assert_body(query, 413, algolia("The request body is too large", 413))
    assert_body(raw, 413, {"error": "The request body is too large"})


def test_414_query_string_too_long() -> None:
    long = "?x-algolia-agent=" + "x" * 300
    sentence = "The query string is longer than 200 bytes; send fewer or shorter parameters"
    with app(settings(limits=LimitsConfig(max_query_bytes=200))) as client:
        query = client.post(QUERY + long, json={})
        search = client.get("/cities/search" + long)
    assert_body(query, 414, algolia(sentence, 414))
    assert_body(search, 414, {"error": sentence})


def test_429_rate_limited() -> None:
    rule = RateLimitConfig(per_ip=RateRule(limit=1, window=60))
    with app(settings(rate_limit=rule)) as client:
        assert client.post(QUERY, json={}).status_code == 200
        query = client.post(QUERY, json={})
        search = client.get("/cities/search")
    for refused in (query, search):
        wait = int(refused.headers["retry-after"])
        assert 1 <= wait <= 60
        sentence = f"Too many requests: try again in {wait} second{'s' if wait > 1 else ''}"
        body = algolia(sentence, 429) if refused is query else {"error": sentence}
        assert_body(refused, 429, body)


@pytest.mark.parametrize(("error", "status"), [
    (EngineUnavailable("The engine cannot be reached"), 502),
    (EngineTimeout("The engine did not answer in time"), 504),
])
def test_502_504_a_failing_engine(error: Exception, status: int) -> None:
    found = engines()
    found["towns"] = FailingEngine(error)
    with app(settings(), found) as client:
        multi = client.post(QUERIES, json={"requests": [{"indexName": "cities"},
                                                        {"indexName": "towns"}]})
        one = client.post("/1/indexes/towns/query", json={})
        facet = client.post("/1/indexes/towns/facets/region/query", json={})
        instantsearch = client.post("/towns/instantsearch", json={"requests": [{}]})
        search = client.get("/towns/search")
    for response in (multi, one, facet, instantsearch):
        assert_body(response, status, algolia(str(error), status))
    assert_body(search, status, {"error": str(error)})


def test_500_a_bug_keeps_the_request_id() -> None:
    found = engines()
    found["towns"] = FailingEngine(RuntimeError("secret at http://internal:9200"))
    sentence = "Internal server error; quote the request id when reporting it"
    with app(settings(), found) as client:
        query = client.post("/1/indexes/towns/query", json={})
        search = client.get("/towns/search")
    assert_body(query, 500, algolia(sentence, 500, requestId=query.headers["x-request-id"]))
    assert_body(search, 500, {"error": sentence, "requestId": search.headers["x-request-id"]})


# ------------------------------------------------------------------------------ OpenAPI


def test_openapi_documents_the_algolia_error_fields() -> None:
    with app(settings()) as client:
        doc = client.get("/openapi/json").json()
    schema = doc["components"]["schemas"]["AlgoliaErrorBody"]
    assert set(schema["required"]) == {"error", "message", "status"}
    assert schema["properties"]["status"]["type"] == "integer"
    paths = doc["paths"]
    for path in ("/1/indexes/*/queries", "/1/indexes/{handle}/query",
                 "/1/indexes/{handle}/facets/{facet}/query", "/{handle}/instantsearch"):
        responses = paths[path]["post"]["responses"]
        errors = {code for code in responses if int(code) >= 400}
        assert errors == {"400", "401", "404", "413", "414", "429", "502", "504"}, path
        for code in errors:
            ref = responses[code]["content"]["application/json"]["schema"]["$ref"]
            assert ref == "#/components/schemas/AlgoliaErrorBody", (path, code)
    search = paths["/{handle}/search"]["get"]["responses"]["400"]
    assert search["content"]["application/json"]["schema"]["$ref"] == \
        "#/components/schemas/ErrorBody"
