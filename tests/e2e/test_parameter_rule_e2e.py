"""The rule for parameters (docs/http-api.md) on a real `searchport serve` over the sample
cities on tantivy: unknown names and unknown field names are 400s naming them, numbers are
refused as sent, and the Algolia routes cap their query as `/search` caps `q`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.conftest import Server

BIG = "99999999999999999999"


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/cities/search"), ("GET", "/cities/facets/country"), ("GET", "/cities/autocomplete"),
    ("GET", "/cities/documents/1796236"), ("GET", "/cities/fields"), ("GET", "/cities/mapping"),
    ("POST", "/cities/query"), ("GET", "/indexes"), ("GET", "/health"),
])
def test_an_unknown_name_is_a_400_naming_it(server: Server, method: str, path: str) -> None:
    response = server.client.request(method, path, params={"hitsPerPage": "2"},
                                     json={"query": "*"})
    assert response.status_code == 400, response.text
    assert response.json()["error"].startswith("Unknown parameter 'hitsPerPage': this route")


@pytest.mark.parametrize(("path", "params", "named"), [
    ("/cities/search", {"fields": "name,bogus"}, "bogus"),
    ("/cities/search", {"facets": "bogus"}, "bogus"),
    ("/cities/search", {"highlight": "bogus"}, "bogus"),
    ("/cities/search", {"q": "shanghai", "highlight": "bogus"}, "bogus"),
    ("/cities/search", {"sort": {"bogus": "asc"}}, "bogus"),
    ("/cities/search", {"filters": {"bogus": 1}}, "bogus"),
    ("/cities/search", {"boosts": {"bogus": 2}}, "bogus"),
    ("/cities/search", {"histogram": {"bogus": 10}}, "bogus"),
    ("/cities/search", {"geoGrid": {"field": "bogus"}}, "bogus"),
    ("/cities/facets/bogus", {}, "bogus"),
    ("/cities/facets/country", {"filters": {"bogus": 1}}, "bogus"),
    ("/cities/autocomplete", {"q": "sh", "facets": "bogus"}, "bogus"),
])
def test_an_unknown_field_is_a_400_naming_it(
    server: Server, path: str, params: dict[str, Any], named: str
) -> None:
    sent = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in params.items()}
    response = server.client.get(path, params=sent)
    assert response.status_code == 400, response.text
    assert f'"{named}"' in response.json()["error"]


def test_every_field_a_row_has_can_be_returned(server: Server) -> None:
    """``id`` is stored in every row but typed by no config entry; ``objectID`` is metadata."""
    response = server.client.get("/cities/search", params={
        "q": "shanghai", "perPage": "1", "fields": "id,objectID,name"})
    assert response.status_code == 200, response.text
    hit = response.json()["hits"][0]
    assert {k: v for k, v in hit.items() if not k.startswith("_")} == {
        "objectID": "1796236", "id": "1796236", "name": "Shanghai"}


def test_a_page_past_the_window_is_refused_as_sent(server: Server) -> None:
    response = server.client.get("/cities/search", params={"page": BIG})
    assert response.status_code == 400
    message = response.json()["error"]
    assert f"page {BIG} is past the last page" in message
    assert "4611686018427387904" not in message


@pytest.mark.parametrize(("path", "body"), [
    ("/1/indexes/cities/query", {"query": "x" * 2049}),
    ("/1/indexes/*/queries", {"requests": [{"indexName": "cities", "query": "x" * 2049}]}),
])
def test_the_algolia_query_has_the_cap_of_q(server: Server, path: str, body: Any) -> None:
    refused = server.client.post(path, json=body)
    search = server.client.get("/cities/search", params={"q": "x" * 2049})
    assert refused.status_code == search.status_code == 400
    assert refused.json()["message"] == search.json()["error"].replace("'q'", "'query'")
