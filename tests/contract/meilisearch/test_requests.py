"""The exact requests the adapter sends for every option of every endpoint.

The expected bodies are written from the Meilisearch search API reference and searchport's docs:
which search parameter each option becomes, which filter expression each filter is, which
queries a disjunctive facet needs. The sentinel highlight tags are the adapter's own
convention, documented in ``translate.py``.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from typing import Any

import pytest

from searchport.adapters.meilisearch import translate
from searchport.domain.query import (
    AnyOf,
    GeoSort,
    Negated,
    SearchQuery,
    SortClause,
    TermFilter,
)
from tests.contract.meilisearch import meili_answers as ma
from tests.contract.meilisearch.conftest import (
    FACET_SEARCH,
    INDEX_PATH,
    KEY,
    MULTI,
    SEARCH,
    MeiliApp,
    MeiliDouble,
    books_yaml,
    q,
)

PAGE_1 = {"page": 1, "hitsPerPage": 20}
SCORE = {"showRankingScore": True}
PRE, POST = "\ue000", "\ue001"


def search_ok(books: MeiliApp, double: MeiliDouble, **params: Any) -> dict[str, Any]:
    """Run one search answered with an empty result; the body the engine received."""
    double.search((200, ma.search()))
    response = books.get("/books/search", params=q(**params))
    assert response.status_code == 200, response.text
    sent = books.last()
    assert (sent.method, sent.path, sent.query) == ("POST", SEARCH, "")
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert isinstance(sent.body, dict)
    return sent.body


def filter_of(books: MeiliApp, double: MeiliDouble, filters: dict[str, Any]) -> Any:
    return search_ok(books, double, filters=filters)["filter"]


# ---------------------------------------------------------------- text, fields, pages


def test_text_searches_the_configured_fields_with_the_frequency_strategy(
    books: MeiliApp, double: MeiliDouble
) -> None:
    body = search_ok(books, double, q="castle night", page=2, perPage=5)
    assert body == {
        "q": "castle night",
        "matchingStrategy": "frequency",
        "attributesToSearchOn": ["title", "author"],
        "page": 2,
        "hitsPerPage": 5,
        **SCORE,
    }


@pytest.mark.parametrize("text", ["", "   "])
def test_blank_text_is_a_placeholder_search(books: MeiliApp, double: MeiliDouble,
                                            text: str) -> None:
    body = search_ok(books, double, q=text)
    assert body == {"attributesToSearchOn": ["title", "author"], **PAGE_1, **SCORE}


def test_without_weights_or_searchable_fields_every_field_is_searched(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    app = meili_app(books_yaml(fields=""), double)
    double.search((200, ma.search()))
    assert app.get("/books/search", params={"q": "x"}).status_code == 200
    assert app.last().body == {"q": "x", "matchingStrategy": "frequency", **PAGE_1, **SCORE}


def test_no_api_key_sends_no_authorization(double: MeiliDouble,
                                           meili_app: Callable[..., MeiliApp]) -> None:
    app = meili_app(books_yaml(api_key=None), double)
    double.search((200, ma.search()))
    assert app.get("/books/search").status_code == 200
    assert all("authorization" not in s.headers for s in app.sent)


def test_page_and_per_page_become_page_and_hits_per_page(books: MeiliApp,
                                                         double: MeiliDouble) -> None:
    body = search_ok(books, double, page=3, perPage=7)
    assert (body["page"], body["hitsPerPage"]) == (3, 7)


def test_exact_totals_off_uses_offset_and_limit(double: MeiliDouble,
                                                meili_app: Callable[..., MeiliApp]) -> None:
    app = meili_app(books_yaml(settings="exactTotals: false"), double)
    double.search((200, ma.estimated(estimated_total=977, offset=10, limit=5)))
    response = app.get("/books/search", params={"page": 3, "perPage": 5})
    assert response.status_code == 200
    body = app.last().body
    assert (body["offset"], body["limit"]) == (10, 5)
    assert "page" not in body and "hitsPerPage" not in body
    assert response.json()["totalHits"] == 977


def test_fields_become_attributes_to_retrieve_with_the_primary_key(
    books: MeiliApp, double: MeiliDouble
) -> None:
    body = search_ok(books, double, fields="title,kind")
    assert body["attributesToRetrieve"] == ["title", "genre", "id"]
    body = search_ok(books, double, fields="id,title")
    assert body["attributesToRetrieve"] == ["id", "title"]


# ---------------------------------------------------------------- sort


def test_sort_keeps_its_priority_and_takes_aliases(books: MeiliApp, double: MeiliDouble) -> None:
    body = search_ok(books, double, sort={"when": "desc", "title": "asc"})
    assert body["sort"] == ["year:desc", "title:asc"]


def test_relevance_descending_needs_no_sort_rule(books: MeiliApp, double: MeiliDouble) -> None:
    body = search_ok(books, double, sort={"_score": "desc", "price": "asc"})
    assert body["sort"] == ["price:asc"]
    assert "sort" not in search_ok(books, double, sort={"_score": "desc"})


def test_relevance_ascending_is_refused(books: MeiliApp, double: MeiliDouble) -> None:
    response = books.get("/books/search", params=q(sort={"_score": "asc"}))
    assert response.status_code == 400
    assert response.json()["error"] == (
        "Sorting by _score ascending is not supported by the meilisearch engine")
    assert books.data_requests() == []


# ---------------------------------------------------------------- filters


@pytest.mark.parametrize(("filters", "expected"), [
    ({"kind": "fiction"}, ['genre = "fiction"']),
    ({"author": 'Say "hi" \\ bye'}, ['author = "Say \\"hi\\" \\\\ bye"']),
    ({"title": "x AND genre = y OR TO ]"}, ['title = "x AND genre = y OR TO ]"']),
    ({"kind": ["fiction", "poetry"]}, ['genre IN ["fiction", "poetry"]']),
    ({"when": 1925}, ["year = 1925"]),
    ({"price": [10.5, 4]}, ["price IN [10.5, 4]"]),
    ({"available": True}, ["available = true"]),
    ({"available": [False]}, ["available = false"]),
    # both bounds: one range over the values (TO, both included), not two conditions
    ({"when": {"min": 1900, "max": 1999.5}}, ["year 1900 TO 1999.5"]),
    ({"when": {"min": -5}}, ["year >= -5"]),
    ({"price": {"max": 1e16}}, ["price <= 1e16"]),
    ({"kind": {"not": "fiction"}}, ['genre NOT IN ["fiction"]']),
    ({"tags": {"not": ["a", "b"]}}, ['tags NOT IN ["a", "b"]']),
    ({"price": {"exists": True}}, ["price EXISTS AND price IS NOT NULL"]),
    ({"price": {"exists": False}}, ["price NOT EXISTS OR price IS NULL"]),
    ({"AND": "x"}, ['"AND" = "x"']),
    ({"notes.shelf": 7, "größe": "L"}, ["notes.shelf = 7", 'größe = "L"']),
])
def test_each_filter_is_one_expression(books: MeiliApp, double: MeiliDouble,
                                       filters: dict[str, Any], expected: list[str]) -> None:
    assert filter_of(books, double, filters) == expected


def test_filters_on_several_fields_are_a_list_anded_by_meilisearch(
    books: MeiliApp, double: MeiliDouble
) -> None:
    body = search_ok(books, double, filters={"kind": ["a", "b"], "when": {"min": 1}})
    assert body["filter"] == ['genre IN ["a", "b"]', "year >= 1"]


@pytest.mark.parametrize("name", ["a b", "x=1", "a)OR(b", 'q"', "t:asc", "ö'", ""])
def test_field_names_outside_the_grammar_are_refused(books: MeiliApp, name: str) -> None:
    response = books.get("/books/search", params=q(filters={name: "v"}))
    assert response.status_code == 400
    assert "cannot be used in a meilisearch filter" in response.json()["error"]
    assert books.data_requests() == []


def test_unsafe_sort_fields_are_refused(books: MeiliApp) -> None:
    response = books.get("/books/search", params=q(sort={"a:desc,b": "asc"}))
    assert response.status_code == 400
    assert "cannot be used in a meilisearch sort" in response.json()["error"]
    assert books.data_requests() == []


def test_date_ranges_are_refused_with_the_reason(books: MeiliApp) -> None:
    response = books.get("/books/search",
                         params=q(filters={"published": {"min": "2020-01-01"}}))
    assert response.status_code == 400
    message = response.json()["error"]
    assert "date range" in message and "meilisearch" in message and "Unix timestamps" in message
    assert books.data_requests() == []


DATED_FIELDS = """\
    fields:
      title: {weight: 2}
      when: {field: published, type: date}
      kind: {field: genre}
"""


def unix(*moment: int) -> int:
    """Seconds since 1970 of a UTC calendar moment (written without the adapter's code)."""
    return calendar.timegm((*moment, *(0,) * (6 - len(moment)), 0, 0, 0))


@pytest.mark.parametrize(("filters", "expected"), [
    # the end of a span is excluded: TO's upper bound is the double before it (as numbers,
    # from Python's math.nextafter: 1580515200 is unix(2020, 2, 1))
    ({"when": {"min": "2020-01-01", "max": "2020-01-31"}},
     [f"published {unix(2020, 1, 1)} TO 1580515199.9999998"]),
    ({"when": {"max": "2020-05-10T12:00:00+02:00"}},
     [f"published < {unix(2020, 5, 10, 10, 0, 1)}"]),
    ({"when": {"min": "2020-05-10T10:00:00.75"}}, [f"published >= {unix(2020, 5, 10, 10)}"]),
    ({"when": {"min": 5, "max": 7.5}}, ["published 5 TO 7.5"]),
    ({"when": "2020-05-10"}, [f"published {unix(2020, 5, 10)} TO 1589155199.9999998"]),
    ({"when": ["2020-05-10T10:00:00Z", 42]},
     [f"(published IN [42] OR published {unix(2020, 5, 10, 10)} TO 1589104800.9999998)"]),
    ({"when": 42}, ["published = 42"]),
    ({"when": {"not": "1969-12-31"}}, [f"NOT published {unix(1969, 12, 31)} TO -5e-324"]),
    ({"when": {"not": [1, 2]}}, ["published NOT IN [1, 2]"]),
    ({"kind": "2020-05-10"}, ['genre = "2020-05-10"']),  # not a date field: a string
])
def test_dates_on_a_date_field_are_the_unix_seconds_they_cover(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp], filters: dict[str, Any],
    expected: list[str],
) -> None:
    app = meili_app(books_yaml(fields=DATED_FIELDS), double)
    assert filter_of(app, double, filters) == expected


def test_facet_values_filter_dates_as_seconds_too(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    app = meili_app(books_yaml(fields=DATED_FIELDS), double)
    double.search((200, ma.search(hits_per_page=0, facets={"genre": {}})))
    response = app.get("/books/facets/kind", params=q(filters={"when": {"max": "1970-01-01"}}))
    assert response.status_code == 200, response.text
    assert app.last().body == {"filter": [f"published < {unix(1970, 1, 2)}"],
                               "facets": ["genre"], "hitsPerPage": 0}


# ---------------------------------------------------------------- facets


def test_facets_without_own_filters_are_one_search(books: MeiliApp, double: MeiliDouble) -> None:
    body = search_ok(books, double, facets="kind,tags", filters={"when": 1925})
    assert body == {"filter": ["year = 1925"], "facets": ["genre", "tags"], **PAGE_1, **SCORE,
                    "attributesToSearchOn": ["title", "author"]}


def test_a_facet_with_its_own_filter_is_counted_without_it_in_a_multi_search(
    books: MeiliApp, double: MeiliDouble
) -> None:
    double.multi((200, ma.multi(ma.search(), ma.search(hits_per_page=0),
                                ma.search(hits_per_page=0))))
    response = books.get("/books/search", params=q(
        q="night", facets="kind,tags,available",
        filters={"kind": "fiction", "tags": ["award", "sea"], "when": {"min": 1900}}))
    assert response.status_code == 200, response.text
    sent = books.last()
    assert (sent.method, sent.path) == ("POST", MULTI)
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    text = {"q": "night", "matchingStrategy": "frequency",
            "attributesToSearchOn": ["title", "author"]}
    genre, tags, year = 'genre = "fiction"', 'tags IN ["award", "sea"]', "year >= 1900"
    assert sent.body == {"queries": [
        {"indexUid": "books", **text, "filter": [genre, tags, year], "facets": ["available"],
         **PAGE_1, **SCORE},
        {"indexUid": "books", **text, "filter": [tags, year], "facets": ["genre"],
         "hitsPerPage": 0},
        {"indexUid": "books", **text, "filter": [genre, year], "facets": ["tags"],
         "hitsPerPage": 0},
    ]}


def test_the_only_filter_on_a_facet_leaves_its_count_query_unfiltered(
    books: MeiliApp, double: MeiliDouble
) -> None:
    double.multi((200, ma.multi(ma.search(), ma.search(hits_per_page=0))))
    response = books.get("/books/search", params=q(facets="kind", filters={"kind": "x"}))
    assert response.status_code == 200, response.text
    assert books.last().body == {"queries": [
        {"indexUid": "books", "attributesToSearchOn": ["title", "author"],
         "filter": ['genre = "x"'], **PAGE_1, **SCORE},
        {"indexUid": "books", "attributesToSearchOn": ["title", "author"],
         "facets": ["genre"], "hitsPerPage": 0},
    ]}


def test_count_queries_estimate_too_when_exact_totals_are_off(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    app = meili_app(books_yaml(settings="exactTotals: false", fields=""), double)
    double.multi((200, {"results": [ma.estimated(), ma.estimated(limit=0)]}))
    response = app.get("/books/search", params=q(facets="genre", filters={"genre": "x"}))
    assert response.status_code == 200, response.text
    queries = app.last().body["queries"]
    assert queries[1] == {"indexUid": "books", "facets": ["genre"], "limit": 0}


# ---------------------------------------------------------------- highlight


def test_highlight_true_highlights_every_field_with_sentinel_tags(
    books: MeiliApp, double: MeiliDouble
) -> None:
    body = search_ok(books, double, q="castle", highlight="true")
    assert {k: body[k] for k in ("attributesToHighlight", "highlightPreTag",
                                  "highlightPostTag", "attributesToCrop", "cropLength",
                                  "cropMarker")} == {
        "attributesToHighlight": ["*"], "highlightPreTag": PRE, "highlightPostTag": POST,
        "attributesToCrop": ["*"], "cropLength": 30, "cropMarker": "",
    }


def test_highlight_fields_take_aliases(books: MeiliApp, double: MeiliDouble) -> None:
    body = search_ok(books, double, q="castle", highlight="title,kind")
    assert body["attributesToHighlight"] == ["title", "genre"]
    assert body["attributesToCrop"] == ["title", "genre"]


def test_no_highlight_asks_for_none(books: MeiliApp, double: MeiliDouble) -> None:
    body = search_ok(books, double, q="castle", highlight="false")
    assert not {"attributesToHighlight", "highlightPreTag", "attributesToCrop"} & set(body)


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(("params", "feature"), [
    ({"boosts": {"title": 3}}, "boosts"),
    ({"histogram": {"year": 10}}, "histogram"),
    ({"geoGrid": {"field": "location", "precision": 3}}, "geoGrid"),
    ({"suggest": "true"}, "suggest"),
])
def test_features_meilisearch_cannot_do_are_refused_naming_them(
    books: MeiliApp, params: dict[str, Any], feature: str
) -> None:
    response = books.get("/books/search", params=q(q="x", **params))
    assert response.status_code == 400
    assert response.json() == {"error": f"{feature} is not supported by the meilisearch engine"}
    assert books.data_requests() == []


# ---------------------------------------------------------------- facet values


def test_facet_values_without_text_read_the_distribution(books: MeiliApp,
                                                        double: MeiliDouble) -> None:
    double.search((200, ma.search(hits_per_page=0, facets={"genre": {"fiction": 2}})))
    response = books.get("/books/facets/kind", params=q(filters={"when": {"max": 2000}}))
    assert response.status_code == 200, response.text
    [sent] = books.data_requests()
    assert (sent.method, sent.path) == ("POST", SEARCH)
    assert sent.body == {"filter": ["year <= 2000"], "facets": ["genre"], "hitsPerPage": 0}


def test_facet_values_with_text_also_use_the_facet_search(books: MeiliApp,
                                                         double: MeiliDouble) -> None:
    double.search((200, ma.search(hits_per_page=0, facets={"genre": {}})))
    double.on("POST", FACET_SEARCH, (200, ma.facet_search([], "his")))
    response = books.get("/books/facets/kind", params=q(q="His", filters={"tags": ["a"]}))
    assert response.status_code == 200, response.text
    sent = {s.path: s for s in books.data_requests()}
    assert set(sent) == {SEARCH, FACET_SEARCH}
    assert sent[SEARCH].body == {"filter": ['tags = "a"'], "facets": ["genre"],
                                 "hitsPerPage": 0}
    assert sent[FACET_SEARCH].body == {"facetName": "genre", "facetQuery": "His",
                                       "filter": ['tags = "a"'],
                                       "exhaustiveFacetCount": True}
    assert sent[FACET_SEARCH].headers["authorization"] == f"Bearer {KEY}"


def test_autocomplete_searches_and_reads_facet_values(books: MeiliApp,
                                                      double: MeiliDouble) -> None:
    double.search((200, ma.search()))
    double.on("POST", FACET_SEARCH, (200, ma.facet_search([])))
    response = books.get("/books/autocomplete", params={"q": "cas", "facets": "kind"})
    assert response.status_code == 200, response.text
    bodies = [s.body for s in books.data_requests() if s.path == SEARCH]
    assert {"q": "cas", "matchingStrategy": "frequency",
            "attributesToSearchOn": ["title", "author"], "page": 1, "hitsPerPage": 5,
            **SCORE} in bodies


# ---------------------------------------------------------------- documents, mapping, raw


def test_a_document_is_read_by_id(books: MeiliApp, double: MeiliDouble) -> None:
    double.on("GET", f"{INDEX_PATH}/documents/b-01_x", (200, ma.CASTLE))
    response = books.get("/books/documents/b-01_x")
    assert response.status_code == 200
    sent = books.last()
    assert (sent.method, sent.path, sent.body) == ("GET", f"{INDEX_PATH}/documents/b-01_x",
                                                   None)
    assert sent.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("doc_id", ["a/b", "a.b", "a b", "é", "x" * 512])
def test_ids_meilisearch_cannot_hold_are_not_found_without_asking(books: MeiliApp,
                                                                  doc_id: str) -> None:
    response = books.get(f"/books/documents/{doc_id}")
    assert response.status_code == 404
    assert response.json() == {"error": "Document not found"}
    assert books.data_requests() == []


def test_the_mapping_is_the_index_settings(books: MeiliApp, double: MeiliDouble) -> None:
    double.on("GET", f"{INDEX_PATH}/settings", (200, ma.settings()))
    response = books.get("/books/mapping")
    assert response.status_code == 200
    assert response.json() == ma.settings()
    assert (books.last().method, books.last().path) == ("GET", f"{INDEX_PATH}/settings")


def test_a_raw_query_goes_to_the_handles_index_only(books: MeiliApp,
                                                    double: MeiliDouble) -> None:
    answer = b'{"hits":[],"query":"x","processingTimeMs":0,"limit":3,"offset":0,' \
             b'"estimatedTotalHits":0}'
    double.search((200, answer))
    response = books.post("/books/query", json={"q": "x", "limit": 3, "indexUid": "secrets",
                                                "filter": "genre = a"})
    assert response.status_code == 200
    assert response.content == answer
    sent = books.last()
    assert (sent.method, sent.path) == ("POST", SEARCH)
    assert sent.body == {"q": "x", "limit": 3, "filter": "genre = a"}


# ---------------------------------------------------------------- bookkeeping


def test_the_primary_key_is_read_once_at_start(books: MeiliApp, double: MeiliDouble) -> None:
    double.search((200, ma.search()))
    for _ in range(3):
        assert books.get("/books/search").status_code == 200
    lookups = [s for s in books.sent if s.path == INDEX_PATH]
    assert len(lookups) == 1
    assert lookups[0].method == "GET"
    assert lookups[0].headers["authorization"] == f"Bearer {KEY}"



# ---------------------------------------------------------------- the Algolia endpoints


def algolia_ok(books: MeiliApp, double: MeiliDouble, params: dict[str, Any]) -> dict[str, Any]:
    double.search((200, ma.search()))
    response = books.post("/1/indexes/books/query", json={"params": params})
    assert response.status_code == 200, response.text
    sent = books.last()
    assert (sent.method, sent.path) == ("POST", SEARCH)
    assert isinstance(sent.body, dict)
    return sent.body


def test_algolia_strict_bounds_are_strict_comparisons(books: MeiliApp,
                                                      double: MeiliDouble) -> None:
    body = algolia_ok(books, double, {"numericFilters": ["when>1900", "when<2000.5"],
                                      "filters": "price:5 TO 10"})
    assert body["filter"] == ["year > 1900", "year < 2000.5", "price 5 TO 10"]


def test_algolia_facet_counts_follow_every_filter(books: MeiliApp, double: MeiliDouble) -> None:
    """One search: a facet's own filter narrows its counts too (no count-only query)."""
    body = algolia_ok(books, double, {"facetFilters": ["kind:-poetry", ["kind:a", "kind:b"]],
                                      "facets": ["kind"], "hitsPerPage": 0})
    assert body["filter"] == ['genre NOT IN ["poetry"]', 'genre IN ["a", "b"]']
    assert body["facets"] == ["genre"]


def test_algolia_ors_across_attributes_and_negations_are_or_and_not(
    books: MeiliApp, double: MeiliDouble
) -> None:
    """Clauses no single filter expresses: members in parentheses joined by ``OR``, a
    negated comparison or range as ``NOT (...)`` (Meilisearch's complement: documents
    without the attribute too), one expression per clause."""
    body = algolia_ok(books, double, {
        "filters": "(kind:poetry OR when > 1900) AND NOT price:10 TO 20 "
                   "AND (price < 5 OR price > 100) AND (NOT kind:a OR NOT kind:b)"})
    assert body["filter"] == [
        '(genre = "poetry") OR (year > 1900)',
        "NOT (price 10 TO 20)",
        "(price < 5) OR (price > 100)",
        '(genre NOT IN ["a"]) OR (genre NOT IN ["b"])',
    ]


def test_a_group_is_never_a_facets_own_filter(books: MeiliApp, double: MeiliDouble) -> None:
    """On the Algolia route every filter narrows every facet: one search, no count query,
    a group included."""
    body = algolia_ok(books, double, {"filters": "kind:poetry OR when > 1900",
                                      "facets": ["kind"]})
    assert body["filter"] == ['(genre = "poetry") OR (year > 1900)']
    assert body["facets"] == ["genre"]


def test_with_disjunctive_facets_a_group_narrows_every_count_query() -> None:
    """``/search`` counts a facet without its own filters; a group is nobody's own."""
    group = AnyOf(filters=(TermFilter(field="genre", values=("a",)),
                           Negated(filter=TermFilter(field="year", values=(1,)))))
    own = TermFilter(field="genre", values=("b",))
    plan = translate.search_plan(SearchQuery(filters=(group, own), facets=("genre",)),
                                 "books", "id")
    main, counts = plan.body["queries"]
    assert main["filter"] == ['(genre = "a") OR (NOT (year = 1))', 'genre = "b"']
    assert counts["filter"] == ['(genre = "a") OR (NOT (year = 1))']
    assert counts["facets"] == ["genre"]


def test_a_group_with_a_date_field_member_uses_the_seconds(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    app = meili_app(books_yaml(fields=DATED_FIELDS), double)
    body = algolia_ok(app, double, {"filters": "kind:poetry OR NOT when > 100"})
    assert body["filter"] == ['(genre = "poetry") OR (NOT (published > 100))']


GEO_FIELDS = """\
    fields:
      kind: {field: genre}
      where: {field: _geo, type: geo_point}
"""


def test_algolia_around_radius_is_a_geo_radius_expression_and_a_geo_sort(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    """aroundLatLng + aroundRadius (meters): ``_geoRadius(lat, lng, meters)``, which reads
    the reserved ``_geo`` field, next to the other filters; and closest first,
    ``_geoPoint(lat,lng):asc`` (relevance needs no rule)."""
    books = meili_app(books_yaml(fields=GEO_FIELDS), double)
    body = algolia_ok(books, double, {"aroundLatLng": "48.85, -2.5", "aroundRadius": 1500,
                                      "facetFilters": ["kind:poetry"]})
    assert body["filter"] == ['genre = "poetry"', "_geoRadius(48.85, -2.5, 1500)"]
    assert body["sort"] == ["_geoPoint(48.85,-2.5):asc"]


def test_algolia_boxes_and_polygons_are_geo_bounding_box_and_geo_polygon_expressions(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    """A box: ``_geoBoundingBox([north, east], [south, west])`` (top right, then bottom
    left, as Meilisearch's reference writes it); several: ORed; a polygon:
    ``_geoPolygon([lat, lng], ...)`` with its points in order."""
    books = meili_app(books_yaml(fields=GEO_FIELDS), double)
    body = algolia_ok(books, double, {"insideBoundingBox": [[40, 0, 50, 10], [1, 2, -1, -2]]})
    assert body["filter"] == ["(_geoBoundingBox([50.0, 10.0], [40.0, 0.0])) OR "
                              "(_geoBoundingBox([1.0, 2.0], [-1.0, -2.0]))"]
    body = algolia_ok(books, double, {"insidePolygon": [[55, -5, 55, 20, 38, 7.5]],
                                      "facetFilters": ["kind:poetry"]})
    assert body["filter"] == ['genre = "poetry"',
                              "_geoPolygon([55.0, -5.0], [55.0, 20.0], [38.0, 7.5])"]


def test_algolia_hits_carry_the_geo_field_as_geoloc(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    books = meili_app(books_yaml(fields=GEO_FIELDS), double)
    double.search((200, ma.search([ma.hit({"id": "1", "_geo": {"lat": 45.5, "lng": 9.25}})])))
    response = books.post("/1/indexes/books/query", json={"params": {}})
    assert response.status_code == 200, response.text
    assert response.json()["hits"][0]["_geoloc"] == {"lat": 45.5, "lng": 9.25}


def test_algolia_around_radius_all_is_a_geo_sort_alone(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    books = meili_app(books_yaml(fields=GEO_FIELDS), double)
    body = algolia_ok(books, double, {"aroundLatLng": [-33.9, 151.25], "aroundRadius": "all",
                                      "query": "castle"})
    assert "filter" not in body
    assert body["sort"] == ["_geoPoint(-33.9,151.25):asc"]


def test_a_geo_sort_comes_before_the_sort_keys() -> None:
    query = SearchQuery(sort=(SortClause(field="year", order="desc"),
                              SortClause(field="_score", order="desc")),
                        geo_sort=GeoSort(field="_geo", lat=1.5, lon=-2))
    body = translate.search_plan(query, "books", "id").body
    assert body["sort"] == ["_geoPoint(1.5,-2):asc", "year:desc"]


@pytest.mark.parametrize(("radius", "refused"), [(10, "A geo radius"),
                                                 ("all", "A distance sort")])
def test_a_geo_radius_or_sort_on_another_field_is_refused(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp], radius: int | str, refused: str
) -> None:
    """Meilisearch filters and sorts by distance on ``_geo`` only: any other geo_point
    field is a 400 naming it, and nothing is sent."""
    fields = "    fields:\n      where: {field: location, type: geo_point}\n"
    books = meili_app(books_yaml(fields=fields), double)
    response = books.post("/1/indexes/books/query",
                          json={"aroundLatLng": "1,2", "aroundRadius": radius})
    assert response.status_code == 400
    assert response.json()["error"] == (
        f"{refused} on 'location' (only on the _geo field) is not supported by the "
        "meilisearch engine")
    assert books.data_requests() == []


# ---------------------------------------------------------------- custom ranking


def ranked_books(double: MeiliDouble, meili_app: Callable[..., MeiliApp]) -> MeiliApp:
    return meili_app(books_yaml(settings="customRanking: [{field: when}, {field: price, "
                                         "order: asc}]"), double)


def test_custom_ranking_is_the_sort_of_a_query_without_one(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    """Sent as ``sort`` (real names): Meilisearch applies it where the index's
    rankingRules hold "sort", after words, typo, proximity and attribute by default."""
    books = ranked_books(double, meili_app)
    assert search_ok(books, double, q="castle")["sort"] == ["year:desc", "price:asc"]
    assert search_ok(books, double, q="castle", sort={"title": "asc"})["sort"] == ["title:asc"]


def test_an_index_that_cannot_sort_by_the_custom_ranking_is_a_400_saying_what_to_fix(
    double: MeiliDouble, meili_app: Callable[..., MeiliApp]
) -> None:
    books = ranked_books(double, meili_app)
    refusal = ma.error("Attribute `year` is not sortable. Available sortable attributes "
                       "are: `title`.", "invalid_search_sort")
    double.search((400, refusal))
    response = books.get("/books/search", params=q(q="castle"))
    assert response.status_code == 400
    message = response.json()["error"]
    assert message.startswith("customRanking sorts by year, price: the Meilisearch index "
                              "must list them in sortableAttributes and keep \"sort\" in "
                              "its rankingRules after the relevance rules")
    assert "Attribute `year` is not sortable" in message


def test_algolia_words_all_match_but_the_optional_ones(
    books: MeiliApp, double: MeiliDouble
) -> None:
    """Algolia's rule, every word must match: ``matchingStrategy: all``; an optional word
    is left out of ``q``."""
    body = algolia_ok(books, double, {"query": "harbour zebra"})
    assert (body["q"], body["matchingStrategy"]) == ("harbour zebra", "all")
    body = algolia_ok(books, double, {"query": "harbour zebra", "optionalWords": ["Zebra"]})
    assert (body["q"], body["matchingStrategy"]) == ("harbour", "all")
    body = algolia_ok(books, double, {"query": "the harbour", "removeStopWords": True,
                                      "queryLanguages": ["en"]})
    assert (body["q"], body["matchingStrategy"]) == ("harbour", "all")


def test_algolia_remove_words_if_no_results_asks_again_with_fewer_words(
    books: MeiliApp, double: MeiliDouble
) -> None:
    """``lastWords``: nothing found, so the last word becomes optional, then the last two."""
    double.search((200, ma.search()), (200, ma.search()),
                  (200, ma.search([ma.hit({"id": "1", "title": "a"})])))
    response = books.post("/1/indexes/books/query", json={"params": {
        "query": "old harbour zebra", "removeWordsIfNoResults": "lastWords"}})
    assert response.status_code == 200, response.text
    assert response.json()["nbHits"] == 1
    asked = [sent.body["q"] for sent in books.data_requests()[-3:]]
    assert asked == ["old harbour zebra", "old harbour", "old"]
