"""A real ``searchport serve`` over the session's real OpenSearch node, with data and a
mapping of this file's own: 80 outdoor products generated here (a ``text`` title, a ``text``
category with a ``keyword`` sub-field, a ``keyword`` brand, a ``double`` price, integers,
a ``geo_point``), loaded through OpenSearch's REST API.

Driven over HTTP as a user would: the JSON API (a search with facets and filters, a
facet-value search, a raw OpenSearch query), the stock Python ``algoliasearch`` client
(search, a multi-query, facet values, query rules, a standard and a virtual replica, geo
search), Query Suggestions rebuilt from the OpenSearch handle's query log, and ``/ui`` in
Chromium. Every expected value is computed here from the rows, in plain Python.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import httpx
import pytest
import yaml
from algoliasearch.http.hosts import Host, HostsCollection
from algoliasearch.search.client import SearchClientSync
from algoliasearch.search.config import SearchConfig
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server
from tests.e2e.ui_support import ARTIFACTS, CHROMIUM, facet_counts, ordered, tile
from tests.servers import opensearch

pytestmark = pytest.mark.e2e
Row = dict[str, Any]

# ---------------------------------------------------------------- the data

ADJECTIVES = ["Alpine", "Coastal", "Nordic", "Summit", "Canyon", "Harbor", "Meadow"]
CATEGORY = {"Lantern": "Lighting", "Headlamp": "Lighting", "Kettle": "Cooking",
            "Stove": "Cooking", "Tent": "Shelter", "Hammock": "Shelter",
            "Backpack": "Carry", "Compass": "Navigation", "Parka": "Apparel"}
NOUNS = list(CATEGORY)
BRANDS = ["Kestrel", "Tundra", "Northwind", "Solace", "Brightpeak", "Ember"]


def make_rows() -> list[Row]:
    """80 products: 7 adjectives x 9 nouns cycle every 63 rows, so some titles repeat;
    prices and sales are permutations (no two equal), points spread over central Europe."""
    rows = []
    for i in range(80):
        noun = NOUNS[i % 9]
        rows.append({
            "id": f"p{i:03d}",
            "title": f"{ADJECTIVES[i % 7]} {noun}",
            "category": CATEGORY[noun],
            "brand": BRANDS[(i * i + i // 4) % 6],
            "price": round(10.99 + ((i * 37) % 80) * 2.5, 2),
            "rating": 1 + (i * 3) % 5,
            "sold": (i * 53) % 97,
            "location": {"lat": round(44 + ((i * 7919) % 1000) * 0.012, 3),
                         "lon": round(5 + ((i * 104729) % 1000) * 0.02, 3)},
        })
    return rows


ROWS = make_rows()
BY_ID = {r["id"]: r for r in ROWS}
KEYWORD_SUB = {"keyword": {"type": "keyword", "ignore_above": 256}}
MAPPING: Row = {
    "dynamic": "strict",
    "properties": {
        "id": {"type": "keyword"},
        "title": {"type": "text", "fields": KEYWORD_SUB},
        "category": {"type": "text", "fields": KEYWORD_SUB},  # facets use the sub-field
        "brand": {"type": "keyword"},
        "price": {"type": "double"},
        "rating": {"type": "integer"},
        "sold": {"type": "integer"},
        "location": {"type": "geo_point"},
    },
}
FIELDS: Row = {
    "title": {"type": "text", "weight": 2},
    "category": {"type": "text", "searchable": True},
    "brand": {"type": "keyword"},
    "price": {"type": "float"},
    "rating": {"type": "integer"},
    "sold": {"type": "integer"},
    "location": {"type": "geo_point"},
}
SEARCHED = ("title", "category")

# the rules of the ``products`` handle (docs/rules.md)
PROMOTED, HIDDEN = "p042", "p007"
RULES: list[Row] = [
    {"objectID": "cheap-word",
     "conditions": [{"pattern": "cheap", "anchoring": "contains"}],
     "consequence": {"params": {"query": {"remove": ["cheap"]}, "filters": "price < 40"},
                     "userData": {"banner": "budget"}}},
    {"objectID": "brand-words",
     "conditions": [{"pattern": "{facet:brand}", "anchoring": "contains"}],
     "consequence": {"params": {"automaticFacetFilters": [{"facet": "brand"}],
                                "query": {"remove": ["{facet:brand}"]}}}},
    {"objectID": "landing",
     "conditions": [{"pattern": "", "anchoring": "is", "context": "landing"}],
     "consequence": {"promote": [{"objectID": PROMOTED, "position": 0}],
                     "hide": [{"objectID": HIDDEN}], "userData": {"banner": "welcome"}}},
]
STRICTNESS = 90

# Query Suggestions of the ``gear`` handle (the same index; only that test searches it)
SUGGESTED_FACET = "brand"
JSON_SEARCHES = (("Kettle", 2), ("  kettle ", 1), ("kett", 2), ("stove", 1), ("zzqx", 2))
ALGOLIA_SEARCHES = (("compass", 2), ("Hammock", 1))

# ---------------------------------------------------------------- plain-Python semantics


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def row_words(row: Row) -> list[str]:
    return [w for field in SEARCHED for w in words(row[field])]


def all_words(row: Row, query: str) -> bool:
    """Algolia's words: every word of the query in a searched field, the last as a prefix."""
    wanted = words(query)
    if not wanted:
        return True
    have = row_words(row)
    return (all(w in have for w in wanted[:-1])
            and any(h.startswith(wanted[-1]) for h in have))


def any_word(row: Row, query: str) -> bool:
    """``GET /search``'s words: any word of the query, the last also as a prefix."""
    wanted = words(query)
    if not wanted:
        return True
    have = row_words(row)
    return (any(w in have for w in wanted[:-1])
            or any(h.startswith(wanted[-1]) for h in have))


def counted(rows: Iterable[Row], field: str) -> Counter[str]:
    return Counter(str(r[field]) for r in rows)


def listed(counter: Counter[str], limit: int | None = None) -> list[Row]:
    """Facet values as the JSON API lists them: by count, then value."""
    return [{"value": v, "count": counter[v]} for v in ordered(counter)[:limit]]


def ids(rows: Iterable[Row]) -> list[str]:
    return [r["id"] for r in rows]


EARTH_RADIUS = 6_371_008.7714  # metres: OpenSearch's mean radius for arc distances


def distance(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS * math.asin(math.sqrt(h))


def point(row: Row) -> tuple[float, float]:
    return row["location"]["lat"], row["location"]["lon"]


def inside_polygon(lat: float, lon: float, corners: list[tuple[float, float]]) -> bool:
    """Even-odd rule, edges straight in latitude/longitude."""
    inside = False
    for (a_lat, a_lon), (b_lat, b_lon) in zip(corners, corners[1:] + corners[:1], strict=True):
        if (a_lat > lat) != (b_lat > lat):
            crossing = a_lon + (lat - a_lat) * (b_lon - a_lon) / (b_lat - a_lat)
            if lon < crossing:
                inside = not inside
    return inside


def edge_gap(lat: float, lon: float, corners: list[tuple[float, float]]) -> float:
    """Degrees from a point to the nearest edge of a polygon (planar)."""
    gaps = []
    for (a_lat, a_lon), (b_lat, b_lon) in zip(corners, corners[1:] + corners[:1], strict=True):
        d_lat, d_lon = b_lat - a_lat, b_lon - a_lon
        t = max(0.0, min(1.0, ((lat - a_lat) * d_lat + (lon - a_lon) * d_lon)
                         / (d_lat**2 + d_lon**2)))
        gaps.append(math.hypot(lat - (a_lat + t * d_lat), lon - (a_lon + t * d_lon)))
    return min(gaps)


# ---------------------------------------------------------------- the node, index, server


@pytest.fixture(scope="module")
def node(request: pytest.FixtureRequest) -> opensearch.OpenSearchServer:
    return opensearch.session_server(request.config)


@pytest.fixture(scope="module")
def index_name(node: opensearch.OpenSearchServer) -> Iterator[str]:
    """The products in a uniquely named index of the real node, deleted at the end."""
    name = f"searchport-e2e-gear-{uuid.uuid4().hex[:10]}"
    bulk = "".join(json.dumps({"index": {"_id": r["id"]}}) + "\n" + json.dumps(r) + "\n"
                   for r in ROWS)
    with httpx.Client(base_url=node.url, timeout=60, trust_env=False) as http:
        created = http.put(f"/{name}", json={
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": MAPPING})
        assert created.status_code == 200, created.text
        try:
            loaded = http.post(f"/{name}/_bulk", params={"refresh": "true"}, content=bulk,
                               headers={"Content-Type": "application/x-ndjson"})
            assert loaded.status_code == 200 and not loaded.json()["errors"], loaded.text[:2000]
            yield name
        finally:
            http.delete(f"/{name}")


def handle(node: opensearch.OpenSearchServer, index: str, **extra: Any) -> Row:
    return {"engine": "opensearch", "host": node.url, "indexName": index, "timeout": 30,
            "fields": FIELDS, **extra}


@pytest.fixture(scope="module")
def served(server_factory: Callable[..., Server], node: opensearch.OpenSearchServer,
           index_name: str) -> Server:
    config = {
        "analytics": {"flushInterval": 0.1},
        "indexes": {
            "products": handle(node, index_name, defaults={"facets": ["brand", "category"]},
                               rules=RULES),
            "products-cheapest": {"replicaOf": "products",
                                  "sort": [{"field": "price", "order": "asc"}]},
            "products-relevant": {"replicaOf": "products",
                                  "relevantSort": {"strictness": STRICTNESS},
                                  "customRanking": [{"field": "sold", "order": "desc"}]},
            "gear": handle(node, index_name),
            "gear_query_suggestions": {
                "engine": "querySuggestions", "source": "gear", "path": "index/suggestions",
                "minCount": 2, "minHits": 1, "refresh": 1,
                "facets": [{"attribute": SUGGESTED_FACET, "amount": 2}]},
        },
    }
    return server_factory(yaml.safe_dump(config, sort_keys=False))


@pytest.fixture(scope="module")
def client(served: Server) -> SearchClientSync:
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    config = SearchConfig("any-app-id", "any-key")
    config.hosts = HostsCollection([Host(url=host, port=int(port), scheme="http")])
    return SearchClientSync.create_with_config(config)


def get(server: Server, path: str, **params: Any) -> Any:
    answer = server.client.get(path, params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


# ---------------------------------------------------------------- the JSON API


def test_json_search_with_facets_and_a_filter(served: Server) -> None:
    filters = {"brand": ["Kestrel", "Solace"], "price": {"min": 30, "max": 150}}
    body = get(served, "/products/search", q="nordic la", facets="brand,category",
               filters=json.dumps(filters), perPage=100, highlight="title")
    found = [r for r in ROWS if any_word(r, "nordic la")]
    priced = [r for r in found if 30 <= r["price"] <= 150]
    kept = [r for r in priced if r["brand"] in ("Kestrel", "Solace")]
    assert 0 < len(kept) < len(priced) < len(found)
    assert body["totalHits"] == len(kept)
    assert sorted(h["objectID"] for h in body["hits"]) == sorted(ids(kept))
    # disjunctive: the brand counts leave out the brand filter, the others keep it
    assert body["facets"] == {"brand": listed(counted(priced, "brand")),
                              "category": listed(counted(kept, "category"))}
    for hit in body["hits"]:
        assert {k: v for k, v in hit.items() if not k.startswith("_")} == {
            "objectID": hit["objectID"], **BY_ID[hit["objectID"]]}
    # "nordic", a whole word, scores by BM25 (a rare word: above the constant score of the
    # prefix "la"), so the titles holding it come first
    both = [r for r in kept if "nordic" in words(r["title"])]
    assert both and {h["objectID"] for h in body["hits"][:len(both)]} == set(ids(both))
    assert body["hits"][0]["_highlights"]["title"][0].startswith("<mark>Nordic</mark>")

    # highlights mark what the words matched, never a filter's value (a keyword's term)
    marked = get(served, "/products/search", q="lantern", highlight="true", facets="category",
                 filters=json.dumps({"brand": "Kestrel"}))
    theirs = [r for r in ROWS if any_word(r, "lantern") and r["brand"] == "Kestrel"]
    assert sorted(h["objectID"] for h in marked["hits"]) == sorted(ids(theirs))
    assert [h["_highlights"] for h in marked["hits"]] == [
        {"title": [h["title"].replace("Lantern", "<mark>Lantern</mark>")]}
        for h in marked["hits"]]


def test_json_sort_pages_histogram_and_geo_clusters(served: Server) -> None:
    """A sort on the category text (its keyword sub-field) then price, two pages, price
    buckets and map-tile clusters, all over the rows that a filter keeps."""
    kept = [r for r in ROWS if r["rating"] >= 2]
    order = sorted(kept, key=lambda r: (r["category"], -r["price"]))
    precision, width = 4, 50
    params = {"sort": json.dumps({"category": "asc", "price": "desc"}), "perPage": 25,
              "filters": json.dumps({"rating": {"min": 2}}), "facets": "rating",
              "histogram": json.dumps({"price": width}),
              "geoGrid": json.dumps({"field": "location", "precision": precision})}
    first = get(served, "/products/search", **params)
    second = get(served, "/products/search", **params, page=2)
    assert first["totalHits"] == len(kept) and first["totalPages"] == math.ceil(len(kept) / 25)
    assert [h["objectID"] for h in first["hits"] + second["hits"]] == ids(order[:50])
    # disjunctive: the rating filter does not narrow the rating counts
    assert first["facets"]["rating"] == listed(counted(ROWS, "rating"))
    buckets = Counter(int(r["price"] // width * width) for r in kept)
    assert first["histograms"]["price"] == [
        {"key": k, "count": buckets[k]}
        for k in range(min(buckets), max(buckets) + 1, width)]
    tiles: dict[str, list[Row]] = {}
    for r in kept:
        tiles.setdefault(tile(*point(r), precision), []).append(r)
    clusters = {c["key"]: c for c in first["geoClusters"]}
    assert {k: c["count"] for k, c in clusters.items()} == {k: len(v) for k, v in tiles.items()}
    for key, members in tiles.items():
        assert clusters[key]["lat"] == pytest.approx(
            sum(r["location"]["lat"] for r in members) / len(members), abs=1e-4)
        assert clusters[key]["lng"] == pytest.approx(
            sum(r["location"]["lon"] for r in members) / len(members), abs=1e-4)
        assert clusters[key]["hit"]["objectID"] in ids(members)


def test_json_facet_value_search(served: Server) -> None:
    cheap = [r for r in ROWS if r["price"] <= 100]
    body = get(served, "/products/facets/category", q="IN",
               filters=json.dumps({"price": {"max": 100}}))
    within = Counter({v: n for v, n in counted(cheap, "category").items() if "in" in v.lower()})
    assert len(within) >= 2
    assert body == {"field": "category", "values": listed(within)}
    brands = get(served, "/products/facets/brand", q="e", maxValues=2)
    every = Counter({v: n for v, n in counted(ROWS, "brand").items() if "e" in v.lower()})
    assert brands["values"] == listed(every, 2)


def test_json_raw_opensearch_query(served: Server) -> None:
    body = {
        "size": 100,
        "query": {"bool": {"filter": [{"term": {"category.keyword": "Shelter"}},
                                      {"range": {"price": {"lt": 120}}}]}},
        "sort": [{"price": "desc"}],
        "aggs": {"brands": {"terms": {"field": "brand", "size": 10}},
                 "priciest": {"max": {"field": "price"}}},
        "_source": ["title", "price"],
    }
    answer = served.client.post("/products/query", json=body)
    assert answer.status_code == 200, answer.text
    raw = answer.json()
    want = sorted((r for r in ROWS if r["category"] == "Shelter" and r["price"] < 120),
                  key=lambda r: -r["price"])
    assert raw["hits"]["total"] == {"value": len(want), "relation": "eq"}
    assert [h["_id"] for h in raw["hits"]["hits"]] == ids(want)
    assert [h["_source"] for h in raw["hits"]["hits"]] == [
        {"title": r["title"], "price": r["price"]} for r in want]
    brands = counted(want, "brand")
    assert raw["aggregations"]["brands"]["buckets"] == [
        {"key": v, "doc_count": brands[v]} for v in ordered(brands)]
    assert raw["aggregations"]["priciest"]["value"] == want[0]["price"]
    # the engine's refusal is a 400 with its reason
    bad = served.client.post("/products/query", json={"query": {"no_such_query": {}}})
    assert bad.status_code == 400 and "no_such_query" in bad.text


# ---------------------------------------------------------------- the stock Algolia client


def test_algolia_search_with_facets_and_filters(client: SearchClientSync) -> None:
    query = "summit"
    answer = client.search_single_index("products", {
        "query": query, "facets": ["brand", "category", "price"], "hitsPerPage": 100,
        "filters": "(brand:Kestrel OR brand:Ember OR category:Shelter) AND price < 150",
    }).to_dict()
    want = [r for r in ROWS if all_words(r, query) and r["price"] < 150
            and (r["brand"] in ("Kestrel", "Ember") or r["category"] == "Shelter")]
    assert 3 <= len(want) < len([r for r in ROWS if all_words(r, query)])
    assert answer["nbHits"] == len(want)
    assert sorted(h["objectID"] for h in answer["hits"]) == sorted(ids(want))
    assert answer["facets"]["brand"] == dict(counted(want, "brand"))
    assert answer["facets"]["category"] == dict(counted(want, "category"))
    prices = [r["price"] for r in want]
    stats = answer["facets_stats"]["price"]
    assert (stats["min"], stats["max"]) == (min(prices), max(prices))
    assert stats["sum"] == pytest.approx(sum(prices))
    assert stats["avg"] == pytest.approx(sum(prices) / len(prices))
    hit = answer["hits"][0]
    assert hit["_geoloc"] == {"lat": BY_ID[hit["objectID"]]["location"]["lat"],
                              "lng": BY_ID[hit["objectID"]]["location"]["lon"]}
    assert hit["_highlightResult"]["title"]["value"].startswith("<em>Summit</em>")
    # the searchable attributes, marked where the words matched: not the filtered brand
    assert all(set(h["_highlightResult"]) == {"title", "category"} for h in answer["hits"])
    assert all(h["_highlightResult"]["category"]["matchLevel"] == "none"
               for h in answer["hits"])

    # a word the analyzer cuts in two is still one required word: both parts must match
    joined = client.search_single_index("products", {"query": "Nordic-Lant",
                                                     "hitsPerPage": 100}).to_dict()
    both = [r for r in ROWS if all_words(r, "nordic lant")]
    assert 0 < len(both) < len([r for r in ROWS if any_word(r, "nordic lant")])
    assert sorted(h["objectID"] for h in joined["hits"]) == sorted(ids(both))

    # the same through facetFilters (nested OR) and numericFilters, paged
    paged = client.search_single_index("products", {
        "query": "", "facetFilters": [["category:Cooking", "category:Lighting"], "brand:-Tundra"],
        "numericFilters": ["rating>=3", "price<=100"], "hitsPerPage": 7, "page": 1,
    }).to_dict()
    kept = [r for r in ROWS if r["category"] in ("Cooking", "Lighting")
            and r["brand"] != "Tundra" and r["rating"] >= 3 and r["price"] <= 100]
    assert paged["nbHits"] == len(kept) > 7
    assert paged["nbPages"] == math.ceil(len(kept) / 7) and len(paged["hits"]) == min(
        7, len(kept) - 7)


def test_algolia_records_browse_and_distance_ranking(client: SearchClientSync) -> None:
    row = BY_ID["p013"]
    assert client.get_object("products", "p013") == {"objectID": "p013", **row}
    assert client.get_object("products", "p013", attributes_to_retrieve=["title"]) == {
        "objectID": "p013", "title": row["title"]}
    several = client.get_objects({"requests": [
        {"indexName": "products", "objectID": "p079"},
        {"indexName": "products", "objectID": "nope"}]})
    assert [r and r["objectID"] for r in several.results] == ["p079", None]

    seen: list[str] = []
    client.browse_objects("products", aggregator=lambda page: seen.extend(
        h.object_id for h in page.hits),
        browse_params={"hitsPerPage": 7, "filters": "category:Cooking"})
    assert sorted(seen) == sorted(r["id"] for r in ROWS if r["category"] == "Cooking")

    # facets "*" are the handle's defaults; hitsPerPage 0 answers counts only
    counts = client.search_single_index("products", {"query": "", "facets": ["*"],
                                                     "hitsPerPage": 0}).to_dict()
    assert counts["hits"] == [] and counts["nbHits"] == len(ROWS)
    assert counts["facets"] == {"brand": dict(counted(ROWS, "brand")),
                                "category": dict(counted(ROWS, "category"))}
    assert counts["renderingContent"]["facetOrdering"]["facets"]["order"] == [
        "brand", "category"]

    # aroundRadius "all" filters nothing and ranks by distance, before the words
    centre = (52.3, 9.7)
    parkas = sorted((r for r in ROWS if all_words(r, "parka")),
                    key=lambda r: distance(*centre, *point(r)))
    ranked = client.search_single_index("products", {
        "query": "parka", "aroundLatLng": f"{centre[0]},{centre[1]}", "aroundRadius": "all",
        "attributesToRetrieve": ["title", "_geoloc"], "hitsPerPage": 100}).to_dict()
    assert [h["objectID"] for h in ranked["hits"]] == ids(parkas)
    assert ranked["hits"][0]["title"] == parkas[0]["title"]
    assert ranked["hits"][0]["_geoloc"] == {"lat": parkas[0]["location"]["lat"],
                                            "lng": parkas[0]["location"]["lon"]}
    assert "price" not in ranked["hits"][0]


def test_algolia_multi_query(client: SearchClientSync) -> None:
    answer = client.search({"requests": [
        {"indexName": "products", "query": "kettle", "facets": ["brand"], "hitsPerPage": 50},
        {"indexName": "products-cheapest", "query": "", "filters": "category:Shelter",
         "hitsPerPage": 5},
        {"indexName": "products", "query": "kettle", "filters": "brand:Ember OR brand:Solace",
         "hitsPerPage": 50},
        {"indexName": "products", "type": "facet", "facet": "brand", "facetQuery": "th",
         "query": ""},
    ]})
    first, cheapest, narrowed, values = (r.to_dict() for r in answer.results)
    kettles = [r for r in ROWS if all_words(r, "kettle")]
    assert first["index"] == "products" and first["nbHits"] == len(kettles) > 0
    assert sorted(h["objectID"] for h in first["hits"]) == sorted(ids(kettles))
    assert first["facets"] == {"brand": dict(counted(kettles, "brand"))}
    shelter = sorted((r for r in ROWS if r["category"] == "Shelter"), key=lambda r: r["price"])
    assert cheapest["index"] == "products-cheapest" and cheapest["nbHits"] == len(shelter)
    assert [h["objectID"] for h in cheapest["hits"]] == ids(shelter[:5])
    chosen = [r for r in kettles if r["brand"] in ("Ember", "Solace")]
    assert 0 < narrowed["nbHits"] == len(chosen) < len(kettles)
    assert sorted(h["objectID"] for h in narrowed["hits"]) == sorted(ids(chosen))
    th = counted((r for r in ROWS if "th" in r["brand"].lower()), "brand")
    assert [(f["value"], f["count"]) for f in values["facetHits"]] == [
        (v, th[v]) for v in ordered(th)]


def test_algolia_facet_value_search(client: SearchClientSync) -> None:
    answer = client.search_for_facet_values("products", "category", {
        "facetQuery": "ing", "params": "filters=brand%3ANorthwind%20OR%20brand%3AKestrel"}
    ).to_dict()
    mine = [r for r in ROWS if r["brand"] in ("Northwind", "Kestrel")]
    want = Counter({v: n for v, n in counted(mine, "category").items() if "ing" in v.lower()})
    assert len(want) == 2
    assert [(f["value"], f["count"]) for f in answer["facetHits"]] == [
        (v, want[v]) for v in ordered(want)]
    assert all(f["highlighted"].replace("<em>", "").replace("</em>", "") == f["value"]
               and "<em>ing</em>" in f["highlighted"] for f in answer["facetHits"])
    one = client.search_for_facet_values("products", "brand", {
        "facetQuery": "o", "maxFacetHits": 1}).to_dict()
    brands = Counter({v: n for v, n in counted(ROWS, "brand").items() if "o" in v.lower()})
    assert [(f["value"], f["count"]) for f in one["facetHits"]] == [
        (v, brands[v]) for v in ordered(brands)[:1]]


def test_algolia_query_rules(client: SearchClientSync) -> None:
    cheap = client.search_single_index("products", {"query": "cheap kettle",
                                                    "hitsPerPage": 100}).to_dict()
    want = [r for r in ROWS if all_words(r, "kettle") and r["price"] < 40]
    assert cheap["nbHits"] == len(want) > 0
    assert sorted(h["objectID"] for h in cheap["hits"]) == sorted(ids(want))
    assert cheap["userData"] == [{"banner": "budget"}]
    assert cheap["appliedRules"] == [{"objectID": "cheap-word"}]

    # a brand's name (a value read from the engine's facet) becomes a filter
    branded = client.search_single_index("products", {"query": "Kestrel stove",
                                                      "hitsPerPage": 100}).to_dict()
    stoves = [r for r in ROWS if all_words(r, "stove") and r["brand"] == "Kestrel"]
    assert branded["nbHits"] == len(stoves) > 0
    assert sorted(h["objectID"] for h in branded["hits"]) == sorted(ids(stoves))
    assert branded["appliedRules"] == [{"objectID": "brand-words"}]
    off = client.search_single_index("products", {"query": "Kestrel stove",
                                                  "enableRules": False}).to_dict()
    assert off["nbHits"] == 0  # brands are not searched: only the rule finds them

    both = client.search_single_index("products", {"query": "cheap solace tent",
                                                   "hitsPerPage": 100}).to_dict()
    tents = [r for r in ROWS if all_words(r, "tent") and r["brand"] == "Solace"
             and r["price"] < 40]
    assert both["nbHits"] == len(tents)
    assert sorted(h["objectID"] for h in both["hits"]) == sorted(ids(tents))
    assert {r["objectID"] for r in both["appliedRules"]} == {"cheap-word", "brand-words"}

    landing = client.search_single_index("products", {
        "query": "", "ruleContexts": ["landing"], "hitsPerPage": 100, "getRankingInfo": True,
    }).to_dict()
    shown = [h["objectID"] for h in landing["hits"]]
    assert shown[0] == PROMOTED and landing["hits"][0]["_rankingInfo"]["promoted"] is True
    assert HIDDEN not in shown and len(shown) == len(set(shown)) == landing["nbHits"] == 79
    assert landing["userData"] == [{"banner": "welcome"}]


def test_algolia_standard_and_virtual_replicas(client: SearchClientSync) -> None:
    settings = client.get_settings("products")
    assert settings.replicas == ["products-cheapest", "virtual(products-relevant)"]

    # standard: every match, strictly by price
    cheapest = client.search_single_index("products-cheapest", {
        "query": "canyon", "hitsPerPage": 100, "facetFilters": ["brand:-Tundra"]}).to_dict()
    canyons = sorted((r for r in ROWS if all_words(r, "canyon")), key=lambda r: r["price"])
    kept = [r for r in canyons if r["brand"] != "Tundra"]
    assert [h["objectID"] for h in cheapest["hits"]] == ids(kept) and len(kept) > 5
    upward = client.search_single_index("products-cheapest", {
        "query": "", "hitsPerPage": 3, "page": 2}).to_dict()
    assert [h["objectID"] for h in upward["hits"]] == ids(
        sorted(ROWS, key=lambda r: r["price"])[6:9])

    # virtual: the matches within STRICTNESS % of the best score, by sales. "alpine" is
    # optional: every lantern matches, and a title holding both words scores about twice
    # one holding "lantern" alone (the prefix's constant score, where "alpine", a word of 12
    # titles in 80, adds its BM25 score), so 90 % keeps the titles holding both
    lanterns = [r for r in ROWS if all_words(r, "lantern")]
    alpine = [r for r in lanterns if "alpine" in words(r["title"])]
    assert 2 <= len(alpine) < len(lanterns)
    params = {"query": "alpine lantern", "optionalWords": ["alpine"], "hitsPerPage": 50}
    strict = client.search_single_index("products-relevant", params).to_dict()
    by_sales = sorted(alpine, key=lambda r: -r["sold"])
    assert strict["nbHits"] == len(lanterns)
    assert strict["nbSortedHits"] == len(alpine)
    assert strict["appliedRelevancyStrictness"] == STRICTNESS
    assert [h["objectID"] for h in strict["hits"]] == ids(by_sales)
    every = client.search_single_index("products-relevant",
                                       {**params, "relevancyStrictness": 0}).to_dict()
    assert every["nbSortedHits"] == every["nbHits"] == len(lanterns)
    assert [h["objectID"] for h in every["hits"]] == ids(sorted(lanterns,
                                                                key=lambda r: -r["sold"]))


def test_algolia_geo_search(client: SearchClientSync) -> None:
    # around a point: a radius in the widest gap between the 10th and 30th closest points
    centre = (49.5, 12.0)
    near = sorted(ROWS, key=lambda r: distance(*centre, *point(r)))
    metres = [distance(*centre, *point(r)) for r in near]
    k = max(range(10, 30), key=lambda i: metres[i] - metres[i - 1])
    assert metres[k] - metres[k - 1] > 1000
    assert all(b - a > 1 for a, b in itertools.pairwise(metres[:k + 1]))  # an order to check
    radius = int((metres[k - 1] + metres[k]) / 2)
    around = client.search_single_index("products", {
        "aroundLatLng": f"{centre[0]}, {centre[1]}", "aroundRadius": radius,
        "hitsPerPage": 100}).to_dict()
    assert around["nbHits"] == k
    assert [h["objectID"] for h in around["hits"]] == ids(near[:k])  # closest first

    # a box, and a polygon (a triangle), each edge clear of every point
    box = (47.005, 8.01, 52.005, 16.01)
    in_box = [r for r in ROWS if box[0] <= r["location"]["lat"] <= box[2]
              and box[1] <= r["location"]["lon"] <= box[3]]
    assert all(min(abs(r["location"]["lat"] - box[0]), abs(r["location"]["lat"] - box[2]),
                   abs(r["location"]["lon"] - box[1]), abs(r["location"]["lon"] - box[3]))
               > 1e-3 for r in ROWS)
    boxed = client.search_single_index("products", {
        "insideBoundingBox": [list(box)], "hitsPerPage": 100, "facets": ["brand"]}).to_dict()
    assert 5 < boxed["nbHits"] == len(in_box) < len(ROWS)
    assert sorted(h["objectID"] for h in boxed["hits"]) == sorted(ids(in_box))
    assert boxed["facets"]["brand"] == dict(counted(in_box, "brand"))

    triangle = [(45.0, 6.0), (55.5, 13.0), (46.0, 24.0)]
    in_triangle = [r for r in ROWS if inside_polygon(*point(r), triangle)]
    assert all(edge_gap(*point(r), triangle) > 1e-3 for r in ROWS)
    polygon = client.search_single_index("products", {
        "query": "", "insidePolygon": [[c for corner in triangle for c in corner]],
        "hitsPerPage": 100}).to_dict()
    assert 5 < polygon["nbHits"] == len(in_triangle) < len(ROWS)
    assert sorted(h["objectID"] for h in polygon["hits"]) == sorted(ids(in_triangle))


# ---------------------------------------------------------------- Query Suggestions


def suggestions(server: Server) -> list[Row]:
    body = get(server, "/gear_query_suggestions/search", q="", highlight="false")
    return [{k: v for k, v in h.items() if not k.startswith("_")} for h in body["hits"]]


def test_query_suggestions_rebuilt_from_the_opensearch_handle(served: Server) -> None:
    assert suggestions(served) == []
    searched: Counter[str] = Counter()
    for query, times in JSON_SEARCHES:
        for _ in range(times):
            get(served, "/gear/search", q=query)
            searched[" ".join(query.split()).casefold()] += 1
    for query, times in ALGOLIA_SEARCHES:
        for _ in range(times):
            answer = served.client.post("/1/indexes/gear/query", json={"query": query})
            assert answer.status_code == 200, answer.text
            searched[query.casefold()] += 1
    assert searched == Counter({"kettle": 3, "kett": 2, "stove": 1, "zzqx": 2,
                                "compass": 2, "hammock": 1})
    want = []
    for query, count in searched.items():
        found = [r for r in ROWS if any_word(r, query)]
        longer = [q for q, n in searched.items() if q != query and q.startswith(query)
                  and n >= count]
        if count < 2 or longer or not found:
            continue
        top = listed(counted(found, SUGGESTED_FACET), 2)
        want.append({"objectID": query, "query": query, "popularity": count, "nb_words": 1,
                     "gear": {"exact_nb_hits": len(found),
                              "facets": {"exact_matches": {SUGGESTED_FACET: top}}}})
    want.sort(key=lambda r: (-r["popularity"], r["query"]))
    assert [r["query"] for r in want] == ["kettle", "compass"]

    deadline = time.monotonic() + 30
    while (found := suggestions(served)) != want:
        assert time.monotonic() < deadline, f"suggestions {found}, expected {want}"
        time.sleep(0.2)
    # what each suggestion says of its source is what searching it there answers
    for record in found:
        body = get(served, "/gear/search", q=record["query"], facets=SUGGESTED_FACET,
                   perPage=1, analytics="false")
        assert body["totalHits"] == record["gear"]["exact_nb_hits"]
        assert body["facets"][SUGGESTED_FACET][:2] == (
            record["gear"]["facets"]["exact_matches"][SUGGESTED_FACET])
    typed = get(served, "/gear_query_suggestions/search", q="comp")
    assert [h["query"] for h in typed["hits"]] == ["compass"]


# ---------------------------------------------------------------- /ui in Chromium


@pytest.fixture(scope="module")
def chromium() -> None:
    if not CHROMIUM.exists():
        opensearch.missing("Debian's chromium is not installed (apt-get install chromium)")


def shown_status(total: int, per_page: int) -> re.Pattern[str]:
    pages = math.ceil(total / per_page)
    text = f"{total:,} results" + (f" · page 1 of {pages:,}" if pages > 1 else "")
    return re.compile("^" + re.escape(text) + r" · [\d.]+ ms$")


def test_ui_on_the_opensearch_handle(chromium: None, page: Page, served: Server) -> None:
    per_page = 20
    page.goto(f"{served.url}/ui?index=products")
    hits = page.locator("#hits li.hit")
    expect(hits.first).to_be_visible()
    expect(page.locator("#status")).to_have_text(shown_status(len(ROWS), per_page))
    assert facet_counts(page, "brand") == dict(counted(ROWS, "brand"))
    assert facet_counts(page, "category") == dict(counted(ROWS, "category"))

    page.locator("#q").press_sequentially("lantern", delay=20)
    lanterns = [r for r in ROWS if any_word(r, "lantern")]
    expect(page.locator("#status")).to_have_text(shown_status(len(lanterns), per_page))
    expect(hits).to_have_count(len(lanterns))
    expect(hits.first.locator("h3.hit-title mark")).to_have_text("Lantern")
    titles = hits.locator("h3.hit-title").all_inner_texts()
    shown = hits.evaluate_all("els => els.map(e => e.dataset.id)")
    assert sorted(shown) == sorted(ids(lanterns))
    assert titles == [BY_ID[i]["title"] for i in shown]

    # a click on a brand keeps that brand's lanterns; the other brands keep their counts
    brand = ordered(counted(lanterns, "brand"))[0]
    page.locator(f'fieldset[data-field="brand"] input[data-value="{brand}"]').check()
    theirs = [r for r in lanterns if r["brand"] == brand]
    expect(page.locator("#status")).to_have_text(shown_status(len(theirs), per_page))
    expect(hits).to_have_count(len(theirs))
    assert sorted(hits.evaluate_all("els => els.map(e => e.dataset.id)")) == sorted(ids(theirs))
    assert facet_counts(page, "brand") == dict(counted(lanterns, "brand"))
    assert facet_counts(page, "category") == dict(counted(theirs, "category"))
    expect(page.locator("#chips .chip")).to_have_accessible_name(f"Remove filter Brand: {brand}")
    expect(page.locator("#map circle.cluster").first).to_be_attached()

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "opensearch-ui.png"
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
