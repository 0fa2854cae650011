"""customRanking on a real Typesense 0.24.1: ``sort_by: _text_match:desc,<keys>``, so
equally relevant hits come in the ranking's order, and an explicit sort replaces it.
Expected orders are computed in plain Python from the loaded rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.integration.typesense_server import app_client, index_settings, typesense_rows
from tests.typesense_server import TypesenseServer

Row = dict[str, Any]
ROWS = typesense_rows()
BY_ID = {r["id"]: r for r in ROWS}
DATED = {"year": {"min": 0}}  # rows with a year: Typesense 0.24 has no rule for missing ones


@pytest.fixture(scope="module")
def client(server: TypesenseServer) -> Iterator[TestClient[Any]]:
    ranked = index_settings(server, fields={"title": {"weight": 2}, "when": {"field": "year"}},
                            customRanking=[{"field": "when", "order": "desc"},
                                           {"field": "price", "order": "asc"}])
    with app_client({"ranked": ranked}) as client:
        yield client


def hits(client: TestClient[Any], **params: Any) -> list[Row]:
    encoded = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in params.items()}
    response = client.get("/ranked/search", params={"perPage": 100, **encoded})
    assert response.status_code == 200, response.text
    return [BY_ID[h["objectID"]] for h in response.json()["hits"]]


def ranking_key(row: Row) -> tuple[float, float]:
    return (-row["year"], row["price"] if row.get("price") is not None else float("inf"))


def test_equally_relevant_hits_follow_the_custom_ranking(client: TestClient[Any]) -> None:
    """No text: every hit is as relevant as the next, so year desc then price asc decide
    (the ranking's alias "when" is the field year)."""
    found = hits(client, filters=DATED)
    want = sorted((r for r in ROWS if r.get("year") is not None), key=ranking_key)
    assert [ranking_key(r) for r in found] == [ranking_key(r) for r in want]
    assert {r["id"] for r in found} == {r["id"] for r in want}


def test_each_relevance_level_is_in_ranking_order(client: TestClient[Any]) -> None:
    """"castle": the hits are grouped by how they match; within the titles holding the word
    castle itself and within the others, the ranking's order holds."""
    found = hits(client, q="castle", filters=DATED)
    whole = [r for r in found if "castle" in r["title"].lower().split()]
    assert len(whole) >= 2
    keys = [ranking_key(r) for r in whole]
    assert keys == sorted(keys)


def test_an_explicit_sort_replaces_the_custom_ranking(client: TestClient[Any]) -> None:
    found = hits(client, filters=DATED, sort={"price": "desc"})
    prices = [r["price"] for r in found if r.get("price") is not None]
    assert prices == sorted(prices, reverse=True) and len(prices) >= 5
