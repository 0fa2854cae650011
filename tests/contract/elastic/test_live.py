"""The Elasticsearch/OpenSearch adapter against a real server, through the real app.

Runs against the session's real OpenSearch node (``tests/servers/opensearch``), and also
against the server ``SEARCHPORT_TEST_ELASTICSEARCH_URL`` names, if set (see ``live.py``).
A uniquely named index with an explicit mapping (text with keyword sub-fields,
keywords, numbers, booleans, dates, a geo point, an object and a ``nested`` field) is filled
from ``tests/fixtures/books.jsonl`` and deleted afterwards; every expectation is computed in
plain Python from the same documents.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.contract.elastic import live

TARGETS = live.targets()

DOCS = [live.document(row) for row in live.load_rows()]
BY_ID = {live.doc_id(d): d for d in DOCS}
ALL = 100  # perPage that fits every document (48)
METADATA = {"objectID", "_index", "_score", "_highlights"}
Client = TestClient[Any]


@pytest.fixture(scope="module", params=sorted(TARGETS))
def target(request: pytest.FixtureRequest) -> live.Target:
    return TARGETS[request.param](request.config)


@pytest.fixture(scope="module")
def index_name(target: live.Target) -> Iterator[str]:
    with live.books_index(target, DOCS) as name:
        yield name


@pytest.fixture(scope="module")
def api(target: live.Target, index_name: str,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    config = parse_config(live.config_yaml(target, index_name), {})
    app = create_app(create_container(config, Path(tmp_path_factory.mktemp("live"))))
    with TestClient(app) as client:
        yield client


def get(api: Client, path: str, status: int = 200, **params: Any) -> Any:
    """``GET /books/<path>`` with JSON-valued parameters encoded; the decoded answer."""
    query = {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in params.items()}
    response = api.get(f"/{live.HANDLE}/{path}", params=query)
    assert response.status_code == status, response.text
    return response.json()


def search(api: Client, **params: Any) -> Any:
    return get(api, "search", **params)


def ids(answer: Any) -> list[str]:
    return [hit["objectID"] for hit in answer["hits"]]


def expected_ids(docs: list[live.Doc]) -> set[str]:
    return {live.doc_id(d) for d in docs}


# --- documents and mapping --------------------------------------------------------------

def test_the_mapping_is_the_engines_own(api: Client, index_name: str) -> None:
    answer = get(api, "mapping")
    properties = answer[index_name]["mappings"]["properties"]
    assert properties["copies"]["type"] == "nested"
    assert properties["title"]["fields"]["keyword"]["type"] == "keyword"
    assert set(properties) == set(live.MAPPING["properties"])


def test_every_document_by_id(api: Client, index_name: str) -> None:
    for doc in DOCS:
        assert get(api, f"documents/{live.doc_id(doc)}") == live.shaped(doc, index_name)
    assert get(api, "documents/no-such-book", status=404) == {"error": "Document not found"}


# --- text, pages, totals ------------------------------------------------------------------

def test_an_empty_query_matches_everything_with_exact_totals(api: Client) -> None:
    answer = search(api)
    assert answer["totalHits"] == len(DOCS)
    assert answer["page"] == 1 and answer["perPage"] == 20
    assert answer["totalPages"] == math.ceil(len(DOCS) / 20)
    assert len(answer["hits"]) == 20
    assert answer["facets"] == {}
    for hit in answer["hits"]:
        assert hit == {**live.shaped(BY_ID[hit["objectID"]], hit["_index"]),
                       "_score": hit["_score"], "_highlights": {}}


def test_pages_walk_the_sorted_documents_once(api: Client) -> None:
    order = sorted(BY_ID)  # ids are keywords: "46" before "b01"
    seen: list[str] = []
    for page in range(1, 8):
        answer = search(api, sort={"id": "asc"}, perPage=7, page=page)
        assert answer["totalPages"] == 7
        seen += ids(answer)
    assert seen == order


@pytest.mark.parametrize("q", ["castle", "night sea", "LONDON", "tango & cash", "Zürich",
                               "gard", "kate k", "&"])
def test_text_search_finds_any_word_and_the_last_as_a_prefix(api: Client, q: str) -> None:
    answer = search(api, q=q, perPage=ALL)
    wanted = expected_ids([d for d in DOCS if live.text_matches(d, q)])
    assert set(ids(answer)) == wanted
    assert answer["totalHits"] == len(wanted)
    scores = [hit["_score"] for hit in answer["hits"]]
    assert scores == sorted(scores, reverse=True)


def test_boosts_replace_the_searched_fields(api: Client) -> None:
    by_author = expected_ids([d for d in DOCS if live.text_matches(d, "anne", ["author"])])
    assert by_author
    assert set(ids(search(api, q="anne", perPage=ALL))) == by_author
    assert set(ids(search(api, q="anne", perPage=ALL, boosts={"writer": 3}))) == by_author
    assert search(api, q="anne", boosts={"title": 1})["totalHits"] == 0


# --- filters --------------------------------------------------------------------------------

FILTERS: list[dict[str, Any]] = [
    {"kind": "fiction"},
    {"genre": "fiction"},  # the real name of an aliased field works too
    {"tags": ["award", "sea"]},
    {"available": True},
    {"available": False},
    {"year": {"min": 1900, "max": 2000}},
    {"year": "1850"},
    {"price": {"max": 9.99}},
    {"published": {"min": "2000-01-01", "max": "2010-12-31"}},
    {"published": {"min": "2006-03-17T07:30:00Z", "max": "2006-03-17T07:30:00Z"}},
    {"isbn": {"exists": True}},
    {"price": {"exists": False}},
    {"language": {"not": ["de", "en"]}},
    {"kind": {"not": "history"}},
    {"title": "The Secret Garden"},  # a text field: its keyword sub-field, whole value
    {"writer": "Tom & Jerry"},
    {"title": "Paris <Unplugged>"},
    {"kind": 'fiction" OR genre:"Art'},
    {"copies.tag": "night"},  # nested (configured)
    {"copies.format": "Paperback"},  # nested (from the mapping), text -> keyword
    {"copies.format": {"not": "Paperback"}},  # no copy is a paperback
    {"copies.number": {"min": 300}},
    {"copies.tag": {"exists": False}},
    {"notes.shelf": {"min": 7}},
    {"year": 1850, "language": "de", "available": True},
]


@pytest.mark.parametrize("filters", FILTERS, ids=json.dumps)
def test_filters(api: Client, filters: dict[str, Any]) -> None:
    answer = search(api, filters=filters, perPage=ALL)
    wanted = expected_ids([d for d in DOCS if live.matches(d, filters)])
    assert set(ids(answer)) == wanted
    assert answer["totalHits"] == len(wanted)


# --- facets -------------------------------------------------------------------------------

FACETS = ["kind", "language", "tags", "available", "copies.format", "writer", "year"]


def test_facets_are_disjunctive(api: Client) -> None:
    filters = {"kind": ["history", "fiction"], "language": "de", "year": {"min": 1900},
               "available": {"exists": True}}
    answer = search(api, facets=",".join(FACETS), filters=filters, perPage=ALL)
    assert set(ids(answer)) == expected_ids([d for d in DOCS if live.matches(d, filters)])
    assert set(answer["facets"]) == set(FACETS)
    for name in FACETS:
        others = {k: v for k, v in filters.items() if k != name}  # never its own filter
        counted = [d for d in DOCS if live.matches(d, others)]
        assert answer["facets"][name] == live.facet(counted, name), name


def test_a_nested_facet_counts_documents_not_objects(api: Client) -> None:
    answer = search(api, facets="copies.format,copies.tag")
    assert answer["facets"]["copies.format"] == live.facet(DOCS, "copies.format")
    assert answer["facets"]["copies.tag"] == live.facet(DOCS, "tags")
    hardcover = next(v for v in answer["facets"]["copies.format"] if v["value"] == "Hardcover")
    assert hardcover["count"] == sum(1 for d in DOCS if d.get("copies"))


@pytest.mark.parametrize(("field", "q", "filters", "max_values"), [
    ("kind", "IST", None, 20),
    ("kind", "", None, 20),
    ("kind", ".*", None, 20),
    ("writer", "MÜLLER", None, 20),
    ("writer", "an", {"language": "de"}, 2),
    ("tags", "a", {"kind": "history"}, 20),
    ("year", "19", None, 3),
    ("available", "RU", None, 20),
    ("copies.format", "back", {"copies.tag": "night"}, 20),
    ("title", "castle", None, 3),
])
def test_facet_values_contain_the_text(api: Client, field: str, q: str,
                                       filters: dict[str, Any] | None, max_values: int) -> None:
    params: dict[str, Any] = {"q": q, "maxValues": max_values}
    if filters is not None:
        params["filters"] = filters
    answer = get(api, f"facets/{field}", **params)
    counted = [d for d in DOCS if live.matches(d, filters or {})]
    assert answer == {"field": field, "values": live.facet(counted, field, q)[:max_values]}


# --- sort, highlight, suggest, fields -------------------------------------------------------

@pytest.mark.parametrize("sort", [
    {"year": "desc", "id": "asc"},
    {"writer": "asc", "id": "desc"},  # text -> author.keyword
    {"copies.number": "asc", "id": "asc"},  # nested: the smallest copy number
    {"copies.number": "desc", "id": "asc"},  # nested: the largest
    {"price": "asc", "published": "desc", "id": "asc"},
    {"available": "desc", "pages": "asc", "id": "asc"},
], ids=json.dumps)
def test_sort(api: Client, sort: dict[str, str]) -> None:
    answer = search(api, sort=sort, perPage=ALL)
    wanted = [live.doc_id(d) for d in sorted(DOCS, key=lambda d: live.sort_key(d, sort))]
    assert ids(answer) == wanted


def test_sort_by_score(api: Client) -> None:
    answer = search(api, q="castle", sort={"_score": "desc"}, perPage=ALL)
    scores = [hit["_score"] for hit in answer["hits"]]
    assert scores and all(isinstance(s, float) for s in scores)
    assert scores == sorted(scores, reverse=True)


def test_sort_on_a_text_field_without_keyword_is_the_engines_400(api: Client) -> None:
    answer = get(api, "search", status=400, sort={"place": "asc"})
    assert answer["error"]


def test_highlights_mark_html_escaped_text(api: Client) -> None:
    answer = search(api, q="unplugged", highlight="true")
    (hit,) = answer["hits"]
    assert hit["_highlights"] == {"title": ["Paris &lt;<mark>Unplugged</mark>&gt;"]}
    answer = search(api, q="anne", highlight="true", perPage=ALL)
    assert answer["hits"]
    for hit in answer["hits"]:
        assert hit["_highlights"] == {"writer": ["<mark>Anne</mark> Rice"]}  # public name
    answer = search(api, q="castle anne", highlight="writer", perPage=ALL)
    assert {k for hit in answer["hits"] for k in hit["_highlights"]} == {"writer"}
    assert all(hit["_highlights"] == {} for hit in search(api, q="anne")["hits"])


def test_suggest(api: Client) -> None:
    answer = search(api, q="castel", suggest="true")
    assert "castle" in answer["suggestions"]
    assert search(api, suggest="true")["suggestions"] == []


def test_fields_limit_the_stored_fields(api: Client, index_name: str) -> None:
    answer = search(api, fields="title,writer", perPage=ALL)
    assert len(answer["hits"]) == len(DOCS)
    for hit in answer["hits"]:
        doc = BY_ID[hit["objectID"]]
        kept = live.shaped(doc, index_name, keep=lambda name: name in ("title", "writer"))
        assert hit == {**kept, "_score": hit["_score"], "_highlights": {}}


# --- histograms and geo -----------------------------------------------------------------------

def histogram(docs: list[live.Doc], field: str, interval: float) -> list[dict[str, Any]]:
    counts = Counter(math.floor(v / interval) * interval
                     for d in docs for v in live.values(d, field))
    if not counts:
        return []
    low, high = min(counts), max(counts)
    steps = round((high - low) / interval)
    return [{"key": low + i * interval, "count": counts.get(low + i * interval, 0)}
            for i in range(steps + 1)]


def test_histograms_follow_every_filter(api: Client) -> None:
    filters = {"kind": "history", "available": True}
    answer = search(api, histogram={"year": 50, "price": 5}, facets="kind", filters=filters)
    hits = [d for d in DOCS if live.matches(d, filters)]
    assert answer["histograms"] == {"year": histogram(hits, "year", 50),
                                    "price": histogram(hits, "price", 5)}


def test_a_nested_histogram_counts_documents_not_objects(api: Client) -> None:
    answer = search(api, histogram={"copies.number": 100})
    buckets = [{math.floor(c["number"] / 100) * 100 for c in d.get("copies", [])} for d in DOCS]
    counts = Counter(key for keys in buckets for key in keys)
    expected = [{"key": key, "count": counts.get(key, 0)}
                for key in range(min(counts), max(counts) + 100, 100)]
    assert answer["histograms"] == {"copies.number": expected}


EUROPE = {"top_left": {"lat": 60, "lon": -10}, "bottom_right": {"lat": 35, "lon": 20}}


def inside(doc: live.Doc) -> bool:
    found = live.point(doc)
    return found is not None and 35 <= found[0] <= 60 and -10 <= found[1] <= 20


def test_geo_clusters_within_bounds(api: Client) -> None:
    filters = {"kind": {"not": "poetry"}}
    answer = search(api, geoGrid={"field": "location", "precision": 4, "bounds": EUROPE},
                     facets="kind", filters=filters, perPage=ALL)
    boxed = [d for d in DOCS if inside(d) and live.matches(d, filters)]
    assert boxed
    assert set(ids(answer)) == expected_ids(boxed)
    assert answer["totalHits"] == len(boxed)
    tiles: dict[str, list[live.Doc]] = defaultdict(list)
    for d in boxed:
        lat, lon = live.point(d) or (0.0, 0.0)
        tiles[live.tile(lat, lon, 4)].append(d)
    clusters = {c["key"]: c for c in answer["geoClusters"]}
    assert set(clusters) == set(tiles)
    for key, members in tiles.items():
        cluster = clusters[key]
        assert cluster["count"] == len(members)
        points = [live.point(d) or (0.0, 0.0) for d in members]
        assert cluster["lat"] == pytest.approx(sum(p[0] for p in points) / len(points), abs=1e-5)
        assert cluster["lng"] == pytest.approx(sum(p[1] for p in points) / len(points), abs=1e-5)
        assert cluster["hit"]["objectID"] in expected_ids(members)
    # the facet of the filtered field counts every kind, but only inside the box
    assert answer["facets"]["kind"] == live.facet([d for d in DOCS if inside(d)], "kind")


# --- autocomplete and raw queries -----------------------------------------------------------

def test_autocomplete(api: Client) -> None:
    answer = get(api, "autocomplete", q="ar", facets="kind,writer,language",
                 perPage=5, maxFacetsPerField=2)
    wanted = expected_ids([d for d in DOCS if live.text_matches(d, "ar")])
    assert answer["totalHits"] == len(wanted)
    assert len(answer["hits"]) == min(5, len(wanted))
    assert set(ids(answer)) <= wanted
    facets = {name: live.facet(DOCS, name, "ar")[:2] for name in ("kind", "writer", "language")}
    assert answer.get("facets", {}) == {name: v for name, v in facets.items() if v}


def test_a_raw_query_reaches_only_this_index(api: Client, index_name: str) -> None:
    body = {"size": 3, "query": {"term": {"language": "de"}}, "index": "somewhere-else"}
    response = api.post(f"/{live.HANDLE}/query", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    german = [d for d in DOCS if d.get("language") == "de"]
    assert answer["hits"]["total"]["value"] == len(german)
    assert {hit["_index"] for hit in answer["hits"]["hits"]} == {index_name}
    rejected = api.post(f"/{live.HANDLE}/query", json={"query": {"no_such_query": {}}})
    assert rejected.status_code == 400
    assert rejected.json()["error"]


def test_a_raw_query_may_look_up_its_own_index_only(api: Client, index_name: str) -> None:
    german = [d for d in DOCS if d.get("language") == "de"]
    lookup = {"index": index_name, "id": live.doc_id(german[0]), "path": "language"}
    body = {"size": 0, "track_total_hits": True, "query": {"terms": {"language": lookup}}}
    response = api.post(f"/{live.HANDLE}/query", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["hits"]["total"]["value"] == len(german)
    elsewhere = {"query": {"terms": {"language": {**lookup, "index": "somewhere-else"}}}}
    refused = api.post(f"/{live.HANDLE}/query", json=elsewhere)
    assert refused.status_code == 400
    assert 'index "somewhere-else" through a terms lookup' in refused.json()["error"]
