"""Search over real HTTP against a real `searchport serve` on the sample cities."""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import pytest

from tests.e2e.conftest import Server

Rows = list[dict[str, Any]]


def search(server: Server, **params: Any) -> dict[str, Any]:
    encoded = {k: json.dumps(v) if isinstance(v, dict) else str(v) for k, v in params.items()}
    response = server.client.get("/cities/search", params=encoded)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def facet_counts(rows: Rows, field: str) -> list[dict[str, Any]]:
    counter: Counter[str] = Counter()
    for row in rows:
        value = row.get(field)
        for item in value if isinstance(value, list) else [value]:
            if item is not None:
                counter[str(item).lower() if isinstance(item, bool) else str(item)] += 1
    ordered = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"value": v, "count": c} for v, c in ordered]


def test_empty_query_returns_everything_with_exact_totals(server: Server, rows: Rows) -> None:
    body = search(server, perPage=7)
    assert body["totalHits"] == len(rows)
    assert body["page"] == 1 and body["perPage"] == 7
    assert body["totalPages"] == math.ceil(len(rows) / 7)
    assert len(body["hits"]) == 7
    assert body["suggestions"] == []
    assert "histograms" not in body and "geoClusters" not in body


def test_default_facets_use_aliases_and_count_order(server: Server, rows: Rows) -> None:
    body = search(server)
    assert set(body["facets"]) == {"region", "country"}
    assert body["facets"]["region"] == facet_counts(rows, "continent")
    assert body["facets"]["country"] == facet_counts(rows, "country")[:100]


def test_facets_are_disjunctive(server: Server, rows: Rows) -> None:
    body = search(server, facets="region,country", filters={"region": "Europe"})
    europe = [r for r in rows if r["continent"] == "Europe"]
    assert body["totalHits"] == len(europe)
    assert body["facets"]["region"] == facet_counts(rows, "continent")  # own filter ignored
    assert body["facets"]["country"] == facet_counts(europe, "country")[:100]


@pytest.mark.parametrize(
    ("filters", "keep"),
    [
        ({"countryCode": ["FR", "DE"]}, lambda r: r["countryCode"] in ("FR", "DE")),
        ({"population": {"min": 1_000_000}}, lambda r: r["population"] >= 1_000_000),
        (
            {"population": {"min": 500_000, "max": 2_000_000}},
            lambda r: 500_000 <= r["population"] <= 2_000_000,
        ),
        (
            {"region": {"not": ["Asia", "Europe"]}},
            lambda r: r["continent"] not in ("Asia", "Europe"),
        ),
        ({"capital": True}, lambda r: r["capital"] is True),
        ({"location": {"exists": False}}, lambda r: "location" not in r),
        (
            {"region": "Asia", "population": {"max": 300_000}},
            lambda r: r["continent"] == "Asia" and r["population"] <= 300_000,
        ),
    ],
)
def test_filter_forms(server: Server, rows: Rows, filters: dict[str, Any], keep: Any) -> None:
    body = search(server, filters=filters, perPage=100, fields="name")
    expected = {r["id"] for r in rows if keep(r)}
    assert body["totalHits"] == len(expected)
    assert {h["objectID"] for h in body["hits"]} <= expected


def test_sort_keeps_key_priority(server: Server, rows: Rows) -> None:
    body = search(server, sort={"population": "desc", "countryCode": "asc"}, perPage=50,
                  fields="population,countryCode")
    expected = sorted(rows, key=lambda r: (-r["population"], r["countryCode"]))[:50]
    got = [(h["population"], h["countryCode"]) for h in body["hits"]]
    assert got == [(r["population"], r["countryCode"]) for r in expected]
    by_code = search(server, sort={"countryCode": "asc", "population": "desc"}, perPage=50,
                     fields="population,countryCode")
    expected = sorted(rows, key=lambda r: (r["countryCode"], -r["population"]))[:50]
    got = [(h["population"], h["countryCode"]) for h in by_code["hits"]]
    assert got == [(r["population"], r["countryCode"]) for r in expected]


def test_pagination_walks_the_whole_sorted_list(server: Server, rows: Rows) -> None:
    order = sorted(rows, key=lambda r: (r["population"], r["id"]))
    seen = []
    for page in (1, 2, 3):
        body = search(server, sort={"population": "asc", "countryCode": "asc"}, page=page,
                      perPage=10, fields="population")
        seen += [h["population"] for h in body["hits"]]
    assert seen == [r["population"] for r in order[:30]]


def test_highlight_is_escaped_and_metadata_wins(server: Server) -> None:
    body = search(server, q="fort script", highlight="true")
    hit = next(h for h in body["hits"] if h["objectID"] == "x-1")
    assert hit["_index"] == "cities"
    assert isinstance(hit["_score"], float) and hit["_score"] != 99
    fragments = " ".join(hit["_highlights"]["name"])
    assert "<mark>Fort</mark>" in fragments
    assert "&lt;" in fragments and "<Script>" not in fragments and "&amp;" in fragments
    assert hit["name"] == "Fort <Script> & Sons"


def test_fields_selects_stored_fields(server: Server) -> None:
    body = search(server, fields="name,region", perPage=3)
    for hit in body["hits"]:
        assert set(hit) <= {"objectID", "_index", "_score", "_highlights", "name", "region"}
        assert "name" in hit


def test_histogram_buckets_include_the_empty_ones(server: Server, rows: Rows) -> None:
    interval = 2_000_000
    body = search(server, histogram={"population": interval}, perPage=1)
    counts = Counter(int(r["population"] // interval) * interval for r in rows)
    low, high = min(counts), max(counts)
    expected = [{"key": k, "count": counts.get(k, 0)} for k in range(low, high + 1, interval)]
    assert body["histograms"]["population"] == expected


def tile(lat: float, lon: float, zoom: int) -> str:
    n = 2**zoom
    x = min(n - 1, int((lon + 180.0) / 360.0 * n))
    rad = math.radians(lat)
    y = min(n - 1, int((1.0 - math.asinh(math.tan(rad)) / math.pi) / 2.0 * n))
    return f"{zoom}/{x}/{y}"


def test_geo_clusters_have_centroids_and_sample_hits(server: Server, rows: Rows) -> None:
    body = search(server, geoGrid={"field": "location", "precision": 2}, perPage=1)
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if "location" in row:
            loc = row["location"]
            groups.setdefault(tile(loc["lat"], loc["lon"], 2), []).append(loc)
    clusters = {c["key"]: c for c in body["geoClusters"]}
    assert {k: c["count"] for k, c in clusters.items()} == {k: len(v) for k, v in groups.items()}
    for key, members in groups.items():
        assert clusters[key]["lat"] == pytest.approx(sum(m["lat"] for m in members) / len(members))
        assert clusters[key]["lng"] == pytest.approx(sum(m["lon"] for m in members) / len(members))
        assert clusters[key]["hit"]["objectID"]


def test_geo_bounds_limit_the_hits(server: Server, rows: Rows) -> None:
    box = {"top_left": {"lat": 60, "lon": -10}, "bottom_right": {"lat": 35, "lon": 30}}
    body = search(server, geoGrid={"field": "location", "precision": 3, "bounds": box})
    inside = [
        r for r in rows if "location" in r
        and 35 <= r["location"]["lat"] <= 60 and -10 <= r["location"]["lon"] <= 30
    ]
    assert body["totalHits"] == len(inside)
    assert sum(c["count"] for c in body["geoClusters"]) == len(inside)


def test_text_search_finds_every_city_with_the_word(server: Server, rows: Rows) -> None:
    body = search(server, q="shanghai", perPage=100)
    expected = {r["id"] for r in rows if "shanghai" in r["name"].lower().split()}
    assert expected <= {h["objectID"] for h in body["hits"]}
    assert body["hits"][0]["name"] == "Shanghai"


def test_facet_value_search(server: Server, rows: Rows) -> None:
    response = server.client.get("/cities/facets/country", params={"q": "IN", "maxValues": 5})
    assert response.status_code == 200
    expected = [v for v in facet_counts(rows, "country") if "in" in v["value"].lower()][:5]
    assert response.json() == {"field": "country", "values": expected}


def test_facet_value_search_with_filters_and_alias(server: Server, rows: Rows) -> None:
    response = server.client.get(
        "/cities/facets/region", params={"filters": json.dumps({"countryCode": "CN"})}
    )
    assert response.status_code == 200
    china = [r for r in rows if r["countryCode"] == "CN"]
    assert response.json() == {"field": "region", "values": facet_counts(china, "continent")}


def test_autocomplete_prefix_and_facets(server: Server, rows: Rows) -> None:
    response = server.client.get(
        "/cities/autocomplete", params={"q": "shan", "facets": "country", "perPage": 3}
    )
    assert response.status_code == 200
    body = response.json()
    assert 1 <= len(body["hits"]) <= 3
    assert any(h["name"].lower().startswith("shan") for h in body["hits"])
    expected = [v for v in facet_counts(rows, "country") if "shan" in v["value"].lower()][:4]
    assert body.get("facets", {}).get("country", []) == expected


def test_documents_and_mapping(server: Server, rows: Rows) -> None:
    paris_like = rows[0]
    response = server.client.get(f"/cities/documents/{paris_like['id']}")
    assert response.status_code == 200
    document = response.json()
    assert document["objectID"] == paris_like["id"]
    assert document["region"] == paris_like["continent"]
    assert document["population"] == paris_like["population"]
    spoof = server.client.get("/cities/documents/x-1").json()
    assert spoof["objectID"] == "x-1" and spoof["_index"] == "cities"
    missing = server.client.get("/cities/documents/does-not-exist")
    assert missing.status_code == 404
    assert missing.json() == {"error": "Document not found"}
    mapping = server.client.get("/cities/mapping")
    assert mapping.status_code == 200 and isinstance(mapping.json(), dict)


def test_raw_query(server: Server, rows: Rows) -> None:
    ok = server.client.post("/cities/query", json={"query": "name:shanghai", "limit": 5})
    assert ok.status_code == 200, ok.text
    bad = server.client.post("/cities/query", json={"query": "name:(unclosed", "limit": 5})
    assert bad.status_code == 400 and "error" in bad.json()
    not_object = server.client.post("/cities/query", json=[1, 2])
    assert not_object.status_code == 400
    # exists on a text field is the caller's query, answered, never an engine failure
    named = server.client.post("/cities/query", json={"query": "name:*"})
    assert named.status_code == 200, named.text
    assert named.json()["count"] == sum(1 for r in rows if r.get("name"))
    alias = server.client.post("/cities/query", json={"query": "region:Europe"})
    assert alias.status_code == 400
    assert alias.json() == {"error": "region is an alias: raw queries use the index's own "
                                     "field names, here continent"}
    assert "Traceback" not in server.output() and "not a fast field" not in server.output()
    too_big = server.client.post(
        "/cities/query", content=b'{"query": "' + b"a" * 70_000 + b'"}',
        headers={"content-type": "application/json"},
    )
    assert too_big.status_code == 413 and "error" in too_big.json()
