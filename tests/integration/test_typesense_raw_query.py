"""Raw queries a real Typesense 0.24.1 refuses are the caller's: each is a 400 carrying
Typesense's own reason, whatever status it chose (400, 404 for a field it does not know,
422 for a request it read but will not run), never a 502 "the engine failed"."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.typesense_server import app_client, index_settings
from tests.typesense_server import TypesenseServer

PREFIX = "The typesense engine rejected the query: "

REFUSED = [
    # (raw query, Typesense's reason): 400s
    ({"q": "castle"}, "No search fields specified for the query."),
    ({"q": "*", "query_by": "year"}, "Field `year` should be a string or a string array."),
    ({"q": "*", "query_by": "title", "filter_by": "year:>>3"},
     "Error with filter field `year`: Not an int32."),
    ({"q": "*", "query_by": "title", "sort_by": "title:sideways"},
     "Order for field` title` should be either ASC or DESC."),
    ({"q": "*", "query_by": "title", "query_by_weights": "1,2"},
     "Number of weights in `query_by_weights` does not match number of `query_by` fields."),
    ({"q": "*", "query_by": "title", "per_page": -1},
     "Parameter `per_page` must be an unsigned integer."),
    # 404s about a field
    ({"q": "castle", "query_by": "nosuch"}, "Could not find a field named `nosuch` in the schema."),
    ({"q": "*", "query_by": "title", "filter_by": "nosuch:=3"},
     "Could not find a filter field named `nosuch` in the schema."),
    ({"q": "*", "query_by": "title", "facet_by": "isbn"},
     "Could not find a facet field named `isbn` in the schema."),
    # 422s (were 502 "The typesense engine failed (HTTP 422)")
    ({"q": "*", "query_by": "title", "per_page": 1000}, "250"),
    ({"q": "*", "query_by": "title", "page": 0}, "Page"),
]


@pytest.fixture(scope="module")
def client(server: TypesenseServer) -> Any:
    with app_client({"h": index_settings(server) | {"rawQuery": True}}) as app:
        yield app


@pytest.mark.parametrize(("body", "reason"), REFUSED, ids=[str(b) for b, _ in REFUSED])
def test_a_raw_query_typesense_refuses_is_a_400_with_its_reason(
        client: Any, server: TypesenseServer, body: dict[str, Any], reason: str) -> None:
    response = client.post("/h/query", json=body)
    assert response.status_code == 400, response.text
    message = response.json()["error"]
    assert message.startswith(PREFIX) and reason in message, message
    assert server.api_key not in response.text and str(server.port) not in response.text


def test_the_422_reasons_are_typesenses_own_words(client: Any) -> None:
    per_page = client.post("/h/query", json={"q": "*", "query_by": "title", "per_page": 1000})
    page = client.post("/h/query", json={"q": "*", "query_by": "title", "page": 0})
    assert per_page.json() == {"error": PREFIX + "Only upto 250 hits can be fetched per page."}
    assert page.json() == {"error": PREFIX + "Page must be an integer of value greater than 0."}


def test_a_raw_query_typesense_accepts_is_its_answer(client: Any) -> None:
    response = client.post("/h/query", json={"q": "castle", "query_by": "title", "per_page": 2})
    assert response.status_code == 200
    body = response.json()
    assert body["found"] >= 1 and len(body["hits"]) <= 2
    assert all("castle" in hit["document"]["title"].lower() for hit in body["hits"])
