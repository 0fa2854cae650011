"""Documents, the mapping (the collection schema) and raw queries on a real Typesense
0.24.1, through the real app."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from litestar.testing import TestClient

from tests.integration.typesense_server import (
    AWKWARD,
    COLLECTION,
    app_client,
    awkward_docs,
    index_settings,
    typesense_rows,
)
from tests.typesense_server import TypesenseServer

ROWS = {r["id"]: r for r in typesense_rows()}


@pytest.fixture(scope="module")
def client(server: TypesenseServer) -> Iterator[TestClient[Any]]:
    with app_client({
        "books": index_settings(server, fields={"writer": {"field": "author"}}),
        "awkward": index_settings(server, AWKWARD),
        "locked": index_settings(server, rawQuery=False),
    }) as client:
        yield client


# ---------------------------------------------------------------- documents


@pytest.mark.parametrize("doc_id", ["b01", "46", "b44"])
def test_a_document_by_id(client: TestClient[Any], doc_id: str) -> None:
    response = client.get(f"/books/documents/{doc_id}")
    assert response.status_code == 200
    row = dict(ROWS[doc_id])
    if "author" in row:
        row["writer"] = row.pop("author")
    assert response.json() == {"objectID": doc_id, "_index": "books", **row}


@pytest.mark.parametrize("doc_id", ["nope", "B01", "b01 ", "export", "search", "import"])
def test_a_missing_document_is_404(client: TestClient[Any], doc_id: str) -> None:
    response = client.get(f"/books/documents/{quote(doc_id, safe='')}")
    assert (response.status_code, response.json()) == (404, {"error": "Document not found"})


@pytest.mark.parametrize("doc", awkward_docs()[:8], ids=lambda d: repr(d["id"]))
def test_ids_that_are_route_names_or_need_escaping(client: TestClient[Any],
                                                   doc: dict[str, Any]) -> None:
    """``export`` and ``search`` are other Typesense routes; ``a/b``, ``..``, ``a+b``, ``?``
    and spaces must reach Typesense as one path segment."""
    response = client.get(f"/awkward/documents/{quote(doc['id'], safe='')}")
    if doc["id"] == "..":  # a client cannot send it either: the path is normalised first
        return
    assert response.status_code == 200, response.text
    assert response.json() == {"objectID": doc["id"], "_index": AWKWARD, **doc}


# ---------------------------------------------------------------- mapping


def test_the_mapping_is_the_collection_schema(client: TestClient[Any],
                                              server: TypesenseServer) -> None:
    with server.client() as admin:
        schema = admin.get(f"/collections/{COLLECTION}").json()
    response = client.get("/books/mapping")
    assert response.status_code == 200
    assert response.json() == schema
    assert [f["name"] for f in schema["fields"]][:3] == ["title", "author", "genre"]


# ---------------------------------------------------------------- raw query


def raw(client: TestClient[Any], body: Any, handle: str = "books") -> Any:
    return client.post(f"/{handle}/query", content=json.dumps(body).encode(),
                       headers={"Content-Type": "application/json"})


def test_raw_query_returns_typesense_answer_unmodified(client: TestClient[Any],
                                                       server: TypesenseServer) -> None:
    params = {"q": "castle", "query_by": "title", "per_page": 3, "facet_by": "genre",
              "filter_by": "year:>=1900"}
    with server.client() as admin:
        direct = admin.get(f"/collections/{COLLECTION}/documents/search", params=params)
    response = raw(client, {**params, "per_page": 3, "prefix": True})
    assert response.status_code == 200
    answer, expected = response.json(), direct.json()
    for body in (answer, expected):
        body.pop("search_time_ms")
        body["request_params"].pop("per_page", None)
    assert answer == expected


def test_raw_query_stays_on_the_configured_collection(client: TestClient[Any]) -> None:
    body = {"q": "*", "query_by": "title", "collection": AWKWARD, "collections": [AWKWARD],
            "x-typesense-api-key": "other", "per_page": 1}
    answer = raw(client, body).json()
    assert answer["request_params"]["collection_name"] == COLLECTION
    assert answer["found"] == len(ROWS)


def test_raw_query_engine_rejection_is_a_400_with_its_reason(client: TestClient[Any]) -> None:
    response = raw(client, {"q": "x", "query_by": "nope"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("The typesense engine rejected the query: ")
    assert "nope" in response.json()["error"]
    response = raw(client, {"q": "x", "query_by": {"nested": "object"}})
    assert response.status_code == 400 and "query_by" in response.json()["error"]


def test_raw_query_can_be_switched_off(client: TestClient[Any]) -> None:
    assert raw(client, {"q": "*", "query_by": "title"}, "locked").status_code == 403
