"""The built-in search page's routes and ``GET /{handle}/fields``, over fakes of the ports."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import Config, DefaultsConfig, FieldConfig, IndexConfig
from searchport.domain.errors import IndexNotFound
from searchport.domain.usecases.describe_fields import DescribeFields, DescribeFieldsRequest
from searchport.entrypoints.controllers.ui_routes import ui_directory
from searchport.entrypoints.http.app import create_app
from tests.fakes import FakeEngine, fake_container

KEY = "page-key"
SECRETS = {"host": "https://secret-host.example:9200", "api_key": "engine-secret",
           "index_name": "secret_index"}
FIELDS = {
    "name": FieldConfig(type="text", weight=3),
    "country": FieldConfig(type="keyword", searchable=True),
    "region": FieldConfig(field="continent", type="keyword"),
    "population": FieldConfig(type="integer"),
    "location": FieldConfig(type="geo_point"),
    "tags": FieldConfig(),
}
DEFAULTS = DefaultsConfig(facets=["region", "country"], per_page=12)


def index(**settings: Any) -> IndexConfig:
    return IndexConfig(**{"engine": "tantivy", "path": "unused", "fields": FIELDS,
                          "defaults": DEFAULTS, **settings})


@contextmanager
def serve(api_key: list[str] | None = None) -> Iterator[TestClient[Any]]:
    settings = Config(indexes={"cities": index()}, api_key=api_key)
    app = create_app(fake_container(settings, {"cities": FakeEngine()}))
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def open_client() -> Iterator[TestClient[Any]]:
    with serve() as client:
        yield client


@pytest.fixture(scope="module")
def auth_client() -> Iterator[TestClient[Any]]:
    with serve([KEY]) as client:
        yield client


def test_describe_fields_lists_public_names_types_and_defaults() -> None:
    entries = {"books": IndexEntry("books", index(engine="elasticsearch", path=None, **SECRETS),
                                   FakeEngine(name="elasticsearch"))}
    use_case = DescribeFields(catalog=Catalog(entries))
    response = msgspec.json.encode(
        asyncio.run(use_case(DescribeFieldsRequest(handle="books")))
    )
    assert msgspec.json.decode(response) == {
        "handle": "books",
        "fields": [
            {"name": "name", "type": "text", "searchable": True},
            {"name": "country", "type": "keyword", "searchable": True},
            {"name": "region", "type": "keyword", "searchable": False},  # the alias, not continent
            {"name": "population", "type": "integer", "searchable": False},
            {"name": "location", "type": "geo_point", "searchable": False},
            {"name": "tags", "searchable": False},  # no type configured: none claimed
        ],
        "facets": ["region", "country"],
        "perPage": 12,
    }
    for secret in SECRETS.values():
        assert secret.encode() not in response
    assert b"continent" not in response


def test_describe_fields_of_an_unknown_handle_is_not_found() -> None:
    use_case = DescribeFields(catalog=Catalog({}))
    with pytest.raises(IndexNotFound):
        asyncio.run(use_case(DescribeFieldsRequest(handle="nope")))


def test_fields_route(open_client: TestClient[Any]) -> None:
    response = open_client.get("/cities/fields")
    assert response.status_code == 200
    body = response.json()
    assert [f["name"] for f in body["fields"]] == list(FIELDS)
    assert body["facets"] == ["region", "country"] and body["perPage"] == 12
    assert open_client.get("/nope/fields").status_code == 404
    assert "/{handle}/fields" in open_client.get("/openapi/json").json()["paths"]


def test_fields_route_needs_the_token(auth_client: TestClient[Any]) -> None:
    assert auth_client.get("/cities/fields").status_code == 401
    ok = auth_client.get("/cities/fields", headers={"Authorization": f"Bearer {KEY}"})
    assert ok.status_code == 200 and ok.json()["handle"] == "cities"


@pytest.mark.parametrize("client_name", ["open_client", "auth_client"])
def test_the_page_and_its_files_need_no_token(
    client_name: str, request: pytest.FixtureRequest
) -> None:
    client: TestClient[Any] = request.getfixturevalue(client_name)
    root = client.get("/", follow_redirects=False)
    assert root.status_code == 302 and root.headers["location"] == "/ui"
    page = client.get("/ui")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "connect-src 'self'" in csp
    assert page.content == (ui_directory() / "index.html").read_bytes()
    for name in ("app.js", "style.css", "world.js"):
        asset = client.get(f"/ui/assets/{name}")
        assert asset.status_code == 200, name
        assert asset.content == (ui_directory() / name).read_bytes()
    # the page is not part of the API document; the API stays guarded
    assert "/ui" not in client.get("/openapi/json").json()["paths"]
    if client_name == "auth_client":
        assert client.get("/indexes").status_code == 401
        assert client.get("/cities/search").status_code == 401


def test_the_page_loads_nothing_from_elsewhere() -> None:
    shipped = [p for p in ui_directory().iterdir() if p.suffix in {".html", ".js", ".css"}]
    assert {p.name for p in shipped} >= {"index.html", "app.js", "style.css", "world.js"}
    for path in shipped:
        urls = re.findall(r"\w+://[^\s\"')]+", path.read_text(encoding="utf-8"))
        assert set(urls) <= {"http://www.w3.org/2000/svg"}, path.name  # the SVG namespace
