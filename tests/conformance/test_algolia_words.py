"""Algolia's word rules on every engine, over the conformance rows: every query word must
match (the last one as a prefix), but the optional ones (``optionalWords``, stop words with
``removeStopWords``); ``removeWordsIfNoResults`` makes words optional while nothing is found.

The expected rows are computed here from the titles and authors of the rows.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.conformance.conftest import HANDLE
from tests.conformance.dataset import ROWS, containing_all, containing_all_with_prefix


def found(api: TestClient[Any], **params: Any) -> set[str]:
    response = api.post(f"/1/indexes/{HANDLE}/query",
                        json={"params": {"hitsPerPage": 100, **params}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["nbHits"] == len(body["hits"])
    return {hit["objectID"] for hit in body["hits"]}


def either(first: str, second: str) -> set[str]:
    return containing_all(first) | containing_all(second)


@pytest.mark.parametrize("query", ["castle night", "winter stone", "river garden",
                                   "Jules Verne", "winter sto"])
def test_every_word_must_match(api: TestClient[Any], query: str) -> None:
    expected = containing_all_with_prefix(query)
    assert found(api, query=query) == expected


def test_the_fixture_has_rows_with_one_word_but_not_both() -> None:
    assert containing_all("castle night") < either("castle", "night")
    assert containing_all("castle night")


def test_an_optional_word_need_not_match(api: TestClient[Any]) -> None:
    assert found(api, query="castle zebra") == set()
    assert found(api, query="castle zebra", optionalWords=["zebra"]) == containing_all("castle")
    assert found(api, query="castle zebra", optionalWords="zebra") == containing_all("castle")


def test_stop_words_are_optional_with_remove_stop_words(api: TestClient[Any]) -> None:
    assert found(api, query="the castle") == set()
    castle = containing_all("castle")
    assert castle
    assert found(api, query="the castle", removeStopWords=True) == castle
    assert found(api, query="the castle", removeStopWords=["en"]) == castle
    assert found(api, query="the castle", removeStopWords=True, queryLanguages=["en"]) == castle
    # "the" is no French stop word
    assert found(api, query="the castle", removeStopWords=["fr"]) == set()


@pytest.mark.parametrize("value", [True, False, ["en", "fr"], "true"])
def test_ignore_plurals_and_query_languages_are_accepted(api: TestClient[Any],
                                                         value: Any) -> None:
    assert found(api, query="castle night", ignorePlurals=value,
                 queryLanguages=["en"]) == containing_all("castle night")


@pytest.mark.parametrize(("query", "mode", "expected"), [
    ("castle zebra", "lastWords", containing_all("castle")),
    ("castle night zebra", "lastWords", containing_all("castle night")),
    ("zebra castle", "firstWords", containing_all_with_prefix("castle")),
    ("zebra castle", "allOptional", containing_all_with_prefix("castle")),
    ("zebra castle", "none", set()),
    ("castle night", "lastWords", containing_all("castle night")),  # found: nothing removed
])
def test_remove_words_if_no_results(api: TestClient[Any], query: str, mode: str,
                                    expected: set[str]) -> None:
    assert found(api, query=query, removeWordsIfNoResults=mode) == expected


def test_an_unknown_remove_words_mode_is_a_400(api: TestClient[Any]) -> None:
    response = api.post(f"/1/indexes/{HANDLE}/query", json={"params": {
        "query": "castle", "removeWordsIfNoResults": "someWords"}})
    assert response.status_code == 400
    assert "removeWordsIfNoResults" in response.json()["message"]


def test_rows_hold_the_words_the_cases_need() -> None:
    assert all(containing_all(w) for w in ("castle", "night", "winter", "river"))
    assert not any("zebra" in str(r["title"]).lower() for r in ROWS)
