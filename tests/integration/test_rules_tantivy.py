"""Rules evaluated by searchport over a real tantivy index: promotes and hides paged
through with nothing lost or repeated, filterPromotes, query edits and filters, and
``{facet:...}`` placeholders taking the engine's facet values. Expectations come from the
rows in plain Python."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.query import SearchQuery, SortClause, TermFilter
from searchport.domain.rules.format import decode_rule
from searchport.domain.rules.rule_sets import filter_reader
from searchport.domain.rules.ruleset import RuleQuery, RuleSet, selected_values
from searchport.domain.rules.search import FacetValueCache, search_with_rules
from tests.integration.conftest import BOOK_FIELDS, books_config, load_rows

pytestmark = pytest.mark.anyio
BY_ID = (SortClause(field="id", order="asc"),)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> TantivyEngine:
    base = tmp_path_factory.mktemp("rules")
    config = books_config(base / "index", **BOOK_FIELDS, id={"type": "keyword"})
    built = TantivyEngine("books", config, base)
    asyncio.run(built.start())
    return built


def ruleset(*rules: dict[str, Any]) -> RuleSet:
    return RuleSet([decode_rule(r) for r in rules], real=lambda n: n,
                   read_filters=filter_reader(lambda n: n))


def expected_pages(organic: list[str], promoted: list[tuple[str, int]]) -> list[str]:
    """Organic ids in order, promoted (id, position) in placing order: walk positions."""
    queue, rest, found = list(promoted), list(organic), []
    while queue or rest:
        if queue and (queue[0][1] <= len(found) or not rest):
            found.append(queue.pop(0)[0])
        else:
            found.append(rest.pop(0))
    return found


async def page_through(engine: TantivyEngine, rules: RuleSet, query: SearchQuery,
                       text: str, per_page: int) -> tuple[list[str], set[int]]:
    plan = rules.apply(RuleQuery(text=text, selected=selected_values(query.filters)))
    shown: list[str] = []
    totals: set[int] = set()
    page = 0
    while True:
        asked = msgspec.structs.replace(query, offset=page * per_page, limit=per_page)
        found = await search_with_rules(engine.search, asked, plan, page=page, per_page=per_page)
        totals.add(found.result.total)
        if not found.result.hits:
            return shown, totals
        assert found.promoted <= {h.id for h in found.result.hits}
        shown += [h.id for h in found.result.hits]
        page += 1


PROMOTE_HIDE = (
    {"objectID": "pin", "consequence": {
        "promote": [{"objectID": "b40", "position": 0},
                    {"objectIDs": ["b30", "b05"], "position": 3},
                    {"objectID": "b45", "position": 60}],  # past the end: after the last
        "hide": [{"objectID": "b02"}, {"objectID": "b07"}]}},
    {"objectID": "tie", "consequence": {
        "promote": [{"objectID": "b12", "position": 0}, {"objectID": "nope", "position": 1}],
        "hide": [{"objectID": "b05"}]}},  # b05 was promoted by "pin": hidden wins
)


@pytest.mark.parametrize("per_page", [1, 2, 3, 5, 7, 48])
async def test_paging_with_promotes_and_hides_never_repeats_nor_loses_a_hit(
        engine: TantivyEngine, per_page: int) -> None:
    rows = load_rows()
    ids = sorted(str(r["id"]) for r in rows)
    rules = ruleset(*PROMOTE_HIDE)
    shown, totals = await page_through(engine, rules, SearchQuery(sort=BY_ID), "", per_page)
    excluded = {"b02", "b07", "b05", "b40", "b30", "b45", "b12"}
    organic = [i for i in ids if i not in excluded]
    # placing order: by position, rules in precedence (objectID order: "pin" < "tie")
    expected = expected_pages(organic, [("b40", 0), ("b12", 0), ("b30", 3), ("b45", 60)])
    assert shown == expected
    assert totals == {len(expected)}
    assert len(set(shown)) == len(shown)


async def test_filter_promotes_shows_only_promoted_records_matching_the_filters(
        engine: TantivyEngine) -> None:
    rows = load_rows()
    fiction = sorted(str(r["id"]) for r in rows if r.get("genre") == "fiction")
    other = next(str(r["id"]) for r in rows if r.get("genre") not in ("fiction", None))
    query = SearchQuery(sort=BY_ID, filters=(TermFilter(field="genre", values=("fiction",)),))
    strict = ruleset({"objectID": "strict", "consequence": {"filterPromotes": True, "promote": [
        {"objectID": other, "position": 0}, {"objectID": fiction[-1], "position": 1}]}})
    shown, _ = await page_through(engine, strict, query, "", 4)
    assert shown == expected_pages(fiction[:-1], [(fiction[-1], 1)])
    # without filterPromotes the record is shown whatever the filters
    loose = ruleset({"objectID": "loose", "consequence": {"promote": [
        {"objectID": other, "position": 0}]}})
    shown, _ = await page_through(engine, loose, query, "", 4)
    assert shown == [other, *fiction]


async def test_query_edits_filters_and_facet_placeholders_on_the_engine(
        engine: TantivyEngine) -> None:
    rows = load_rows()

    def expected(genre: str) -> set[str]:
        return {str(r["id"]) for r in rows if r.get("genre") == genre
                and (r.get("year") or 0) >= 1950 and "castle" in str(r["title"]).lower()}

    genre = max(sorted({r["genre"] for r in rows if isinstance(r.get("genre"), str)}),
                key=lambda g: len(expected(g)))
    assert expected(genre)
    rules = ruleset(
        {"objectID": "genre", "conditions": [{"pattern": "{facet:genre}",
                                              "anchoring": "contains"}],
         "consequence": {"params": {"automaticFacetFilters": ["genre"],
                                    "query": {"remove": ["{facet:genre}"]},
                                    "numericFilters": ["year >= 1950"]},
                         "userData": {"banner": genre}}})
    facets = await FacetValueCache(rules.facet_attributes, lambda n: n, ttl=60,
                                   clock=lambda: 0.0).values(engine)
    assert facets["genre"][(genre.lower(),)] == genre
    plan = rules.apply(RuleQuery(text=f"{genre.upper()} castle"), facets)
    assert plan.query == "castle"
    assert plan.user_data == ({"banner": genre},)
    found = await search_with_rules(engine.search, SearchQuery(text=f"{genre} castle", limit=50),
                                    plan, page=0, per_page=50)
    assert {h.id for h in found.result.hits} == expected(genre)
    assert found.result.total == len(expected(genre))
