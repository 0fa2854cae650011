"""Rules on the search routes, through the real app over a real tantivy index of books:
the Algolia query route (promotes and hides paged through, userData, appliedRules,
renderingContent, enableRules, ruleContexts, getRankingInfo) and ``/:handle/search``.
Expected hits come from the rows in plain Python."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.domain.config import Config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.integration.conftest import BOOK_FIELDS, BOOKS, load_rows, text_matches

Row = dict[str, Any]
RULES: list[dict[str, Any]] = [
    {"objectID": "pin", "conditions": [{"pattern": "", "anchoring": "is"}],
     "consequence": {"promote": [{"objectID": "b40", "position": 0},
                                 {"objectIDs": ["b30", "b20"], "position": 3}],
                     "hide": [{"objectID": "b02"}, {"objectID": "b07"}],
                     "userData": {"banner": "all.png"}}},
    {"objectID": "cheap", "conditions": [{"pattern": "cheap", "anchoring": "contains"}],
     "consequence": {"params": {"query": {"remove": ["cheap"]}, "filters": "price < 15",
                                "renderingContent": {"facetOrdering": {
                                    "facets": {"order": ["language", "kind"]}}}},
                     "userData": {"banner": "cheap.png"}}},
    {"objectID": "app-only", "conditions": [{"context": "app"}],
     "consequence": {"params": {"facetFilters": ["kind:fiction"]}}},
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Any]]:
    base = tmp_path_factory.mktemp("rules-http")
    fields = {**BOOK_FIELDS, "id": {"type": "keyword"}, "kind": {"field": "genre"}}
    config = msgspec.convert({"indexes": {"books": {
        "engine": "tantivy", "path": str(base / "index"), "source": str(BOOKS),
        "fields": fields, "defaults": {"facets": ["genre", "language"]},
        "rules": RULES,
    }}}, Config)
    with TestClient(create_app(create_container(config, Path(base)))) as client:
        yield client


def search(client: TestClient[Any], **params: Any) -> dict[str, Any]:
    encoded = urlencode({k: v if isinstance(v, str) else json.dumps(v)
                         for k, v in params.items()})
    response = client.post("/1/indexes/books/query", content=json.dumps({"params": encoded}),
                           headers={"content-type": "application/x-www-form-urlencoded"})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def walk(organic: list[str], promoted: list[tuple[str, int]]) -> list[str]:
    queue, rest, found = list(promoted), list(organic), []
    while queue or rest:
        if queue and (queue[0][1] <= len(found) or not rest):
            found.append(queue.pop(0)[0])
        else:
            found.append(rest.pop(0))
    return found


@pytest.mark.parametrize("per_page", [1, 4, 7, 20])
def test_pages_hold_promoted_records_once_and_never_hidden_ones(
        client: TestClient[Any], per_page: int) -> None:
    ids = [str(r["id"]) for r in load_rows()]
    first = search(client, query="", hitsPerPage=per_page, page=0)
    # the empty query lists records in the engine's order: learn it without rules
    plain: list[str] = []
    page = 0
    while True:
        body = search(client, query="", hitsPerPage=48, page=page, enableRules=False)
        if not body["hits"]:
            break
        plain += [h["objectID"] for h in body["hits"]]
        page += 1
    assert sorted(plain) == sorted(ids)
    organic = [i for i in plain if i not in {"b02", "b07", "b40", "b30", "b20"}]
    expected = walk(organic, [("b40", 0), ("b30", 3), ("b20", 4)])
    shown: list[str] = []
    for page in range(first["nbPages"] + 1):
        body = search(client, query="", hitsPerPage=per_page, page=page)
        assert body["nbHits"] == len(expected)
        shown += [h["objectID"] for h in body["hits"]]
    assert shown == expected
    assert first["userData"] == [{"banner": "all.png"}]
    assert first["appliedRules"] == [{"objectID": "pin"}]


def test_query_edits_filters_user_data_and_facet_ordering(client: TestClient[Any]) -> None:
    rows = load_rows()
    body = search(client, query="cheap castle", hitsPerPage=50, facets=["genre", "language"])
    want = {str(r["id"]) for r in rows if r.get("price", 99) < 15
            and text_matches(r, "castle")}
    assert want
    assert {h["objectID"] for h in body["hits"]} == want
    assert body["nbHits"] == len(want)
    assert body["userData"] == [{"banner": "cheap.png"}]
    assert body["appliedRules"] == [{"objectID": "cheap"}]
    assert body["renderingContent"] == {"facetOrdering": {"facets": {
        "order": ["language", "kind"]}}}
    assert body["query"] == "cheap castle"  # the query as asked


def test_enable_rules_false_and_rule_contexts(client: TestClient[Any]) -> None:
    rows = load_rows()
    off = search(client, query="cheap castle", enableRules=False, hitsPerPage=50,
                 optionalWords=["cheap"])
    assert "userData" not in off and "appliedRules" not in off
    # Algolia's words: "castle" must match, "cheap" is optional
    assert off["nbHits"] == sum(1 for r in rows if text_matches(r, "castle")) > 0
    fiction = {str(r["id"]) for r in rows if r.get("genre") == "fiction"}
    app = search(client, query="", ruleContexts=["app"], hitsPerPage=50)
    assert app["appliedRules"] == [{"objectID": "pin"}, {"objectID": "app-only"}]
    shown = {h["objectID"] for h in app["hits"]}
    assert shown - {"b40", "b30", "b20"} == fiction - {"b02", "b07", "b40", "b30", "b20"}


def test_get_ranking_info_marks_the_promoted_hits(client: TestClient[Any]) -> None:
    # Algolia's _rankingInfo requires nbTypos, firstMatchedWord, geoDistance, nbExactWords
    # and userScore (the stock clients refuse a hit without them)
    body = search(client, query="", hitsPerPage=5, getRankingInfo=True)
    ids = [h["objectID"] for h in body["hits"]]
    assert ids[0] == "b40" and ids[3:5] == ["b30", "b20"]
    for hit in body["hits"]:
        info = hit.get("_rankingInfo")
        if hit["objectID"] in ("b40", "b30", "b20"):
            assert info is not None and info["promoted"] is True
            assert {"nbTypos", "firstMatchedWord", "geoDistance", "nbExactWords",
                    "userScore"} <= set(info)
        else:
            assert info is None
    plain = search(client, query="", hitsPerPage=5)
    assert all("_rankingInfo" not in h for h in plain["hits"])


def test_the_json_api_applies_rules_and_returns_user_data(client: TestClient[Any]) -> None:
    rows = load_rows()
    response = client.get("/books/search", params={"q": "cheap castle", "perPage": 50})
    assert response.status_code == 200, response.text
    body = response.json()
    want = {str(r["id"]) for r in rows if r.get("price", 99) < 15
            and text_matches(r, "castle")}
    assert {h["objectID"] for h in body["hits"]} == want
    assert body["userData"] == [{"banner": "cheap.png"}]
    contexts = client.get("/books/search", params={"q": "", "ruleContexts": "web,app",
                                                    "perPage": 50}).json()
    assert {h["objectID"] for h in contexts["hits"]} - {"b40", "b30", "b20"} <= {
        str(r["id"]) for r in rows if r.get("genre") == "fiction"}
    off = client.get("/books/search", params={"q": "", "enableRules": "false"}).json()
    assert "userData" not in off
    assert off["totalHits"] == len(rows)


def test_the_read_only_rule_routes(client: TestClient[Any]) -> None:
    found = client.post("/1/indexes/books/rules/search", json={"query": "chea"})
    assert found.status_code == 200, found.text
    assert found.json() == {"hits": [RULES[1]], "nbHits": 1, "page": 0, "nbPages": 1}
    every = client.post("/1/indexes/books/rules/search", json={"hitsPerPage": 2, "page": 1})
    assert [r["objectID"] for r in every.json()["hits"]] == ["pin"]
    assert every.json()["nbPages"] == 2
    assert client.post("/1/indexes/books/rules/search", json={"context": "app"}).json()[
        "hits"] == [RULES[2]]
    one = client.get("/1/indexes/books/rules/cheap")
    assert one.status_code == 200 and one.json() == RULES[1]
    missing = client.get("/1/indexes/books/rules/nope")
    assert missing.status_code == 404
    assert missing.json()["message"] == "ObjectID does not exist"
    bad = client.post("/1/indexes/books/rules/search", json={"hitsPerPage": 0})
    assert bad.status_code == 400
    assert client.put("/1/indexes/books/rules/cheap", json=RULES[1]).status_code in (404, 405)
