"""Service routes, errors, headers, auth and the OpenAPI docs over real HTTP."""

from __future__ import annotations

import gzip
import re
from typing import Any

import brotli
import pytest
from openapi_spec_validator import validate

from tests.e2e.conftest import Server, sample_config


def test_health_and_indexes(server: Server) -> None:
    health = server.client.get("/health")
    assert health.status_code == 200
    body = health.json()
    assert body["status"] == "ok" and body["cache"] == "disabled" and body["version"]
    indexes = server.client.get("/indexes").json()
    assert [i["handle"] for i in indexes["indexes"]] == ["cities"]
    entry = indexes["indexes"][0]
    assert entry["engine"] == "tantivy"
    assert entry["capabilities"]["histogram"] is True and entry["capabilities"]["geoGrid"] is True
    assert "host" not in entry and "path" not in entry


def test_cache_clear_without_a_cache(server: Server) -> None:
    response = server.client.post("/cache/clear")
    assert response.status_code == 200
    assert response.json() == {"cleared": False, "message": "No cache configured"}


def test_listening_line_is_logged(server: Server) -> None:
    assert re.search(r"listening on http://127\.0\.0\.1:\d+", server.output())


@pytest.mark.parametrize(
    ("method", "path", "params", "status", "needle"),
    [
        ("GET", "/nope/search", {}, 404, 'Index "nope" not found'),
        ("GET", "/nope/facets/x", {}, 404, "not found"),
        ("POST", "/nope/query", {}, 404, "not found"),
        ("GET", "/no/such/route/here", {}, 404, "No such route"),
        ("DELETE", "/cities/search", {}, 405, "Method not allowed"),
        ("GET", "/cities/search", {"sort": "{oops"}, 400, "Invalid JSON in 'sort'"),
        ("GET", "/cities/search", {"filters": "[1"}, 400, "Invalid JSON in 'filters'"),
        ("GET", "/cities/search", {"boosts": "nope"}, 400, "Invalid JSON in 'boosts'"),
        ("GET", "/cities/search", {"histogram": "{"}, 400, "Invalid JSON in 'histogram'"),
        ("GET", "/cities/search", {"geoGrid": "{"}, 400, "Invalid JSON in 'geoGrid'"),
        ("GET", "/cities/facets/country", {"filters": "{"}, 400, "Invalid JSON in 'filters'"),
        ("GET", "/cities/search", {"filters": '{"region": {}}'}, 400, "region"),
        ("GET", "/cities/search", {"filters": '{"region": null}'}, 400, "region"),
        ("GET", "/cities/search", {"page": "abc"}, 400, "page"),
        ("GET", "/cities/search", {"perPage": "1.5"}, 400, "perPage"),
        ("GET", "/cities/search", {"page": "600", "perPage": "20"}, 400,
         "page 600 is past the last page, 500:"),
        ("GET", "/cities/search", {"sort": '{"population": "up"}'}, 400, "population"),
        ("GET", "/cities/search", {"geoGrid": '{"field":"location","precision":30}'}, 400,
         "precision"),
        ("GET", "/cities/search", {"facets": "name"}, 400, "name"),
        ("GET", "/cities/search", {"filters": '{"population": "many"}'}, 400, "population"),
    ],
)
def test_error_statuses_and_bodies(
    server: Server, method: str, path: str, params: dict[str, str], status: int, needle: str
) -> None:
    response = server.client.request(method, path, params=params)
    assert response.status_code == status, response.text
    body = response.json()
    assert isinstance(body["error"], str) and needle in body["error"]
    assert "Traceback" not in response.text and "File \"" not in response.text


def test_clamping(server: Server) -> None:
    body = server.client.get("/cities/search", params={"perPage": "1000", "page": "0"}).json()
    assert body["perPage"] == 100 and body["page"] == 1 and len(body["hits"]) == 100
    small = server.client.get("/cities/search", params={"perPage": "-5"}).json()
    assert small["perPage"] == 1 and len(small["hits"]) == 1
    facets = server.client.get("/cities/facets/country", params={"maxValues": "0"}).json()
    assert len(facets["values"]) == 1


def test_unsupported_feature_names_itself(server: Server) -> None:
    caps = server.client.get("/indexes").json()["indexes"][0]["capabilities"]
    response = server.client.get("/cities/search", params={"q": "x", "suggest": "true"})
    if caps["suggest"]:
        assert response.status_code == 200
    else:
        assert response.status_code == 400
        assert "suggest" in response.json()["error"]


def test_every_response_has_request_id_and_timing(server: Server) -> None:
    for path in ("/health", "/cities/search", "/nope/search", "/no/route"):
        response = server.client.get(path)
        assert re.fullmatch(r"[A-Za-z0-9._-]+", response.headers["x-request-id"])
        assert "total;dur=" in response.headers["server-timing"]
    echoed = server.client.get("/health", headers={"x-request-id": "abc-123"})
    assert echoed.headers["x-request-id"] == "abc-123"
    searched = server.client.get("/cities/search", params={"q": "a"})
    assert re.search(r"engine;dur=\d+\.\d+", searched.headers["server-timing"])


def test_compression_when_asked(server: Server) -> None:
    raw: dict[str, Any] = server.client.get("/cities/search").json()
    for encoding, decode in (("gzip", gzip.decompress), ("br", brotli.decompress)):
        with server.client.stream(
            "GET", "/cities/search", headers={"accept-encoding": encoding}
        ) as response:
            assert response.headers["content-encoding"] == encoding
            body = b"".join(response.iter_raw())
        import json as _json

        assert _json.loads(decode(body))["totalHits"] == raw["totalHits"]


def test_cache_control_is_public_without_auth(server: Server) -> None:
    response = server.client.get("/cities/search")
    assert response.headers["cache-control"].startswith("public")


def test_openapi_document_is_valid_3_1_and_documents_every_route(server: Server) -> None:
    response = server.client.get("/openapi/json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    validate(document)
    paths = document["paths"]
    for path in (
        "/{handle}/search", "/{handle}/query", "/{handle}/facets/{field}",
        "/{handle}/autocomplete", "/{handle}/documents/{doc_id}", "/{handle}/mapping",
        "/health", "/indexes", "/cache/clear",
    ):
        assert path in paths, path
    names = {p["name"]: p for p in paths["/{handle}/search"]["get"]["parameters"]}
    for name in ("q", "page", "perPage", "sort", "facets", "filters", "highlight", "fields",
                 "suggest", "boosts", "histogram", "geoGrid"):
        assert names[name].get("description"), name
        assert names[name].get("examples"), name
    assert document["info"]["version"] == server.client.get("/health").json()["version"]


def test_openapi_page_loads_its_assets_from_searchport(server: Server) -> None:
    page = server.client.get("/openapi")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert assets, page.text
    for asset in assets:
        assert asset.startswith("/openapi/"), f"{asset} is not served by searchport"
        loaded = server.client.get(asset)
        assert loaded.status_code == 200 and len(loaded.content) > 100, asset


def test_auth(secured: Server) -> None:
    client = secured.client
    assert client.get("/health").status_code == 200
    assert client.get("/openapi/json").status_code == 200
    assert client.get("/openapi").status_code == 200
    for path in ("/cities/search", "/indexes", "/cities/mapping"):
        response = client.get(path)
        assert response.status_code == 401
        assert response.json() == {"error": "Unauthorized"}
    assert client.post("/cache/clear").status_code == 401
    for header in ("Bearer wrong", "Basic key-one", "Bearer", "key-one"):
        response = client.get("/cities/search", headers={"authorization": header})
        assert response.status_code == 401, header
    # auth before validation
    bad = client.get("/cities/search", params={"page": "abc", "sort": "{"})
    assert bad.status_code == 401
    for key in ("key-one", "key-two"):
        ok = client.get("/cities/search", headers={"authorization": f"bearer {key}"})
        assert ok.status_code == 200
        assert ok.headers["cache-control"].startswith("private")
        assert "Authorization" in ok.headers["vary"]


def test_api_key_from_environment(server_factory: Any) -> None:
    server = server_factory(sample_config(), env={"API_KEY": "from-env"})
    assert server.client.get("/indexes").status_code == 401
    ok = server.client.get("/indexes", headers={"authorization": "Bearer from-env"})
    assert ok.status_code == 200


def test_raw_query_can_be_turned_off(server_factory: Any) -> None:
    server = server_factory(sample_config(extra_index="    rawQuery: false\n"))
    response = server.client.post("/cities/query", json={"query": "x"})
    assert response.status_code == 403 and "turned off" in response.json()["error"]
    caps = server.client.get("/indexes").json()["indexes"][0]["capabilities"]
    assert caps["rawQuery"] is False


def test_cors(server_factory: Any) -> None:
    server = server_factory(sample_config(extra_top='corsOrigins: ["https://app.example"]'))
    response = server.client.get("/health", headers={"origin": "https://app.example"})
    assert response.headers["access-control-allow-origin"] == "https://app.example"
    other = server.client.get("/health", headers={"origin": "https://evil.example"})
    assert other.headers.get("access-control-allow-origin") != "https://evil.example"
