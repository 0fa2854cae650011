"""Query rules and a virtual replica on Meilisearch: promoted and hidden records travel as
filters on the primary key (``id IN [...]``, ``id NOT IN [...]``), held against
Meilisearch's published specification like every exchange of this tier, and answered by a
scripted Meilisearch that reads those filters over a list of records. Paging through a
search with promotes and hides gives every record once, at the places computed here."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.contract.meilisearch import meili_answers as ma
from tests.contract.meilisearch.conftest import MeiliApp, MeiliDouble, books_yaml

RECORDS = [{"id": f"b{i:02d}", "title": f"book {i}", "year": 1950 + (i * 11) % 60}
           for i in range(25)]
RULES = [{"objectID": "pins", "conditions": [{"context": "pinned"}],
          "consequence": {"promote": [{"objectID": "b17", "position": 0},
                                      {"objectIDs": ["b03", "b22"], "position": 4}],
                          "hide": [{"objectID": "b00"}, {"objectID": "b09"}]}}]
ID_FILTER = re.compile(r'^id (IN|NOT IN) \[(.*)\]$|^id = (".*")$')


def ids_of(filters: list[str]) -> tuple[list[str] | None, set[str]]:
    only: list[str] | None = None
    left_out: set[str] = set()
    for text in filters:
        found = ID_FILTER.match(text)
        if found is None:
            continue
        if found.group(3) is not None:
            only = [json.loads(found.group(3))]
            continue
        values = json.loads(f"[{found.group(2)}]")
        if found.group(1) == "IN":
            only = values
        else:
            left_out |= set(values)
    return only, left_out


def answer(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    only, left_out = ids_of(body.get("filter", []))
    rows = [r for r in RECORDS if r["id"] not in left_out and (only is None or r["id"] in only)]
    hits = [ma.hit(r, score=1 - int(r["id"][1:]) / 100) for r in rows]
    if "page" in body:
        size = body["hitsPerPage"]
        start = (body["page"] - 1) * size
        found = ma.search(hits[start:start + size], total=len(rows), page=body["page"],
                          hits_per_page=size)
    else:
        start, size = body["offset"], body["limit"]
        found = ma.estimated(hits[start:start + size], estimated_total=len(rows),
                             offset=start, limit=size)
    return httpx.Response(200, json=found)


@pytest.fixture
def app(meili_app: Callable[..., MeiliApp]) -> MeiliApp:
    config = books_yaml(settings=f"rules: {json.dumps(RULES)}",
                        fields="    fields:\n      title: {weight: 2}\n"
                               "      year: {type: integer}\n")
    config += ("  books-relevant:\n    replicaOf: books\n    relevantSort: {strictness: 0}\n"
               "    customRanking: [{field: year, order: desc}]\n")
    return meili_app(config, MeiliDouble().search(answer))


def test_promotes_and_hides_are_primary_key_filters_paged_through_once(app: MeiliApp
                                                                       ) -> None:
    hidden = {"b00", "b09"}
    promoted = [("b17", 0), ("b03", 4), ("b22", 5)]
    organic = [r["id"] for r in RECORDS if r["id"] not in hidden | {p for p, _ in promoted}]
    want: list[str] = []
    while promoted or organic:
        if promoted and (promoted[0][1] <= len(want) or not organic):
            want.append(promoted.pop(0)[0])
        else:
            want.append(organic.pop(0))
    shown: list[str] = []
    for page in range(math.ceil(len(want) / 6)):
        response = app.post("/1/indexes/books/query", json={"params": {
            "ruleContexts": ["pinned"], "hitsPerPage": 6, "page": page}})
        assert response.status_code == 200, response.text
        assert response.json()["nbHits"] == len(RECORDS) - len(hidden)
        shown += [h["objectID"] for h in response.json()["hits"]]
    assert shown == want
    filters = [s.body.get("filter", []) for s in app.data_requests()]
    assert 'id NOT IN ["b00", "b09", "b17", "b03", "b22"]' in {f for fs in filters for f in fs}
    assert any(ids_of(fs)[0] == ["b17", "b03", "b22"] for fs in filters)


def test_a_virtual_replica_orders_the_pool_by_its_ranking(app: MeiliApp) -> None:
    response = app.post("/1/indexes/books-relevant/query", json={"params": {
        "query": "book", "hitsPerPage": 4}})
    assert response.status_code == 200, response.text
    body = response.json()
    by_year = sorted(RECORDS, key=lambda r: -int(r["year"]))
    assert [h["objectID"] for h in body["hits"]] == [r["id"] for r in by_year[:4]]
    assert body["nbSortedHits"] == body["nbHits"] == len(RECORDS)
    pool, page = app.data_requests()[-2:]
    assert pool.body["attributesToRetrieve"] == ["year", "id"]
    assert ids_of(page.body["filter"])[0] == [r["id"] for r in by_year[:4]]


def test_the_answers_read_back_are_the_scripted_ones(app: MeiliApp) -> None:
    body: dict[str, Any] = app.post("/1/indexes/books/query", json={"params": {
        "hitsPerPage": 3}}).json()
    assert [h["objectID"] for h in body["hits"]] == ["b00", "b01", "b02"]
