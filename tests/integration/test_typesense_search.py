"""``GET /:handle/search`` through the real app on a real Typesense 0.24.1: text, weights
and boosts, sort, pages, fields, highlights and the refusals. Expected values are computed
in plain Python from the rows that were loaded (``typesense_rows``)."""

from __future__ import annotations

import html
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar.testing import TestClient

from searchport.adapters.typesense.translate import MAX_PER_PAGE, integer_weights, page_window
from searchport.domain.errors import InvalidRequest
from tests.integration.typesense_server import (
    app_client,
    index_settings,
    tokens,
    typesense_rows,
)
from tests.typesense_server import TypesenseServer

Row = dict[str, Any]
ROWS = typesense_rows()
BY_ID = {r["id"]: r for r in ROWS}
SEARCHED = ("title", "author")  # the "books" handle: title (weight 2), author as "writer"
ALL_STRINGS = ("title", "author", "genre", "tags", "language", "place", "isbn")
MARK = re.compile(r"</?mark>")


@pytest.fixture(scope="module")
def client(server: TypesenseServer) -> Iterator[TestClient[Any]]:
    fields = {"title": {"weight": 2}, "writer": {"field": "author", "searchable": True}}
    with app_client({"books": index_settings(server, fields=fields),
                     "plain": index_settings(server)}) as client:
        yield client


def search(client: TestClient[Any], handle: str = "books", **params: Any) -> dict[str, Any]:
    encoded = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in params.items()}
    response = client.get(f"/{handle}/search", params=encoded)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def refused(client: TestClient[Any], handle: str = "books", **params: Any) -> str:
    encoded = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in params.items()}
    response = client.get(f"/{handle}/search", params=encoded)
    assert response.status_code == 400, response.text
    message: str = response.json()["error"]
    return message


def listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def text_matches(row: Row, text: str, fields: Iterable[str]) -> bool:
    """Any word in a searched field; the last one also as a prefix when the text ends in a
    letter or digit (Typesense's words: see ``tokens``)."""
    query = tokens(text)
    if not query:
        return True
    last = query[-1] if text[-1].isalnum() else None
    return any(
        word in query or (last is not None and word.startswith(last))
        for field in fields for value in listed(row.get(field)) for word in tokens(str(value))
    )


def all_ids(client: TestClient[Any], handle: str = "books", **params: Any) -> set[str]:
    body = search(client, handle, perPage=100, **params)
    assert body["totalHits"] == len(body["hits"])
    return {h["objectID"] for h in body["hits"]}


# ---------------------------------------------------------------- text


@pytest.mark.parametrize("text", [
    "castle", "castles", "cast", "night", "castle nigh", "zurich", "CAFÉ", "rice", "tom jerry",
    "river stars", "zzz", "zzz night", "cast ", '"castle"', "-castle", "", "   ", "&&",
])
def test_any_word_with_prefix_on_the_last(client: TestClient[Any], text: str) -> None:
    expected = {r["id"] for r in ROWS if text_matches(r, text, SEARCHED)}
    assert all_ids(client, q=text) == expected


@pytest.mark.parametrize("text", ["paris", "history", "de", "award tokyo", "978"])
def test_without_configured_fields_every_string_field_is_searched(
        client: TestClient[Any], text: str) -> None:
    expected = {r["id"] for r in ROWS if text_matches(r, text, ALL_STRINGS)}
    assert all_ids(client, "plain", q=text) == expected


def test_three_words_miss_a_document_holding_only_the_middle_one(
        client: TestClient[Any]) -> None:
    """Typesense 0.24 drops words from the right, then from the left, never both sides:
    the documented limit of any-word matching with three or more words."""
    found = all_ids(client, q="castle night garden")
    expected = {r["id"] for r in ROWS if text_matches(r, "castle night garden", SEARCHED)}
    assert found < expected
    assert "b03" in expected - found  # "A Night in Zürich": only the middle word


def test_scores_are_typesense_text_match(client: TestClient[Any]) -> None:
    body = search(client, q="castle")
    assert all(isinstance(h["_score"], float) and h["_score"] > 0 for h in body["hits"])
    assert all(h["_score"] is None for h in search(client, q="")["hits"])


# ---------------------------------------------------------------- weights and boosts


def test_boosts_order_the_fields_and_replace_the_configured_weights(
        client: TestClient[Any]) -> None:
    in_place = {r["id"] for r in ROWS if r.get("place") == "Paris"}
    in_title = {r["id"] for r in ROWS if "paris" in tokens(r["title"])}
    for boosts, first in (({"place": 10, "title": 1}, in_place),
                          ({"place": 0.75, "title": 0.5}, in_place),
                          ({"title": 3, "place": 0.1}, in_title)):
        hits = search(client, "plain", q="paris", boosts=boosts)["hits"]
        assert {h["objectID"] for h in hits} == in_place | in_title
        assert {h["objectID"] for h in hits[: len(first)]} == first


def test_boosts_search_only_the_boosted_fields(client: TestClient[Any]) -> None:
    assert all_ids(client, q="kate", boosts={"title": 1}) == set()
    assert all_ids(client, q="kate", boosts={"writer": 1}) == {
        r["id"] for r in ROWS if r.get("author") == "Kate <K> Smith"
    }


def test_boosts_on_a_field_that_is_not_text_are_refused(client: TestClient[Any]) -> None:
    assert "'year'" in refused(client, q="x", boosts={"year": 2})
    assert "'nope'" in refused(client, q="x", boosts={"nope": 2})


# ---------------------------------------------------------------- sort and pages


def sort_key(*fields: tuple[str, str]) -> Any:
    def key(row: Row) -> tuple[Any, ...]:
        parts: list[Any] = []
        for field, order in fields:
            value = row.get(field)
            parts += [value is None, 0 if value is None else (-value if order == "desc" else value)]
        return tuple(parts)
    return key


def test_sort_keys_in_priority_order_missing_values_last(client: TestClient[Any]) -> None:
    key = sort_key(("year", "desc"), ("pages", "asc"))
    assert len({key(r) for r in ROWS}) == len(ROWS)  # a total order: no tie to break
    expected = [r["id"] for r in sorted(ROWS, key=key)]
    body = search(client, perPage=100, sort={"year": "desc", "pages": "asc"})
    assert [h["objectID"] for h in body["hits"]] == expected


def test_pages_walk_the_sorted_results(client: TestClient[Any]) -> None:
    key = sort_key(("pages", "asc"), ("year", "asc"))
    expected = [r["id"] for r in sorted(ROWS, key=key)]
    seen = []
    for page in range(1, 9):
        body = search(client, page=page, perPage=7, sort={"pages": "asc", "year": "asc"})
        assert (body["page"], body["perPage"], body["totalHits"], body["totalPages"]) == (
            page, 7, len(ROWS), 7)
        seen += [h["objectID"] for h in body["hits"]]
    assert seen == expected


def test_sort_by_score_then_a_field(client: TestClient[Any]) -> None:
    hits = search(client, q="castle night", sort={"_score": "desc", "year": "asc"})["hits"]
    scores = [h["_score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and hits


def test_sort_refusals(client: TestClient[Any]) -> None:
    assert "'genre'" in refused(client, sort={"genre": "asc"})  # not sortable in the schema
    assert "'nope'" in refused(client, sort={"nope": "asc"})
    message = refused(client, sort={"year": "asc", "pages": "asc", "price": "asc",
                                    "published": "asc"})
    assert message.startswith("The typesense engine rejected the query:")


# ---------------------------------------------------------------- fields


def test_fields_choose_the_stored_fields(client: TestClient[Any]) -> None:
    metadata = {"objectID", "_index", "_score", "_highlights"}
    for hit in search(client, perPage=100, fields="title,year")["hits"]:
        row = BY_ID[hit["objectID"]]
        assert set(hit) == metadata | {"title"} | ({"year"} if "year" in row else set())
        assert hit["_index"] == "books"
    hit = search(client, q="kate", fields="writer,id")["hits"][0]
    assert set(hit) == metadata | {"writer", "id"} and hit["id"] == hit["objectID"]


def test_all_fields_under_their_public_names(client: TestClient[Any]) -> None:
    for hit in search(client, perPage=100)["hits"]:
        row = dict(BY_ID[hit["objectID"]])
        if "author" in row:
            row["writer"] = row.pop("author")
        assert {k: v for k, v in hit.items() if not k.startswith("_") and k != "objectID"} == row


# ---------------------------------------------------------------- highlights


@pytest.mark.parametrize("text", ["kate", "tango", "castle", "paris unplugged", "caf", "zur"])
def test_highlights_are_escaped_text_with_marks_on_query_words(
        client: TestClient[Any], text: str) -> None:
    query = tokens(text)
    hits = search(client, q=text, highlight="true", perPage=100)["hits"]
    assert hits
    for hit in hits:
        row = BY_ID[hit["objectID"]]
        assert hit["_highlights"], hit
        for name, fragments in hit["_highlights"].items():
            stored = listed(row["author" if name == "writer" else name])
            for fragment in fragments:
                assert MARK.sub("", fragment) in [html.escape(v) for v in stored]
                marked = re.findall(r"<mark>(.*?)</mark>", fragment)
                assert marked
                for word in marked:
                    folded = tokens(html.unescape(word))
                    assert all(w in query or w.startswith(query[-1]) for w in folded)


def test_highlight_examples(client: TestClient[Any]) -> None:
    hit = search(client, q="tango cash", highlight="true", perPage=1)["hits"][0]
    assert hit["_highlights"] == {
        "title": ["<mark>Tango</mark> &amp; <mark>Cash</mark> &lt;Deluxe&gt;"]
    }
    hit = search(client, q="kate", highlight="writer", perPage=1)["hits"][0]
    assert hit["_highlights"] == {"writer": ["<mark>Kate</mark> &lt;K&gt; Smith"]}
    tags = search(client, "plain", q="gothic", highlight="tags", perPage=100)["hits"]
    assert {h["objectID"] for h in tags} == {r["id"] for r in ROWS if "gothic" in
                                              listed(r.get("tags"))}
    assert all(h["_highlights"] == {"tags": ["<mark>gothic</mark>"]} for h in tags)


def test_highlights_only_when_asked_and_only_on_chosen_fields(client: TestClient[Any]) -> None:
    assert all(h["_highlights"] == {} for h in search(client, q="castle kate")["hits"])
    hits = search(client, q="castle kate", highlight="title", perPage=100)["hits"]
    assert {k for h in hits for k in h["_highlights"]} == {"title"}
    assert all(h["_highlights"] == {} for h in search(client, highlight="true")["hits"])


# ---------------------------------------------------------------- what typesense cannot do


@pytest.mark.parametrize(("params", "feature"), [
    ({"histogram": {"year": 10}}, "histogram"),
    ({"geoGrid": {"field": "location", "precision": 3}}, "geoGrid"),
    ({"suggest": "true"}, "suggest"),
    ({"facets": "price"}, "A facet on the float field 'price'"),
])
def test_unsupported_features_are_400s_naming_them(
        client: TestClient[Any], params: dict[str, Any], feature: str) -> None:
    assert refused(client, q="castle", **params) == (
        f"{feature} is not supported by the typesense engine"
    )


def test_capabilities_say_what_typesense_can_do(client: TestClient[Any]) -> None:
    indexes = client.get("/indexes").json()["indexes"]
    assert indexes[0] == {
        "handle": "books", "engine": "typesense",
        "capabilities": {"suggest": False, "boosts": True, "histogram": False,
                         "geoGrid": False, "geoRadius": True, "nested": False,
                         "multiIndex": False,
                         "rawQuery": True, "semantic": False},
    }


# ---------------------------------------------------------------- the pure parts


@given(weights=st.lists(st.floats(min_value=1e-6, max_value=1e6), min_size=1, max_size=8))
def test_integer_weights_keep_the_order_of_the_weights(weights: list[float]) -> None:
    integers = integer_weights(weights)
    assert all(i >= 1 for i in integers)
    for (w1, i1), (w2, i2) in itertools.combinations(zip(weights, integers, strict=True), 2):
        assert (w1 < w2) == (i1 < i2) and (w1 == w2) == (i1 == i2)


@given(offset=st.integers(0, 10_000), limit=st.integers(1, 100))
def test_a_page_holds_the_requested_window(offset: int, limit: int) -> None:
    try:
        page, per_page, skip = page_window(offset, limit)
    except InvalidRequest:
        assert offset % limit and offset + limit > MAX_PER_PAGE
        return
    assert limit <= per_page <= MAX_PER_PAGE
    assert (page - 1) * per_page + skip == offset and skip + limit <= per_page
    if offset % limit == 0:
        assert (per_page, skip) == (limit, 0)
