"""The HTTP contract: routes, bodies, statuses, auth and headers, over fakes of the ports.

The app is the real one (``create_app`` over the real container); only the container's two
seams, the catalog's engines and the cache, are fakes (``tests.fakes.fake_container``).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from searchport import __version__
from searchport.domain.config import Config, DefaultsConfig, FieldConfig, IndexConfig, LimitsConfig
from searchport.domain.errors import EngineTimeout, EngineUnavailable
from searchport.domain.results import EngineResult, FacetValue, Hit
from searchport.entrypoints.http.app import create_app
from tests.fakes import FailingEngine, FakeCache, FakeEngine, fake_container

KEY = "test-key-1"
OTHER_KEY = "test-key-2"
GENERATED_ID = re.compile(r"^[0-9a-f]{16}$")
SERVER_TIMING = re.compile(r"^engine;dur=\d+\.\d{2}, total;dur=\d+\.\d{2}$")
PUBLIC = "public, max-age=10, stale-while-revalidate=50"

FIELDS = {
    "name": FieldConfig(weight=3),
    "region": FieldConfig(field="continent"),
    "where": FieldConfig(field="location"),
}
HITS = [
    Hit(id=str(i), index="cities", score=10.0 - i,
        source={"name": f"City {i}", "continent": "Europe", "blurb": "lorem ipsum " * 20})
    for i in range(5)
]


def index(**settings: Any) -> IndexConfig:
    return IndexConfig(**{"engine": "tantivy", "path": "unused", "fields": FIELDS, **settings})


def config(**settings: Any) -> Config:
    settings.setdefault("indexes", {"cities": index(), "locked": index(raw_query=False)})
    return Config(**settings)


def engine() -> FakeEngine:
    return FakeEngine(
        result=EngineResult(
            hits=list(HITS), total=42,
            facets={"continent": [FacetValue(value="Asia", count=1),
                                  FacetValue(value="Europe", count=5)]},
        ),
        facet_values=[FacetValue(value="Europe", count=5), FacetValue(value="Eurasia", count=9)],
        documents={"1": HITS[1]},
    )


@contextmanager
def serve(
    settings: Config | None = None,
    engines: dict[str, FakeEngine] | None = None,
    cache: FakeCache | None = None,
) -> Iterator[TestClient[Any]]:
    settings = settings or config()
    engines = engines or {handle: engine() for handle in settings.indexes}
    app = create_app(fake_container(settings, engines, cache))
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def open_client() -> Iterator[TestClient[Any]]:
    with serve() as client:
        yield client


@pytest.fixture(scope="module")
def auth_client() -> Iterator[TestClient[Any]]:
    with serve(config(api_key=[KEY, OTHER_KEY])) as client:
        yield client


def bearer(key: str = KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def assert_error(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert isinstance(body.get("error"), str) and body["error"]
    assert set(body) <= {"error", "details", "requestId"}
    assert "Traceback" not in response.text
    return str(body["error"])


# -- routes and body shapes ----------------------------------------------------------------


def test_search(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/search", params={"q": "city", "facets": "region"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"hits", "totalHits", "page", "perPage", "totalPages", "facets",
                         "suggestions"}
    assert (body["totalHits"], body["page"], body["perPage"], body["totalPages"]) == (42, 1, 20, 3)
    assert body["hits"][0] == {
        "objectID": "0", "_index": "cities", "_score": 10.0, "_highlights": {},
        "name": "City 0", "region": "Europe", "blurb": "lorem ipsum " * 20,
    }
    assert body["facets"] == {"region": [{"value": "Europe", "count": 5},
                                         {"value": "Asia", "count": 1}]}
    assert body["suggestions"] == []


def test_search_with_histogram_and_geo_grid(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/search", params={
        "histogram": '{"name": 5}', "geoGrid": '{"field": "where", "precision": 2}'})
    assert response.status_code == 200
    body = response.json()
    assert body["histograms"] == {"name": []}
    assert body["geoClusters"] == []


@pytest.mark.parametrize(
    ("params", "page", "per_page"),
    [({"perPage": "1000"}, 1, 100), ({"perPage": "0"}, 1, 1), ({"page": "-3"}, 1, 20),
     ({"page": "2", "perPage": "7"}, 2, 7)],
)
def test_search_clamps_paging(
    open_client: TestClient[Any], params: dict[str, str], page: int, per_page: int
) -> None:
    body = open_client.get("/cities/search", params=params).json()
    assert (body["page"], body["perPage"]) == (page, per_page)


def test_facet_values(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/facets/region", params={"q": "eu", "maxValues": "1"})
    assert response.status_code == 200
    assert response.json() == {"field": "region", "values": [{"value": "Eurasia", "count": 9}]}


def test_autocomplete(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/autocomplete", params={"q": "ci", "facets": "region"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"hits", "totalHits", "facets"}
    assert body["totalHits"] == 42
    assert body["facets"] == {"region": [{"value": "Eurasia", "count": 9},
                                         {"value": "Europe", "count": 5}]}


def test_document(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/documents/1")
    assert response.status_code == 200
    assert response.json() == {"objectID": "1", "_index": "cities", "name": "City 1",
                               "region": "Europe", "blurb": "lorem ipsum " * 20}
    assert assert_error(open_client.get("/cities/documents/404"), 404) == "Document not found"


def test_document_id_with_a_slash() -> None:
    fake = engine()
    fake.documents["a/b"] = Hit(id="a/b", index="cities")
    with serve(engines={"cities": fake, "locked": engine()}) as client:
        assert client.get("/cities/documents/a%2Fb").json()["objectID"] == "a/b"


def test_mapping(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/mapping")
    assert response.status_code == 200
    assert response.json() == {"fake": {"mappings": {}}}


def test_raw_query(open_client: TestClient[Any]) -> None:
    response = open_client.post("/cities/query", content=b'{"size": 1, "query": {"x": 1}}')
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == {"echo": {"size": 1, "query": {"x": 1}}}


def test_raw_query_engine_rejection_is_a_400(open_client: TestClient[Any]) -> None:
    assert "bad" in assert_error(open_client.post("/cities/query", content=b'{"bad": 1}'), 400)


@pytest.mark.parametrize("body", [b"[]", b"not json", b"", b"42"])
def test_raw_query_needs_a_json_object(open_client: TestClient[Any], body: bytes) -> None:
    assert_error(open_client.post("/cities/query", content=body), 400)


def test_health(open_client: TestClient[Any]) -> None:
    response = open_client.get("/health")
    assert response.status_code == 200
    body = response.json()
    engines = body.pop("engines")
    assert body == {"status": "ok", "cache": "disabled", "version": __version__}
    # the engines' pings run in the background: "unknown" until the first one answers
    assert set(engines) == {"cities", "locked"}
    assert set(engines.values()) <= {"unknown", "ok"}
    deadline = time.monotonic() + 5
    while set(engines.values()) != {"ok"} and time.monotonic() < deadline:
        time.sleep(0.01)
        engines = open_client.get("/health").json()["engines"]
    assert engines == {"cities": "ok", "locked": "ok"}


def test_indexes(open_client: TestClient[Any]) -> None:
    response = open_client.get("/indexes")
    assert response.status_code == 200
    body = response.json()
    assert [(i["handle"], i["engine"]) for i in body["indexes"]] == [
        ("cities", "fake"), ("locked", "fake")
    ]
    for info in body["indexes"]:
        assert set(info) == {"handle", "engine", "capabilities"}
    assert body["indexes"][1]["capabilities"]["rawQuery"] is False


def test_openapi(open_client: TestClient[Any]) -> None:
    page = open_client.get("/openapi")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    document = open_client.get("/openapi/json")
    assert document.status_code == 200
    spec = document.json()
    assert spec["info"]["version"] == __version__
    assert {"/{handle}/search", "/{handle}/query", "/health", "/indexes"} <= set(spec["paths"])
    assert open_client.get("/openapi/assets/swagger-ui-bundle.js").status_code == 200


def test_cache_clear() -> None:
    cache = FakeCache()
    cache.entries["searchport:x"] = b"1"
    with serve(cache=cache) as client:
        response = client.post("/cache/clear")
        assert response.status_code == 200
        assert response.json() == {"cleared": True, "removed": 1}
        assert client.get("/health").json()["cache"] == "memory"


def test_cache_clear_without_a_cache(open_client: TestClient[Any]) -> None:
    body = open_client.post("/cache/clear").json()
    assert body["cleared"] is False and isinstance(body["message"], str)


def test_engines_are_started_and_closed_with_the_app() -> None:
    engines = {"cities": engine(), "locked": engine()}
    with serve(engines=engines):
        assert all(e.started and not e.closed for e in engines.values())
    assert all(e.closed for e in engines.values())


# -- auth ----------------------------------------------------------------------------------

PROTECTED = [
    ("GET", "/cities/search"),
    ("GET", "/cities/facets/region"),
    ("GET", "/cities/autocomplete"),
    ("GET", "/cities/documents/1"),
    ("GET", "/cities/mapping"),
    ("POST", "/cities/query"),
    ("GET", "/indexes"),
    ("POST", "/cache/clear"),
]


@pytest.mark.parametrize(("method", "path"), PROTECTED)
@pytest.mark.parametrize(
    "headers",
    [{}, bearer("wrong"), bearer(""), {"Authorization": KEY}, {"Authorization": f"Basic {KEY}"},
     {"Authorization": f"Token {KEY}"}, bearer(KEY + "x"), bearer(KEY[:-1])],
    ids=["none", "wrong", "empty", "no-scheme", "basic", "token", "longer", "shorter"],
)
def test_protected_routes_need_a_valid_token(
    auth_client: TestClient[Any], method: str, path: str, headers: dict[str, str]
) -> None:
    response = auth_client.request(method, path, headers=headers, content=b"{}")
    assert response.status_code == 401
    assert response.content == b'{"error":"Unauthorized"}'
    assert response.json() == {"error": "Unauthorized"}
    assert GENERATED_ID.match(response.headers["x-request-id"])


@pytest.mark.parametrize(("method", "path"), PROTECTED)
@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
@pytest.mark.parametrize("key", [KEY, OTHER_KEY])
def test_valid_tokens_pass(
    auth_client: TestClient[Any], method: str, path: str, scheme: str, key: str
) -> None:
    response = auth_client.request(
        method, path, headers={"Authorization": f"{scheme} {key}"}, content=b"{}"
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "path", ["/health", "/openapi", "/openapi/json", "/openapi/assets/swagger-ui.css"]
)
def test_open_routes_need_no_token(auth_client: TestClient[Any], path: str) -> None:
    assert auth_client.get(path).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "content"),
    [
        ("GET", "/cities/search?page=abc&filters=%7Bbad", b""),
        ("GET", "/cities/search?page=100000&perPage=100", b""),
        ("GET", "/nope/search", b""),
        ("GET", "/cities/facets/region?maxValues=x", b""),
        ("POST", "/locked/query", b"{}"),
        ("POST", "/cities/query", b"x" * 200_000),
        ("GET", "/cities/documents/404", b""),
    ],
)
def test_auth_comes_before_everything_else(
    auth_client: TestClient[Any], method: str, path: str, content: bytes
) -> None:
    response = auth_client.request(method, path, content=content)
    assert response.status_code == 401
    assert response.json() == {"error": "Unauthorized"}


def test_a_single_configured_key() -> None:
    with serve(config(api_key=KEY)) as client:
        assert client.get("/cities/search", headers=bearer()).status_code == 200
        assert client.get("/cities/search", headers=bearer(OTHER_KEY)).status_code == 401


def test_without_a_key_everything_is_open(open_client: TestClient[Any]) -> None:
    for method, path in PROTECTED:
        assert open_client.request(method, path, content=b"{}").status_code == 200


# -- error statuses ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "filters=%7Bbad", "filters=%7B%22name%22%3A%7B%7D%7D", "sort=%7B%22name%22%3A%22up%22%7D",
        "boosts=%7B%22name%22%3A-1%7D", "histogram=%7B%22name%22%3A0%7D",
        "geoGrid=%7B%22field%22%3A%22where%22%2C%22precision%22%3A30%7D", "page=abc",
        "page=1.5", "perPage=x", "suggest=maybe", "page=501&perPage=20",
    ],
)
def test_bad_search_input_is_a_400(open_client: TestClient[Any], query: str) -> None:
    assert_error(open_client.get(f"/cities/search?{query}"), 400)


def test_deep_page_error_states_the_limit(open_client: TestClient[Any]) -> None:
    message = assert_error(open_client.get("/cities/search?page=101&perPage=100"), 400)
    assert "10000" in message.replace(",", "")


def test_suggest_without_a_suggest_field(open_client: TestClient[Any]) -> None:
    message = assert_error(open_client.get("/cities/search?q=x&suggest=true"), 400)
    assert "suggestField" in message


def test_suggest_on_an_engine_without_it() -> None:
    from searchport.domain.results import Capabilities

    settings = config(indexes={"cities": index(defaults=DefaultsConfig(suggest_field="name"))})
    plain = FakeEngine(capabilities=Capabilities(suggest=False))
    with serve(settings, {"cities": plain}) as client:
        message = assert_error(client.get("/cities/search?q=x&suggest=true"), 400)
    assert message == "suggest is not supported by the fake engine"


@pytest.mark.parametrize(
    ("path", "wire"),
    [("/cities/search?perPage=x", "perPage"), ("/cities/facets/region?maxValues=x", "maxValues"),
     ("/cities/autocomplete?maxFacetsPerField=x", "maxFacetsPerField")],
)
def test_validation_errors_name_the_query_parameter(
    open_client: TestClient[Any], path: str, wire: str
) -> None:
    assert f"'{wire}'" in assert_error(open_client.get(path), 400)


def test_every_wrong_parameter_is_named(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/search?page=x&perPage=y")
    assert response.status_code == 400
    assert response.json()["details"] == [
        "Invalid value for parameter 'page': expected `int`, got `str`",
        "Invalid value for parameter 'perPage': expected `int`, got `str`",
    ]


def test_raw_query_switched_off_is_a_403(open_client: TestClient[Any]) -> None:
    assert_error(open_client.post("/locked/query", content=b"{}"), 403)


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/nope/search"), ("GET", "/nope/facets/region"), ("GET", "/nope/autocomplete"),
     ("GET", "/nope/documents/1"), ("GET", "/nope/mapping"), ("POST", "/nope/query")],
)
def test_unknown_handle_is_a_404_on_every_route(
    open_client: TestClient[Any], method: str, path: str
) -> None:
    assert "nope" in assert_error(open_client.request(method, path, content=b"{}"), 404)


@pytest.mark.parametrize("path", ["/a/b/c", "/cities/nothing-here", "/cities/facets"])
def test_unknown_route_is_a_404(open_client: TestClient[Any], path: str) -> None:
    assert_error(open_client.get(path), 404)


@pytest.mark.parametrize(
    ("method", "path"),
    [("DELETE", "/cities/search"), ("POST", "/cities/search"), ("GET", "/cities/query"),
     ("GET", "/cache/clear"), ("PUT", "/health")],
)
def test_wrong_method_is_a_405(open_client: TestClient[Any], method: str, path: str) -> None:
    assert_error(open_client.request(method, path), 405)


def test_body_over_the_limit_is_a_413() -> None:
    with serve(config(limits=LimitsConfig(max_body_bytes=1024))) as client:
        assert client.post("/cities/query", content=b'{"a":"' + b"x" * 900 + b'"}').status_code \
            == 200
        assert_error(client.post("/cities/query", content=b'{"a":"' + b"x" * 1100 + b'"}'), 413)


@pytest.mark.parametrize(("error", "status"), [
    (EngineUnavailable("The search engine is unreachable"), 502),
    (EngineTimeout("The search engine did not answer in time"), 504),
])
def test_engine_failures(error: Exception, status: int) -> None:
    settings = config(indexes={"cities": index()})
    with serve(settings, {"cities": FailingEngine(error)}) as client:
        for path in ["/cities/search", "/cities/facets/region", "/cities/documents/1"]:
            assert assert_error(client.get(path), status) == str(error)


def test_a_bug_is_a_500_without_details() -> None:
    settings = config(indexes={"cities": index()})
    leak = "secret-token at http://internal.example:9200"
    with serve(settings, {"cities": FailingEngine(RuntimeError(leak))}) as client:
        response = client.get("/cities/search")
    assert_error(response, 500)
    assert leak not in response.text and "RuntimeError" not in response.text
    assert response.json()["requestId"] == response.headers["x-request-id"]


# -- headers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/cities/search"), ("GET", "/cities/search?page=x"), ("GET", "/nope/search"),
     ("GET", "/a/b/c"), ("DELETE", "/health"), ("GET", "/health"), ("GET", "/openapi/json")],
)
def test_every_response_has_a_request_id_and_server_timing(
    open_client: TestClient[Any], method: str, path: str
) -> None:
    first = open_client.request(method, path)
    second = open_client.request(method, path)
    assert GENERATED_ID.match(first.headers["x-request-id"])
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    assert SERVER_TIMING.match(first.headers["server-timing"])


@pytest.mark.parametrize("sent", ["abc-123", "A.b_C-9", "x" * 64])
def test_a_sane_request_id_is_echoed(open_client: TestClient[Any], sent: str) -> None:
    response = open_client.get("/cities/search", headers={"X-Request-ID": sent})
    assert response.headers["x-request-id"] == sent


@pytest.mark.parametrize("sent", ["has space", "x" * 65, "a/b", "<script>", ""])
def test_other_request_ids_are_replaced(open_client: TestClient[Any], sent: str) -> None:
    response = open_client.get("/cities/search", headers={"X-Request-ID": sent})
    assert GENERATED_ID.match(response.headers["x-request-id"])


def test_a_request_id_with_a_trailing_newline_is_replaced() -> None:
    app = create_app(fake_container(config(), {"cities": engine(), "locked": engine()}))
    sent: list[Any] = []

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": "/health", "raw_path": b"/health", "root_path": "",
        "query_string": b"", "headers": [(b"x-request-id", b"abc\n")],
        "client": ("127.0.0.1", 1), "server": ("testserver", 80),
    }
    asyncio.run(app(scope, receive, send))  # type: ignore[arg-type]
    headers = dict(sent[0]["headers"])
    assert b"\n" not in headers[b"x-request-id"]


def test_server_timing_counts_engine_time(open_client: TestClient[Any]) -> None:
    timing = open_client.get("/cities/search").headers["server-timing"]
    engine_ms, total_ms = (float(p.split("=")[1]) for p in timing.split(", "))
    assert 0 <= engine_ms <= total_ms


def test_cache_control_without_auth(open_client: TestClient[Any]) -> None:
    for path in ["/cities/search", "/cities/facets/region", "/cities/autocomplete",
                 "/cities/mapping"]:
        response = open_client.get(path)
        assert response.headers["cache-control"] == PUBLIC
        assert "Accept-Encoding" in response.headers["vary"]
    assert open_client.get("/nope/search").headers["cache-control"] == "no-store"


def test_cache_control_with_auth(auth_client: TestClient[Any]) -> None:
    response = auth_client.get("/cities/search", headers=bearer())
    assert response.headers["cache-control"].startswith("private")
    assert "public" not in response.headers["cache-control"]
    assert "Authorization" in response.headers["vary"]
    assert auth_client.get("/cities/search").headers["cache-control"] == "no-store"


@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_compression_when_asked(open_client: TestClient[Any], encoding: str) -> None:
    response = open_client.get("/cities/search", headers={"Accept-Encoding": encoding})
    assert response.status_code == 200
    assert response.headers["content-encoding"] == encoding
    assert "Accept-Encoding" in response.headers["vary"]
    assert len(response.json()["hits"]) == len(HITS)


def test_no_compression_unless_asked(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/search", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in response.headers
    assert msgspec.json.decode(response.content)["totalHits"] == 42


ORIGIN = "https://app.example"


def test_cors_headers_when_origins_are_configured() -> None:
    with serve(config(cors_origins=[ORIGIN], api_key=KEY)) as client:
        allowed = client.get("/cities/search", headers={"Origin": ORIGIN, **bearer()})
        assert allowed.headers["access-control-allow-origin"] == ORIGIN
        other = client.get("/cities/search", headers={"Origin": "https://evil.example",
                                                      **bearer()})
        assert "access-control-allow-origin" not in other.headers
        # a preflight carries no token, and must not be refused for it
        preflight = client.options("/cities/search", headers={
            "Origin": ORIGIN, "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization"})
        assert preflight.status_code in (200, 204)
        assert preflight.headers["access-control-allow-origin"] == ORIGIN
        assert "authorization" in preflight.headers["access-control-allow-headers"].lower()


def test_cors_wildcard() -> None:
    with serve(config(cors_origins="*")) as client:
        response = client.get("/health", headers={"Origin": ORIGIN})
        assert response.headers["access-control-allow-origin"] == "*"


def test_no_cors_headers_by_default(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/search", headers={"Origin": ORIGIN})
    assert not any(h.startswith("access-control-") for h in response.headers)


def test_vary_keeps_accept_encoding_with_cors() -> None:
    with serve(config(cors_origins=[ORIGIN])) as client:
        response = client.get("/cities/search", headers={"Origin": ORIGIN,
                                                         "Accept-Encoding": "gzip"})
    assert response.headers["content-encoding"] == "gzip"
    assert "Accept-Encoding" in response.headers["vary"]
    assert "Origin" in response.headers["vary"]
