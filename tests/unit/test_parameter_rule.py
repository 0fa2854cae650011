"""One rule for the query string on searchport's own JSON API (docs/http-api.md): a name a
route does not declare is a 400 naming it, on every route, while every declared name is
taken. The routes are read from the app itself, so a new route is held to the rule too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from searchport.entrypoints.controllers.query_names import declared_names
from searchport.entrypoints.http.app import create_app
from tests.fakes import fake_container
from tests.unit.test_http_contract import assert_error, config, engine

# the routes of other protocols, with rules of their own (Algolia's, the pages, OpenAPI)
OTHER_PROTOCOLS = re.compile(r"^/(1|2|ui|openapi)(/|$)|^/$|/instantsearch$")
PATH_VALUES = {"handle": "cities", "field": "region", "doc_id": "1"}
# a valid value for each declared name, as a client would send it
VALUES = {
    "q": "city", "page": "1", "perPage": "2", "sort": '{"name":"asc"}', "facets": "region",
    "filters": '{"region":"Europe"}', "highlight": "true", "fields": "name", "suggest": "false",
    "boosts": '{"name":2}', "histogram": '{"population":1000}',
    "geoGrid": '{"field":"where","precision":2}', "analytics": "false",
    "clickAnalytics": "false", "analyticsTags": "a,b", "userToken": "user-1",
    "ruleContexts": "mobile", "enableRules": "true", "maxValues": "5",
    "maxFacetsPerField": "2", "semantic": "0",
}


def _app() -> Any:
    settings = config()
    return create_app(fake_container(settings, {h: engine() for h in settings.indexes}))


def json_api_routes() -> list[tuple[str, str, tuple[str, ...]]]:
    """Every (method, URL, declared names) of the JSON API, read from the app's routes."""
    found = []
    for route in _app().app.routes:
        if not isinstance(route, HTTPRoute) or OTHER_PROTOCOLS.search(route.path):
            continue
        url = re.sub(r"{(\w+):\w+}", lambda m: PATH_VALUES[m.group(1)], route.path)
        for handler in route.route_handlers:
            for method in handler.http_methods - {"OPTIONS", "HEAD"}:
                found.append((method, url, declared_names(handler, PATH_VALUES.keys())))
    return sorted(found)


ROUTES = json_api_routes()


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Any]]:
    with TestClient(_app()) as opened:
        yield opened


def test_the_routes_are_all_found() -> None:
    urls = {(method, url) for method, url, _ in ROUTES}
    assert {("GET", "/cities/search"), ("GET", "/cities/facets/region"),
            ("GET", "/cities/autocomplete"), ("GET", "/cities/documents/1"),
            ("GET", "/cities/documents/1/similar"),
            ("GET", "/cities/fields"), ("GET", "/cities/mapping"), ("POST", "/cities/query"),
            ("GET", "/indexes"), ("GET", "/health"), ("POST", "/cache/clear"),
            ("GET", "/metrics")} == urls


@pytest.mark.parametrize(("method", "url", "declared"), ROUTES)
def test_an_unknown_name_is_a_400_naming_it(
    client: TestClient[Any], method: str, url: str, declared: tuple[str, ...]
) -> None:
    response = client.request(method, f"{url}?limit=2", content=b"{}")
    message = assert_error(response, 400)
    takes = ", ".join(declared) if declared else "no query parameters"
    assert message == f"Unknown parameter 'limit': this route takes {takes}"


@pytest.mark.parametrize(("method", "url", "declared"), ROUTES)
def test_every_unknown_name_is_listed(
    client: TestClient[Any], method: str, url: str, declared: tuple[str, ...]
) -> None:
    response = client.request(method, f"{url}?hitsPerPage=2&limit=2&hitsPerPage=3",
                              content=b"{}")
    assert_error(response, 400)
    details = response.json()["details"]
    assert [d.split("'")[1] for d in details] == ["hitsPerPage", "limit"]


@pytest.mark.parametrize(("method", "url", "declared"), ROUTES)
def test_every_declared_name_is_taken(
    client: TestClient[Any], method: str, url: str, declared: tuple[str, ...]
) -> None:
    if url.endswith("/documents/1") and declared:
        url += "/similar"  # the document route takes its names on the similar form of its path
    response = client.request(method, url, params={n: VALUES[n] for n in declared},
                              content=b"{}")
    if url.endswith("/similar"):
        # every name taken: what answers is this handle's config, which searches by meaning
        # nowhere
        assert response.status_code == 400, response.text
        assert "give this index a semantic section" in response.json()["error"]
    else:
        assert response.status_code == 200, response.text


def test_a_name_in_snake_case_is_not_the_declared_one(client: TestClient[Any]) -> None:
    message = assert_error(client.get("/cities/search?per_page=2"), 400)
    assert message.startswith("Unknown parameter 'per_page': this route takes q, page, perPage")


def test_the_token_comes_before_the_names() -> None:
    settings = config(api_key="k-1")
    app = create_app(fake_container(settings, {h: engine() for h in settings.indexes}))
    with TestClient(app) as locked:
        assert locked.get("/cities/search?limit=2").status_code == 401


def test_a_cors_preflight_is_answered_whatever_the_names() -> None:
    settings = config(cors_origins="*")
    app = create_app(fake_container(settings, {h: engine() for h in settings.indexes}))
    with TestClient(app) as cors:
        response = cors.options("/cities/search?limit=2", headers={
            "Origin": "https://shop.example", "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization"})
    assert response.status_code in (200, 204)
    assert response.headers["access-control-allow-origin"] == "*"


BIG = "99999999999999999999"  # beyond 64 bits


@pytest.mark.parametrize(("params", "quoted"), [
    ({"page": BIG}, f"page {BIG} is past the last page"),
    ({"page": BIG, "perPage": "100"}, f"page {BIG} is past the last page, 100: with perPage 100"),
    ({"geoGrid": f'{{"field":"where","precision":{BIG}}}'}, f"not {BIG}"),
    ({"geoGrid": f'{{"field":"where","precision":-{BIG}}}'}, f"not -{BIG}"),
    ({"boosts": f'{{"name":-{BIG}}}'}, f"not -{BIG}"),
    ({"histogram": f'{{"population":-{BIG}}}'}, f"not -{BIG}"),
    ({"histogram": '{"population":0}'}, "not 0"),
    ({"geoGrid": f'{{"field":"where","bounds":{{"top_left":{{"lat":{BIG},"lon":0}},'
                 '"bottom_right":{"lat":0,"lon":0}}}'}, f'not {{"lat":{BIG},"lon":0}}'),
])
def test_a_number_out_of_range_is_refused_as_sent(
    client: TestClient[Any], params: dict[str, str], quoted: str
) -> None:
    message = assert_error(client.get("/cities/search", params=params), 400)
    assert quoted in message
    assert "4611686018427387904" not in message
