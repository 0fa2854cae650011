"""Facet values of a field the config types ``date`` (Meilisearch stores such dates as Unix
seconds): ISO-8601 UTC text in search facets, facet-value search and autocomplete, ordered
by count then that text, never the numbers Meilisearch answers with.

Each answer's seconds are computed here from the ISO text the test expects
(``calendar.timegm``), not with the adapter's code.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from tests.contract.meilisearch import meili_answers as ma
from tests.contract.meilisearch.conftest import (
    FACET_SEARCH,
    MULTI,
    SEARCH,
    MeiliApp,
    MeiliDouble,
    books_yaml,
    q,
)

DATED_FIELDS = """\
    fields:
      title: {weight: 2}
      when: {field: published, type: date}
      kind: {field: genre}
"""
# ISO text -> documents; -1 and 0, 999999999 and 1000000000 tie: the order of the digits
# is not the order of the dates.
COUNTS = {
    "1950-06-01T00:00:00Z": 1,
    "1969-12-31T23:59:59Z": 2,
    "1970-01-01T00:00:00Z": 2,
    "1999-12-31T23:59:59Z": 3,
    "2001-09-09T01:46:39Z": 2,
    "2001-09-09T01:46:40Z": 2,
    "2002-07-18T12:54:00Z": 3,
}


def seconds(iso: str) -> str:
    """A facetDistribution key: the Unix seconds of ``iso``, as Meilisearch writes them."""
    return str(calendar.timegm(datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").timetuple()))


DISTRIBUTION = {seconds(iso): count for iso, count in COUNTS.items()}


def ordered(counts: dict[str, int]) -> list[dict[str, Any]]:
    return [{"value": v, "count": c}
            for v, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


@pytest.fixture
def dated(double: MeiliDouble, meili_app: Callable[..., MeiliApp]) -> MeiliApp:
    return meili_app(books_yaml(fields=DATED_FIELDS), double)


def test_search_facets_on_a_date_field_are_iso_strings(dated: MeiliApp,
                                                       double: MeiliDouble) -> None:
    double.search((200, ma.search([], total=15, facets={
        "published": DISTRIBUTION, "year": {"1925": 1, "2004": 3}})))
    response = dated.get("/books/search", params={"facets": "when,year"})
    assert response.status_code == 200, response.text
    assert response.json()["facets"] == {
        "when": ordered(COUNTS),
        "year": [{"value": "2004", "count": 3}, {"value": "1925", "count": 1}],
    }


def test_a_date_facet_counted_without_its_own_filter_is_iso_too(dated: MeiliApp,
                                                                double: MeiliDouble) -> None:
    double.multi((200, ma.multi(
        ma.search([], total=3, facets={"genre": {"fiction": 3}}),
        ma.search(total=15, hits_per_page=0, facets={"published": DISTRIBUTION}),
    )))
    response = dated.get("/books/search", params=q(facets="when,kind",
                                                   filters={"when": {"min": "2000-01-01"}}))
    assert response.status_code == 200, response.text
    assert dated.last().path == MULTI
    assert response.json()["facets"] == {"when": ordered(COUNTS),
                                         "kind": [{"value": "fiction", "count": 3}]}


def test_date_facet_values_are_iso_and_cut_by_count_then_value(dated: MeiliApp,
                                                               double: MeiliDouble) -> None:
    double.search((200, ma.search(hits_per_page=0, facets={"published": DISTRIBUTION})))
    response = dated.get("/books/facets/when", params={"maxValues": 4})
    assert response.status_code == 200, response.text
    assert response.json() == {"field": "when", "values": ordered(COUNTS)[:4]}


@pytest.mark.parametrize("text", ["2001-09", "t23:59", "Z", "1970", "999999999", "12-31"])
def test_date_facet_value_search_matches_the_iso_text_without_facet_search(
        dated: MeiliApp, double: MeiliDouble, text: str) -> None:
    double.search((200, ma.search(hits_per_page=0, facets={"published": DISTRIBUTION})))
    response = dated.get("/books/facets/when", params=q(q=text, filters={"kind": "poetry"}))
    assert response.status_code == 200, response.text
    assert response.json()["values"] == ordered(
        {v: c for v, c in COUNTS.items() if text.casefold() in v.casefold()})
    [sent] = dated.data_requests()  # Meilisearch's facet search would match the digits
    assert (sent.path, sent.body) == (SEARCH, {"filter": ['genre = "poetry"'],
                                               "facets": ["published"], "hitsPerPage": 0})
    assert FACET_SEARCH not in {s.path for s in dated.data_requests()}


def test_autocomplete_offers_date_values_containing_the_text(dated: MeiliApp,
                                                            double: MeiliDouble) -> None:
    double.search((200, ma.search([], total=0, facets={"published": DISTRIBUTION})))
    response = dated.get("/books/autocomplete", params={"q": "2001", "facets": "when"})
    assert response.status_code == 200, response.text
    assert response.json()["facets"] == {"when": ordered(
        {v: c for v, c in COUNTS.items() if "2001" in v})}


def test_values_that_are_not_whole_seconds_stay_as_they_are(dated: MeiliApp,
                                                            double: MeiliDouble) -> None:
    double.search((200, ma.search(hits_per_page=0, facets={"published": {
        "2002-07-18": 2, "1.5": 1, seconds("2002-07-18T12:54:00Z"): 1}})))
    response = dated.get("/books/facets/when")
    assert response.json()["values"] == [{"value": "2002-07-18", "count": 2},
                                          {"value": "1.5", "count": 1},
                                          {"value": "2002-07-18T12:54:00Z", "count": 1}]
