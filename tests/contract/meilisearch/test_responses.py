"""What clients get back: Meilisearch's answers (shaped as in its API reference) read into
searchport's public responses. Expected values are written out from the engine answers."""

from __future__ import annotations

from collections.abc import Callable

from tests.contract.meilisearch import meili_answers as ma
from tests.contract.meilisearch.conftest import (
    FACET_SEARCH,
    INDEX_PATH,
    MeiliApp,
    MeiliDouble,
    books_yaml,
    q,
)

PRE, POST = "\ue000", "\ue001"


def test_hits_carry_primary_key_index_score_and_stored_fields(books: MeiliApp,
                                                              double: MeiliDouble) -> None:
    double.search((200, ma.search([
        ma.hit({**ma.CASTLE, "_score": 99, "objectID": "fake"}, score=0.91),
        ma.hit(ma.NUMBERED, score=0.5),
    ], total=42)))
    response = books.get("/books/search", params={"q": "castle", "perPage": 2})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["totalHits"], body["page"], body["perPage"], body["totalPages"]) == (42, 1, 2,
                                                                                      21)
    first, second = body["hits"]
    assert first["objectID"] == "b01" and first["_index"] == "books"
    assert first["_score"] == 0.91 and first["_highlights"] == {}
    assert first["title"] == "The Castle of Otranto" and first["kind"] == "fiction"
    assert first["when"] == 1925 and "_rankingScore" not in first
    assert second["objectID"] == "46" and second["_score"] == 0.5


def test_the_index_primary_key_names_the_object_id(double: MeiliDouble,
                                                   meili_app: Callable[..., MeiliApp]) -> None:
    double.on("GET", INDEX_PATH, (200, ma.index(primary_key="isbn")))
    app = meili_app(books_yaml(), double)
    double.search((200, ma.search([ma.hit({"isbn": "978-1", "id": "other"})])))
    [only] = app.get("/books/search").json()["hits"]
    assert only["objectID"] == "978-1"


def test_a_refused_primary_key_lookup_falls_back_to_id_field(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    double.on("GET", INDEX_PATH, (403, ma.error("The provided API key is invalid.",
                                                "invalid_api_key", "auth")))
    app = meili_app(books_yaml(settings="idField: isbn"), double)
    double.search((200, ma.search([ma.hit({"isbn": "978-1", "id": "other"})])))
    response = app.get("/books/search")
    assert response.status_code == 200
    assert response.json()["hits"][0]["objectID"] == "978-1"


def test_chosen_fields_hide_the_primary_key_they_did_not_ask_for(
    books: MeiliApp, double: MeiliDouble
) -> None:
    double.search((200, ma.search([ma.hit({"id": "b01", "title": "T"})])))
    [only] = books.get("/books/search", params={"fields": "title"}).json()["hits"]
    assert only == {"objectID": "b01", "_index": "books", "_score": None, "_highlights": {},
                    "title": "T"}


def test_highlights_are_escaped_text_with_marks_for_matching_fields_only(
    books: MeiliApp, double: MeiliDouble
) -> None:
    formatted = {
        "id": "b07",
        "title": f"{PRE}River{POST} of Stars",
        "author": f"Kate <K> & {PRE}Smith{POST}'s \"co\"",
        "genre": "travel",
        "tags": ["city", f"{PRE}night{POST}", "night owl"],
        "notes": {"shelf": "7", "blurb": f"<b>{PRE}river{POST}</b>"},
        "year": "1950",
    }
    double.search((200, ma.search([ma.hit(ma.RIVER, score=1.0, formatted=formatted)])))
    response = books.get("/books/search", params={"q": "river smith", "highlight": "true"})
    [only] = response.json()["hits"]
    assert only["_highlights"] == {
        "title": ["<mark>River</mark> of Stars"],
        "author": ["Kate &lt;K&gt; &amp; <mark>Smith</mark>&#x27;s &quot;co&quot;"],
        "tags": ["<mark>night</mark>"],
        "notes.blurb": ["&lt;b&gt;<mark>river</mark>&lt;/b&gt;"],
    }
    assert "_formatted" not in only and only["author"] == "Kate <K> Smith"


def test_highlight_keys_take_aliases(books: MeiliApp, double: MeiliDouble) -> None:
    double.search((200, ma.search([ma.hit(ma.CASTLE, formatted={
        "genre": f"{PRE}fiction{POST}"})])))
    [only] = books.get("/books/search", params={"q": "fiction", "highlight": "kind"}
                       ).json()["hits"]
    assert only["_highlights"] == {"kind": ["<mark>fiction</mark>"]}


def test_a_document_holding_a_sentinel_gets_no_highlights(books: MeiliApp,
                                                          double: MeiliDouble) -> None:
    doc = {"id": "x", "title": f"odd {PRE} text"}
    double.search((200, ma.search([ma.hit(doc, formatted={
        "id": "x", "title": f"{PRE}odd{POST} {PRE} text"})])))
    [only] = books.get("/books/search", params={"q": "odd", "highlight": "true"}
                       ).json()["hits"]
    assert only["_highlights"] == {}


def test_highlights_are_not_read_unless_asked(books: MeiliApp, double: MeiliDouble) -> None:
    double.search((200, ma.search([ma.hit(ma.CASTLE, formatted={
        "title": f"The {PRE}Castle{POST}"})])))
    [only] = books.get("/books/search", params={"q": "castle"}).json()["hits"]
    assert only["_highlights"] == {}


def test_facets_come_ordered_by_count_then_value_as_strings(books: MeiliApp,
                                                            double: MeiliDouble) -> None:
    double.search((200, ma.search([], total=9, facets={
        "genre": {"poetry": 2, "fiction": 5, "art": 2},
        "available": {"false": 4, "true": 5},
        "year": {"1925": 1, "2004.5": 3},
    })))
    response = books.get("/books/search", params={"facets": "kind,available,when,tags"})
    facets = response.json()["facets"]
    assert facets == {
        "kind": [{"value": "fiction", "count": 5}, {"value": "art", "count": 2},
                 {"value": "poetry", "count": 2}],
        "available": [{"value": "true", "count": 5}, {"value": "false", "count": 4}],
        "when": [{"value": "2004.5", "count": 3}, {"value": "1925", "count": 1}],
        "tags": [],
    }


def test_disjunctive_counts_come_from_each_facets_own_query(books: MeiliApp,
                                                            double: MeiliDouble) -> None:
    double.multi((200, ma.multi(
        ma.search([ma.hit(ma.CASTLE)], total=3, facets={"available": {"true": 3}}),
        ma.search(total=7, hits_per_page=0, facets={"genre": {"fiction": 3, "poetry": 4}}),
    )))
    response = books.get("/books/search", params=q(facets="kind,available",
                                                   filters={"kind": "fiction"}))
    body = response.json()
    assert body["totalHits"] == 3 and [h["objectID"] for h in body["hits"]] == ["b01"]
    assert body["facets"] == {
        "kind": [{"value": "poetry", "count": 4}, {"value": "fiction", "count": 3}],
        "available": [{"value": "true", "count": 3}],
    }


def test_facet_values_merge_the_distribution_and_the_facet_search(
    books: MeiliApp, double: MeiliDouble
) -> None:
    double.search((200, ma.search(hits_per_page=0, facets={"genre": {
        "History": 4, "prehistory": 2, "fiction": 9, "hist": 1}})))
    double.on("POST", FACET_SEARCH, (200, ma.facet_search(
        [("History", 4), ("historical novel", 3), ("hustle", 8)], "hist")))
    response = books.get("/books/facets/kind", params={"q": "HIST"})
    assert response.status_code == 200
    assert response.json() == {"field": "kind", "values": [
        {"value": "History", "count": 4}, {"value": "historical novel", "count": 3},
        {"value": "prehistory", "count": 2}, {"value": "hist", "count": 1},
    ]}


def test_facet_values_use_the_distribution_alone_when_facet_search_is_off(
    books: MeiliApp, double: MeiliDouble
) -> None:
    double.search((200, ma.search(hits_per_page=0, facets={"genre": {"history": 4,
                                                                     "fiction": 2}})))
    double.on("POST", FACET_SEARCH, (400, ma.error(
        "The facet search is disabled for this index.", "facet_search_disabled")))
    response = books.get("/books/facets/kind", params={"q": "hist"})
    assert response.status_code == 200
    assert response.json()["values"] == [{"value": "history", "count": 4}]


def test_facet_values_are_cut_to_max_values(books: MeiliApp, double: MeiliDouble) -> None:
    double.search((200, ma.search(hits_per_page=0, facets={"genre": {
        f"g{i}": i for i in range(1, 30)}})))
    response = books.get("/books/facets/kind", params={"maxValues": 3})
    assert [v["value"] for v in response.json()["values"]] == ["g29", "g28", "g27"]


def test_a_document_reads_back_with_its_id(books: MeiliApp, double: MeiliDouble) -> None:
    double.on("GET", f"{INDEX_PATH}/documents/46", (200, ma.NUMBERED))
    response = books.get("/books/documents/46")
    assert response.json() == {"objectID": "46", "_index": "books",
                               "title": "Gardens of the Moon", "author": "Steven Erikson",
                               "kind": "history", "when": 2004, "id": 46}


def test_a_missing_document_is_a_404(books: MeiliApp, double: MeiliDouble) -> None:
    double.on("GET", f"{INDEX_PATH}/documents/nope", (404, ma.error(
        "Document `nope` not found.", "document_not_found")))
    response = books.get("/books/documents/nope")
    assert response.status_code == 404
    assert response.json() == {"error": "Document not found"}


def test_indexes_report_the_meilisearch_capabilities(books: MeiliApp) -> None:
    [info] = books.get("/indexes").json()["indexes"]
    assert info == {"handle": "books", "engine": "meilisearch", "capabilities": {
        "suggest": False, "boosts": False, "histogram": False, "geoGrid": False,
        "geoRadius": True, "nested": False, "multiIndex": False, "rawQuery": True,
        "semantic": False}}
