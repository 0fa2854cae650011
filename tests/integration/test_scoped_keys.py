"""Named keys with scopes and secured keys minted by the real ``algoliasearch`` client, on
the real app over two real tantivy indexes of books.jsonl. Every expectation is computed
from the rows here, never from the system under test."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from algoliasearch.search.client import SearchClientSync
from litestar.testing import TestClient

from searchport.domain.config import Config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.integration.conftest import BOOK_FIELDS, BOOKS

Row = dict[str, Any]
MASTER = "master-key-5Tg"
FRENCH = "french-key-9Qw"  # books only, language fr forced
OLD = "old-key-3Er"  # expired
RAW_OK = "raw-key-7Yh"  # filters forced, raw queries allowed (tantivy cannot keep them)
LIMITED = "limited-key-2Ui"  # two requests, then 429
ALGOLIA = SearchClientSync("app", "unused")


def mint(parent: str, **restrictions: Any) -> str:
    return ALGOLIA.generate_secured_api_key(parent, restrictions)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def algolia(key: str) -> dict[str, str]:
    return {"X-Algolia-API-Key": key, "X-Algolia-Application-Id": "app"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Any]]:
    base = tmp_path_factory.mktemp("scoped")

    def index(name: str) -> dict[str, Any]:
        return {"engine": "tantivy", "path": str(base / name), "source": str(BOOKS),
                "fields": BOOK_FIELDS, "defaults": {"facets": ["genre", "language"]}}

    config = msgspec.convert({
        "apiKey": MASTER,
        "rateLimit": {"trustForwardedFor": True},
        "cache": {"backend": "memory"},
        "keys": {
            "french": {"key": FRENCH, "handles": ["books"],
                       "filters": {"books": {"language": "fr"}}},
            "old": {"key": OLD, "expires": "2020-01-01T00:00:00Z"},
            "raw": {"key": RAW_OK, "filters": {"*": {"available": True}}, "rawQuery": True},
            "limited": {"key": LIMITED, "rateLimit": {"limit": 2, "window": 3600}},
        },
        "indexes": {"books": index("books"), "stock": index("stock")},
    }, Config)
    with TestClient(create_app(create_container(config, Path(base)))) as client:
        yield client


def values(row: Row, field: str) -> list[Any]:
    value = row.get(field)
    return [] if value is None else value if isinstance(value, list) else [value]


def search(client: TestClient[Any], key: str, handle: str = "books",
           **params: Any) -> dict[str, Any]:
    query = {k: v if isinstance(v, str | int) else json.dumps(v) for k, v in params.items()}
    response = client.get(f"/{handle}/search", params={"perPage": 100, **query},
                          headers=bearer(key))
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def ids(hits: list[Row]) -> set[str]:
    return {str(h["objectID"]) for h in hits}


def chosen(rows: list[Row], keep: Callable[[Row], bool]) -> set[str]:
    return {str(r["id"]) for r in rows if keep(r)}


def french(row: Row) -> bool:
    return "fr" in values(row, "language")


# ----------------------------------------------------------------- named keys

def test_a_key_lists_and_reads_only_its_handles(client: TestClient[Any]) -> None:
    listed = client.get("/indexes", headers=bearer(FRENCH)).json()
    assert [i["handle"] for i in listed["indexes"]] == ["books"]
    assert listed["indexes"][0]["capabilities"]["rawQuery"] is False
    every = client.get("/indexes", headers=bearer(MASTER)).json()
    assert [i["handle"] for i in every["indexes"]] == ["books", "stock"]
    hidden = client.get("/stock/search", headers=bearer(FRENCH))
    unknown = client.get("/nowhere/search", headers=bearer(FRENCH))
    assert hidden.status_code == unknown.status_code == 404
    assert hidden.json() == {"error": 'Index "stock" not found'}  # as if it did not exist
    algolia_list = client.get("/1/indexes", headers=algolia(FRENCH)).json()
    assert [i["name"] for i in algolia_list["items"]] == ["books"]
    for path in ("/stock/fields", "/stock/mapping", "/stock/autocomplete",
                 "/stock/documents/b01", "/1/indexes/stock/settings", "/1/indexes/stock/b01"):
        assert client.get(path, headers=bearer(FRENCH)).status_code == 404, path


def test_forced_filters_hold_whatever_the_request_asks(client: TestClient[Any],
                                                       rows: list[Row]) -> None:
    # an OR that reaches outside, a negation of the forced value, and nothing at all
    wide = search(client, FRENCH, filters={"language": ["fr", "de", "en"]}, facets="language")
    assert ids(wide["hits"]) == chosen(rows, french)
    assert wide["totalHits"] == len(chosen(rows, french))
    # the language facet is disjunctive: its own filter is dropped, the forced one is not
    assert wide["facets"]["language"] == [{"value": "fr", "count": len(chosen(rows, french))}]
    denied = search(client, FRENCH, filters={"language": {"not": "fr"}})
    assert denied["totalHits"] == 0 and denied["hits"] == []
    narrow = search(client, FRENCH, filters={"year": {"min": 1950}})
    assert ids(narrow["hits"]) == chosen(
        rows, lambda r: french(r) and any(y >= 1950 for y in values(r, "year")))
    histogram = search(client, FRENCH, histogram={"year": 50}, perPage=0)
    assert sum(b["count"] for b in histogram["histograms"]["year"]) == sum(
        1 for r in rows if french(r) and values(r, "year"))


def test_facet_values_and_autocomplete_stay_inside(client: TestClient[Any],
                                                   rows: list[Row]) -> None:
    expected = Counter(g for r in rows if french(r) for g in values(r, "genre"))
    found = client.get("/books/facets/genre", params={"maxValues": 100},
                       headers=bearer(FRENCH)).json()
    assert {v["value"]: v["count"] for v in found["values"]} == dict(expected)
    languages = client.get("/books/facets/language", headers=bearer(FRENCH),
                           params={"filters": json.dumps({"language": ["de", "fr"]})}).json()
    assert [v["value"] for v in languages["values"]] == ["fr"]
    typed = client.get("/books/autocomplete", params={"q": "the", "facets": "language",
                                                      "perPage": 20},
                       headers=bearer(FRENCH)).json()
    assert ids(typed["hits"]) <= chosen(rows, french)
    assert {v["value"] for v in typed.get("facets", {}).get("language", [])} <= {"fr"}


def test_documents_outside_the_filters_are_not_found(client: TestClient[Any],
                                                     rows: list[Row]) -> None:
    inside = next(r for r in rows if french(r))
    outside = next(r for r in rows if not french(r))
    assert client.get(f"/books/documents/{inside['id']}", headers=bearer(FRENCH)).status_code == 200
    refused = client.get(f"/books/documents/{outside['id']}", headers=bearer(FRENCH))
    missing = client.get("/books/documents/no-such-id", headers=bearer(FRENCH))
    assert refused.status_code == missing.status_code == 404
    assert refused.json() == missing.json()
    assert client.get(f"/1/indexes/books/{outside['id']}", headers=algolia(FRENCH)
                      ).status_code == 404
    objects = client.post("/1/indexes/*/objects", headers=algolia(FRENCH), json={"requests": [
        {"indexName": "books", "objectID": str(inside["id"])},
        {"indexName": "books", "objectID": str(outside["id"])}]}).json()
    assert [o and o["objectID"] for o in objects["results"]] == [str(inside["id"]), None]
    mixed = client.post("/1/indexes/*/objects", headers=algolia(FRENCH), json={"requests": [
        {"indexName": "books", "objectID": str(inside["id"])},
        {"indexName": "stock", "objectID": str(inside["id"])}]})
    assert mixed.status_code == 404


def test_raw_queries_are_refused_with_the_reason(client: TestClient[Any]) -> None:
    body = {"query": "*"}
    refused = client.post("/books/query", json=body, headers=bearer(FRENCH))
    assert refused.status_code == 403
    assert "may not run raw queries" in refused.json()["error"]
    allowed_but_unkept = client.post("/books/query", json=body, headers=bearer(RAW_OK))
    assert allowed_but_unkept.status_code == 403
    assert "cannot keep" in allowed_but_unkept.json()["error"]
    assert client.post("/books/query", json=body, headers=bearer(MASTER)).status_code == 200


def test_restricted_keys_cannot_clear_the_cache_or_read_metrics(client: TestClient[Any]) -> None:
    assert client.post("/cache/clear", headers=bearer(FRENCH)).status_code == 403
    assert client.get("/metrics", headers=bearer(FRENCH)).status_code == 403
    assert client.get("/metrics", headers=bearer(MASTER)).status_code == 200


def test_an_expired_key_is_refused_as_any_bad_key(client: TestClient[Any]) -> None:
    expired = client.get("/books/search", headers=bearer(OLD))
    wrong = client.get("/books/search", headers=bearer("nope"))
    assert expired.status_code == wrong.status_code == 401
    assert expired.content == wrong.content


def test_a_key_has_its_own_rate_limit(client: TestClient[Any]) -> None:
    statuses = [client.get("/books/search", headers=bearer(LIMITED)).status_code
                for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert client.get("/books/search", headers=bearer(MASTER)).status_code == 200


# ----------------------------------------------------------------- secured keys

def algolia_query(client: TestClient[Any], key: str, handle: str = "books",
                  **params: Any) -> Any:
    return client.post(f"/1/indexes/{handle}/query", headers=algolia(key),
                       json={"hitsPerPage": 100, **params})


def fiction_or_recent(row: Row) -> bool:
    return "fiction" in values(row, "genre") or any(y > 2000 for y in values(row, "year"))


def test_secured_filters_are_anded_to_every_algolia_search(client: TestClient[Any],
                                                           rows: list[Row]) -> None:
    key = mint(MASTER, filters="genre:fiction OR year > 2000")
    widened = algolia_query(client, key, filters="genre:poetry OR NOT genre:fiction",
                            facets=["genre"]).json()
    expected = chosen(rows, lambda r: fiction_or_recent(r) and (
        "poetry" in values(r, "genre") or "fiction" not in values(r, "genre")))
    assert ids(widened["hits"]) == expected and widened["nbHits"] == len(expected)
    inside = [r for r in rows if str(r["id"]) in expected]
    assert widened["facets"]["genre"] == dict(Counter(g for r in inside
                                                      for g in values(r, "genre")))
    facet_or = algolia_query(client, key, facetFilters=[["language:fr", "language:de"]]).json()
    assert ids(facet_or["hits"]) == chosen(rows, lambda r: fiction_or_recent(r) and bool(
        {"fr", "de"} & set(values(r, "language"))))
    numeric = algolia_query(client, key, numericFilters=[["year < 1900", "year > 1000"]]).json()
    assert ids(numeric["hits"]) == chosen(rows, lambda r: fiction_or_recent(r) and any(
        y < 1900 or y > 1000 for y in values(r, "year")))
    # the native routes keep the same filters
    native = search(client, key, filters={"genre": ["poetry", "fiction", "history"]})
    assert ids(native["hits"]) == chosen(rows, lambda r: fiction_or_recent(r) and bool(
        {"poetry", "fiction", "history"} & set(values(r, "genre"))))


def test_secured_facet_value_search_and_browse_stay_inside(client: TestClient[Any],
                                                           rows: list[Row]) -> None:
    key = mint(MASTER, filters="language:fr")
    hits = client.post("/1/indexes/books/facets/genre/query", headers=algolia(key),
                       json={"facetQuery": "", "maxFacetHits": 100}).json()["facetHits"]
    assert {h["value"]: h["count"] for h in hits} == dict(
        Counter(g for r in rows if french(r) for g in values(r, "genre")))
    browsed = client.post("/1/indexes/books/browse", headers=algolia(key),
                          json={"hitsPerPage": 100}).json()
    assert ids(browsed["hits"]) == chosen(rows, french)
    stats = algolia_query(client, key, facets=["year"], hitsPerPage=0).json()
    french_years = [y for r in rows if french(r) for y in values(r, "year")]
    assert stats["facets_stats"]["year"]["min"] == min(french_years)
    assert stats["facets_stats"]["year"]["max"] == max(french_years)


def test_restrict_indices_covers_every_route_and_the_whole_multi_query(
        client: TestClient[Any]) -> None:
    key = mint(MASTER, restrictIndices=["boo*"])
    assert algolia_query(client, key).status_code == 200
    assert algolia_query(client, key, handle="stock").status_code == 404
    assert client.get("/stock/search", headers=bearer(key)).status_code == 404
    listed = client.get("/indexes", headers=bearer(key)).json()
    assert [i["handle"] for i in listed["indexes"]] == ["books"]
    mixed = client.post("/1/indexes/*/queries", headers=algolia(key), json={"requests": [
        {"indexName": "books", "params": "query="}, {"indexName": "stock"}]})
    assert mixed.status_code == 404 and "results" not in mixed.json()
    assert client.post("/books/query", json={"query": "*"}, headers=bearer(key)
                       ).status_code == 403
    # a secured key never widens its parent: FRENCH reads books only, with fr forced
    child = mint(FRENCH, restrictIndices=["*"], filters="genre:fiction")
    assert client.get("/stock/search", headers=bearer(child)).status_code == 404
    body = search(client, child)
    assert all(h["language"] == "fr" and h["genre"] == "fiction" for h in body["hits"])


def test_bad_secured_keys_are_one_plain_401(client: TestClient[Any]) -> None:
    good = mint(MASTER, filters="language:fr", validUntil=int(time.time()) + 3600)
    assert algolia_query(client, good).status_code == 200
    decoded = __import__("base64").b64decode(good).decode()
    tampered = __import__("base64").b64encode(
        decoded.replace("language%3Afr", "language%3Ade").encode()).decode()
    cases = {
        "expired": mint(MASTER, validUntil=int(time.time()) - 1),
        "foreign": mint("someone-elses-key", filters="language:fr"),
        "tampered": tampered,
        "truncated": good[:-8],
        "unknown restriction": mint(MASTER, hitsPerPage=1000),
        "bad filters": mint(MASTER, filters="language:fr AND ("),
        "elsewhere": mint(MASTER, restrictSources="10.1.0.0/16"),
    }
    bodies = set()
    for name, key in cases.items():
        for response in (algolia_query(client, key), client.get("/books/search",
                                                                headers=bearer(key))):
            assert response.status_code == 401, name
            assert key not in response.text
            bodies.add(response.json()["error"])
    assert bodies == {"Unauthorized"}


def test_restrict_sources_reads_the_forwarded_address(client: TestClient[Any]) -> None:
    key = mint(MASTER, restrictSources="192.168.1.0/24")
    inside = client.get("/books/search", headers={**bearer(key),
                                                   "X-Forwarded-For": "192.168.1.20"})
    outside = client.get("/books/search", headers={**bearer(key),
                                                    "X-Forwarded-For": "192.168.2.20"})
    assert (inside.status_code, outside.status_code) == (200, 401)
    v6 = mint(MASTER, restrictSources="2001:db8::/32")
    assert client.get("/books/search", headers={**bearer(v6), "X-Forwarded-For": "2001:db8::1"}
                      ).status_code == 200


def test_scoped_answers_are_cached_and_tagged_apart(client: TestClient[Any],
                                                    rows: list[Row]) -> None:
    url = "/books/search?q=&perPage=100&facets=language"
    key = mint(MASTER, filters="language:de")
    # the response cache keeps the unrestricted answer
    first = [client.get(url, headers=bearer(MASTER)) for _ in range(3)]
    scoped = client.get(url, headers=bearer(key))
    again = client.get(url, headers=bearer(MASTER))
    assert ids(first[-1].json()["hits"]) == ids(again.json()["hits"]) == {
        str(r["id"]) for r in rows}
    assert ids(scoped.json()["hits"]) == chosen(rows, lambda r: "de" in values(r, "language"))
    assert scoped.headers["etag"] != again.headers["etag"]
    assert scoped.headers["cache-control"].startswith("private")
    # the unrestricted ETag does not validate the scoped answer
    revalidated = client.get(url, headers={**bearer(key), "If-None-Match":
                                           again.headers["etag"]})
    assert revalidated.status_code == 200
    assert ids(revalidated.json()["hits"]) == ids(scoped.json()["hits"])


def test_a_scoped_answer_is_never_sent_to_another_key(client: TestClient[Any],
                                                       rows: list[Row]) -> None:
    url = "/books/search?q=&perPage=99"
    for _ in range(3):  # a scoped key asks first, several times
        scoped = client.get(url, headers=bearer(FRENCH))
        assert ids(scoped.json()["hits"]) == chosen(rows, french)
    for _ in range(3):
        plain = client.get(url, headers=bearer(MASTER))
        assert ids(plain.json()["hits"]) == {str(r["id"]) for r in rows}


def test_geo_clusters_follow_the_forced_filters(client: TestClient[Any], rows: list[Row]) -> None:
    body = search(client, FRENCH, geoGrid={"field": "location", "precision": 1}, perPage=0)
    located = [r for r in rows if french(r) and r.get("location")]
    assert sum(c["count"] for c in body["geoClusters"]) == len(located) > 0


def test_keys_of_one_user_share_one_allowance(tmp_path: Path) -> None:
    config = msgspec.convert({
        "apiKey": MASTER, "rateLimit": {"perToken": {"limit": 2, "window": 3600}},
        "indexes": {"books": {"engine": "tantivy", "path": str(tmp_path / "i"),
                              "source": str(BOOKS), "fields": BOOK_FIELDS}}}, Config)
    with TestClient(create_app(create_container(config, tmp_path))) as client:
        alice = [mint(MASTER, userToken="alice", filters=f"year > {n}") for n in range(3)]
        statuses = [client.get("/books/search", headers=bearer(k)).status_code for k in alice]
        assert statuses == [200, 200, 429]
        bob = mint(MASTER, userToken="bob")
        assert client.get("/books/search", headers=bearer(bob)).status_code == 200
