"""Query rules and replicas on every engine: promotes and hides paged through, filters
added, the query edited or replaced, userData and a facet ordering sent, a standard and a
virtual replica ordering the same records. The expected hits, counts and pages come from
the rows in plain Python (``merchandising``), whatever engine is behind the handle.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from tests.conformance.conftest import HANDLE
from tests.conformance.dataset import ROWS, containing_all_with_prefix, values
from tests.conformance.merchandising import (
    BY_RANK,
    GENERATED,
    HIDDEN,
    STANDARD,
    VIRTUAL,
    expected_pages,
    pinned_by_rank,
    placed,
)


def query(api: TestClient[Any], handle: str, **params: Any) -> dict[str, Any]:
    response = api.post(f"/1/indexes/{handle}/query", json={"params": params})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def every_page(api: TestClient[Any], handle: str, per_page: int, **params: Any
               ) -> tuple[list[str], list[dict[str, Any]]]:
    """The ids of every page in order, and the answers."""
    ids: list[str] = []
    answers = []
    page = 0
    while True:
        body = query(api, handle, hitsPerPage=per_page, page=page, **params)
        answers.append(body)
        if not body["hits"]:
            return ids, answers
        assert len(body["hits"]) <= per_page
        ids += [h["objectID"] for h in body["hits"]]
        page += 1


def test_promotes_and_hides_page_through_every_record_once(api: TestClient[Any]) -> None:
    want = pinned_by_rank()
    ids, answers = every_page(api, STANDARD, 7, ruleContexts=["pinned"])
    assert ids == want
    assert len(answers) - 1 == math.ceil(len(want) / 7)
    for body in answers:
        assert body["nbHits"] == len(want) == len(ROWS) - len(HIDDEN)
        assert body["nbPages"] == math.ceil(len(want) / 7)
        assert body["appliedRules"] == [{"objectID": "pins"}]


def test_the_json_api_pages_the_same_way(api: TestClient[Any]) -> None:
    want = pinned_by_rank()
    ids: list[str] = []
    for page in range(1, math.ceil(len(want) / 6) + 1):
        response = api.get(f"/{STANDARD}/search", params={
            "ruleContexts": "pinned", "perPage": 6, "page": page})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["totalHits"] == len(want)
        ids += [h["objectID"] for h in body["hits"]]
    assert ids == want


def test_hidden_records_leave_the_facet_counts_promoted_ones_stay(
        api: TestClient[Any]) -> None:
    body = query(api, HANDLE, ruleContexts=["pinned"], facets=["genre", "tags"],
                 hitsPerPage=100)
    kept = [r for r in ROWS if r["id"] not in HIDDEN]
    assert {h["objectID"] for h in body["hits"]} == {r["id"] for r in kept}
    for field in ("genre", "tags"):
        counts = Counter(v for r in kept for v in set(values(r, field)))
        assert body["facets"][field] == dict(counts), field


def test_get_ranking_info_marks_the_promoted_hits(api: TestClient[Any]) -> None:
    body = query(api, STANDARD, ruleContexts=["pinned"], hitsPerPage=12,
                 getRankingInfo=True)
    marked = [h["objectID"] for h in body["hits"] if h.get("_rankingInfo", {}).get("promoted")]
    assert marked == ["c41", "c33"]


def test_filter_promotes_shows_only_the_promoted_records_that_match(
        api: TestClient[Any]) -> None:
    poetry = [r["id"] for r in BY_RANK if r["genre"] == "poetry"]
    assert "c03" in poetry and "c04" not in poetry  # c04 is fiction: not shown
    want = placed([i for i in poetry if i != "c03"], [("c03", 0)])
    ids, answers = every_page(api, STANDARD, 5, ruleContexts=["filtered-pin"],
                              filters="genre:poetry")
    assert ids == want
    assert answers[0]["nbHits"] == len(want)


def test_a_rule_edits_the_query_and_adds_a_filter(api: TestClient[Any]) -> None:
    castle = containing_all_with_prefix("castle")
    want = [r["id"] for r in BY_RANK if r["id"] in castle and r.get("price", 99) < 20]
    assert want and len(want) < len(castle)
    ids, answers = every_page(api, STANDARD, 4, query="bargain castle")
    assert ids == want
    assert answers[0]["nbHits"] == len(want)
    assert answers[0]["appliedRules"] == [{"objectID": "bargain"}]


def test_a_rule_replaces_the_query(api: TestClient[Any]) -> None:
    castle = containing_all_with_prefix("castle")
    ids, answers = every_page(api, STANDARD, 50, query="fortress")
    assert ids == [r["id"] for r in BY_RANK if r["id"] in castle]
    assert answers[0]["appliedRules"] == [{"objectID": "fortress"}]


def test_user_data_and_facet_ordering_come_from_the_rule(api: TestClient[Any]) -> None:
    body = query(api, HANDLE, ruleContexts=["banner"], facets=["genre", "tags"])
    assert body["userData"] == [{"banner": "spring.png"}]
    assert body["renderingContent"]["facetOrdering"]["facets"]["order"] == ["tags", "genre"]
    assert body["nbHits"] == len(ROWS)
    plain = query(api, HANDLE, facets=["genre", "tags"])
    assert "userData" not in plain and "appliedRules" not in plain


def test_a_standard_replica_sorts_every_match(api: TestClient[Any]) -> None:
    ids, answers = every_page(api, STANDARD, 9)
    assert ids == [r["id"] for r in BY_RANK]
    assert answers[0]["nbHits"] == len(ROWS)
    assert "nbSortedHits" not in answers[0]
    fiction, _ = every_page(api, STANDARD, 9, facetFilters=["genre:fiction"])
    assert fiction == [r["id"] for r in BY_RANK if r["genre"] == "fiction"]


def by_rank_desc(ids: set[str]) -> list[str]:
    return [r["id"] for r in sorted(ROWS, key=lambda r: -r["rank"]) if r["id"] in ids]


def test_a_virtual_replica_keeps_the_most_relevant_hits_in_its_ranking(
        api: TestClient[Any]) -> None:
    # every record with "castle" matches it alike: strictness 100 keeps them all
    castle = containing_all_with_prefix("castle")
    ids, answers = every_page(api, VIRTUAL, 4, query="castle")
    assert ids == by_rank_desc(castle)
    for body in answers:
        assert body["nbHits"] == body["nbSortedHits"] == len(castle)
        assert body["appliedRelevancyStrictness"] == 100
        assert body["nbPages"] == math.ceil(len(castle) / 4)


def test_relevancy_strictness_0_keeps_every_match(api: TestClient[Any]) -> None:
    either = containing_all_with_prefix("castle") | containing_all_with_prefix("night")
    # both words optional: a record with either matches (every word must, by default)
    ids, answers = every_page(api, VIRTUAL, 8, query="castle night", relevancyStrictness=0,
                              optionalWords=["castle", "night"])
    assert ids == by_rank_desc(either)
    assert answers[0]["nbSortedHits"] == answers[0]["nbHits"] == len(either)
    assert answers[0]["appliedRelevancyStrictness"] == 0


def test_relevancy_strictness_100_keeps_only_the_best_matches(api: TestClient[Any]) -> None:
    both = containing_all_with_prefix("castle night")
    either = containing_all_with_prefix("castle") | containing_all_with_prefix("night")
    ids, answers = every_page(api, VIRTUAL, 8, query="castle night",
                              optionalWords=["castle", "night"])
    assert ids and set(ids) <= both  # the best match has both words: so has every kept one
    assert ids == by_rank_desc(set(ids))
    assert answers[0]["nbSortedHits"] == len(ids)
    assert answers[0]["nbHits"] == len(either)


def test_a_virtual_replica_without_text_keeps_every_record(api: TestClient[Any]) -> None:
    ids, answers = every_page(api, VIRTUAL, 25)
    assert ids == by_rank_desc({r["id"] for r in ROWS})
    assert answers[0]["nbSortedHits"] == len(ROWS)


def test_rules_apply_on_a_virtual_replica(api: TestClient[Any]) -> None:
    hidden = set(HIDDEN)
    organic = [i for i in by_rank_desc({r["id"] for r in ROWS})
               if i not in hidden and i not in ("c41", "c33")]
    ids, answers = every_page(api, VIRTUAL, 7, ruleContexts=["pinned"])
    assert ids == placed(organic, [("c41", 2), ("c33", 9)])
    assert answers[0]["nbSortedHits"] == answers[0]["nbHits"] == len(ROWS) - len(HIDDEN)


def test_settings_list_the_replicas_and_the_primary(api: TestClient[Any]) -> None:
    primary = api.get(f"/1/indexes/{HANDLE}/settings").json()
    assert primary["replicas"] == [STANDARD, f"virtual({VIRTUAL})"]
    assert "primary" not in primary
    for handle in (STANDARD, VIRTUAL):
        replica = api.get(f"/1/indexes/{handle}/settings").json()
        assert replica["primary"] == HANDLE and "replicas" not in replica


GENRES = sorted({r["genre"] for r in ROWS})


@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(chosen=st.sets(st.sampled_from(range(len(GENERATED))), min_size=1, max_size=4),
       per_page=st.integers(3, 9), genre=st.sampled_from([None, *GENRES]),
       virtual=st.booleans())
def test_paging_with_promotes_and_hides_never_repeats_nor_loses_a_hit(
        api: TestClient[Any], chosen: set[int], per_page: int, genre: str | None,
        virtual: bool) -> None:
    """Any combination of the generated rules, on either replica's order, with or without
    a filter: every page together is the whole list computed from the rows, each hit
    once, the counts the same on every page."""
    rules = [GENERATED[i] for i in sorted(chosen)]
    rows = [r for r in ROWS if genre is None or r["genre"] == genre]
    if virtual:  # no text: every record is kept, in the virtual replica's ranking
        ranking = by_rank_desc({r["id"] for r in rows})
    else:
        ranking = [r["id"] for r in BY_RANK if r in rows]
    want = expected_pages(rules, ranking, {r["id"] for r in rows})
    params: dict[str, Any] = {"ruleContexts": [r["objectID"] for r in rules]}
    if genre is not None:
        params["facetFilters"] = [f"genre:{genre}"]
    ids, answers = every_page(api, VIRTUAL if virtual else STANDARD, per_page, **params)
    assert ids == want
    assert len(ids) == len(set(ids))
    for body in answers:
        assert body["nbHits"] == len(want)
        assert body["nbPages"] == math.ceil(len(want) / per_page)


def test_the_json_api_on_a_virtual_replica_pages_the_relevant_hits(
        api: TestClient[Any]) -> None:
    castle = containing_all_with_prefix("castle")
    ids: list[str] = []
    pages = math.ceil(len(castle) / 3)
    for page in range(1, pages + 1):
        response = api.get(f"/{VIRTUAL}/search", params={"q": "castle", "perPage": 3,
                                                          "page": page})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["sortedHits"] == body["totalHits"] == len(castle)
        assert body["totalPages"] == pages
        ids += [h["objectID"] for h in body["hits"]]
    assert ids == by_rank_desc(castle)
    fields = api.get(f"/{HANDLE}/fields").json()
    assert fields["replicas"] == [{"handle": STANDARD, "virtual": False},
                                  {"handle": VIRTUAL, "virtual": True}]
    assert api.get(f"/{VIRTUAL}/fields").json()["replicaOf"] == HANDLE


def test_promoted_records_count_in_facets_stats_and_histograms(api: TestClient[Any]) -> None:
    """Every record but the hidden ones matches: the promoted ones (left out of the
    engine's search and counted by a search of their own) are in the figures."""
    kept = [r for r in ROWS if r["id"] not in HIDDEN]
    promoted = {"c41", "c33"}
    assert promoted <= {r["id"] for r in kept}
    body = query(api, HANDLE, ruleContexts=["pinned"], facets=["year", "rating"],
                 hitsPerPage=5)
    for field in ("year", "rating"):
        numbers = [v for r in kept for v in values(r, field)]
        assert body["facets_stats"][field] == pytest.approx({
            "min": min(numbers), "max": max(numbers), "sum": sum(numbers),
            "avg": sum(numbers) / len(numbers)}), field
    # a filter the promoted c41 (poetry) does not match: shown, not counted
    history = query(api, HANDLE, ruleContexts=["pinned"], facets=["year"],
                    filters="genre:history", hitsPerPage=20)
    matching = [r for r in kept if r["genre"] == "history"]
    assert "c41" in {h["objectID"] for h in history["hits"]}
    years = [v for r in matching for v in values(r, "year")]
    assert history["facets_stats"]["year"] == pytest.approx({
        "min": min(years), "max": max(years), "sum": sum(years), "avg": sum(years) / len(years)})

    response = api.get(f"/{HANDLE}/search", params={
        "ruleContexts": "pinned", "perPage": 1, "histogram": json.dumps({"year": 10})})
    if not api.get("/indexes").json()["indexes"][0]["capabilities"]["histogram"]:
        assert response.status_code == 400
        return
    assert response.status_code == 200, response.text
    keys = Counter(math.floor(v / 10) * 10 for r in kept for v in values(r, "year"))
    first, last = min(keys), max(keys)
    assert [(b["key"], b["count"]) for b in response.json()["histograms"]["year"]] == [
        (key, keys.get(key, 0)) for key in range(first, last + 10, 10)]
