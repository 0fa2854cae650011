"""Query rules and replicas on Elasticsearch and OpenSearch: the requests the adapter sends
for promoted and hidden records (``ids`` queries, held against each engine's published
specification like every exchange of this tier) and for a virtual replica, answered by a
scripted engine that reads those clauses over a list of records. Paging through a search
with promotes and hides then gives every record once, at the places computed here."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import EngineDouble, EsApp, city_yaml, serve_es

RECORDS = [{"id": f"d{i:02d}", "name": f"city {i}", "population": 1000 * ((i * 7) % 23)}
           for i in range(30)]
RULES = [{"objectID": "pins", "conditions": [{"context": "pinned"}],
          "consequence": {"promote": [{"objectIDs": ["d20", "d05"], "position": 1},
                                      {"objectID": "d29", "position": 6}],
                          "hide": [{"objectID": "d01"}, {"objectID": "d11"}]}}]


def ids_of(clauses: list[Any]) -> tuple[list[str] | None, set[str]]:
    """The records a search's filter clauses keep by id, and those they leave out."""
    only: list[str] | None = None
    left_out: set[str] = set()
    for clause in clauses:
        if "ids" in clause:
            only = clause["ids"]["values"]
        for inner in clause.get("bool", {}).get("must_not", []):
            if "ids" in inner:
                left_out |= set(inner["ids"]["values"])
    return only, left_out


def answer(request: httpx.Request) -> httpx.Response:
    """A search over ``RECORDS`` in their order, honouring ``from``, ``size`` and the
    ``ids`` clauses of ``query.bool.filter`` (what searchport's rules add)."""
    body = json.loads(request.content)
    query = body.get("query", {})
    clauses = query.get("bool", {}).get("filter", []) if "bool" in query else []
    only, left_out = ids_of(clauses)
    rows = [r for r in RECORDS if r["id"] not in left_out
            and (only is None or r["id"] in only)]
    page = rows[body.get("from", 0):body.get("from", 0) + body.get("size", 10)]
    found = es.search([es.hit(r["id"], {k: v for k, v in r.items() if k != "id"},
                              score=float(100 - int(r["id"][1:]))) for r in page],
                      total=len(rows))
    return httpx.Response(200, json=found, headers={"Content-Type": "application/json"})


@pytest.fixture
def app(engine: str) -> Iterator[EsApp]:
    settings = (f"rules: {json.dumps(RULES)}\n")
    config = city_yaml(engine, settings=settings, fields="    fields:\n      name: {weight: 2}\n"
                       "      population: {type: integer}\n")
    config += ("  cities-relevant:\n    replicaOf: cities\n    relevantSort: {strictness: 0}\n"
               "    customRanking: [{field: population, order: asc}]\n")
    double = EngineDouble(engine).search(answer)
    with serve_es(config, double) as started:
        yield started


def expected_pinned() -> list[str]:
    organic = [r["id"] for r in RECORDS if r["id"] not in {"d01", "d11", "d20", "d05", "d29"}]
    promoted = [("d20", 1), ("d05", 2), ("d29", 6)]
    found: list[str] = []
    while promoted or organic:
        if promoted and (promoted[0][1] <= len(found) or not organic):
            found.append(promoted.pop(0)[0])
        else:
            found.append(organic.pop(0))
    return found


def test_promotes_and_hides_are_ids_queries_paged_through_once(app: EsApp) -> None:
    want = expected_pinned()
    shown: list[str] = []
    for page in range(math.ceil(len(want) / 4)):
        response = app.post("/1/indexes/cities/query", json={"params": {
            "ruleContexts": ["pinned"], "hitsPerPage": 4, "page": page}})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["nbHits"] == len(RECORDS) - 2
        shown += [h["objectID"] for h in body["hits"]]
    assert shown == want
    organic, promoted = [], []
    for sent in app.searches():
        only, left_out = ids_of(sent.body["query"]["bool"]["filter"])
        (organic if only is None else promoted).append((only, left_out))
    assert organic and all(left == {"d01", "d11", "d20", "d05", "d29"} for _, left in organic)
    assert promoted and all(sorted(only or []) == ["d05", "d20", "d29"] for only, _ in promoted)


def test_a_virtual_replica_reads_the_relevant_pool_then_the_page_by_id(app: EsApp) -> None:
    response = app.post("/1/indexes/cities-relevant/query", json={"params": {
        "query": "city", "hitsPerPage": 5, "page": 1}})
    assert response.status_code == 200, response.text
    body = response.json()
    by_population = sorted(RECORDS, key=lambda r: r["population"])  # stable: ties in order
    assert [h["objectID"] for h in body["hits"]] == [r["id"] for r in by_population[5:10]]
    assert body["nbSortedHits"] == body["nbHits"] == len(RECORDS)
    assert body["appliedRelevancyStrictness"] == 0
    pool, page = app.searches()
    assert (pool.body["from"], pool.body["size"], pool.body["_source"]) == (0, 250,
                                                                           ["population"])
    assert "highlight" not in pool.body
    only, _ = ids_of(page.body["query"]["bool"]["filter"])
    assert only == [r["id"] for r in by_population[5:10]]
