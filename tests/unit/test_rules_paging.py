"""Paging through a search with promoted and hidden records never repeats nor loses a hit.

The rules are generated (promotes of single records and groups, hides, filterPromotes),
applied through ``RuleSet``, and the pages built by ``organic_window`` and ``place`` from
a simulated engine (a list sliced at the window). The expected list is computed here
independently, by walking positions one by one.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.domain.rules.effects import Promotion
from searchport.domain.rules.format import decode_rule
from searchport.domain.rules.paging import organic_window, place
from searchport.domain.rules.rule_sets import filter_reader
from searchport.domain.rules.ruleset import RuleQuery, RuleSet

IDS = [f"r{i}" for i in range(40)]

promote = st.one_of(
    st.fixed_dictionaries({"objectID": st.sampled_from(IDS),
                           "position": st.integers(0, 30)}),
    st.fixed_dictionaries({"objectIDs": st.lists(st.sampled_from(IDS), min_size=1,
                                                 max_size=4, unique=True),
                           "position": st.integers(0, 30)}))
consequence = st.fixed_dictionaries({
    "promote": st.lists(promote, max_size=4),
    "hide": st.lists(st.builds(lambda o: {"objectID": o}, st.sampled_from(IDS)), max_size=3),
    "filterPromotes": st.booleans(),
})
rules_strategy = st.lists(consequence, max_size=4).map(
    lambda cs: [{"objectID": f"rule{i:02d}", "consequence": c} for i, c in enumerate(cs)])


def expected_list(rules: list[dict[str, Any]], ranking: list[str],
                  exists: set[str], matches: set[str]) -> list[str]:
    """Conditionless rules apply in objectID order (Algolia's last precedence criterion)."""
    ordered = sorted(rules, key=lambda r: r["objectID"])
    hidden = {h["objectID"] for r in ordered for h in r["consequence"]["hide"]}
    asked: dict[str, tuple[int, bool]] = {}
    for r in ordered:
        c = r["consequence"]
        for p in c["promote"]:
            ids = [p["objectID"]] if "objectID" in p else p["objectIDs"]
            for i, oid in enumerate(ids):
                asked.setdefault(oid, (p["position"] + i, c["filterPromotes"]))
    promoted = [(pos, oid) for oid, (pos, filtered) in asked.items() if oid not in hidden
                and oid in exists and (not filtered or oid in matches)]
    queue = [oid for _, oid in sorted(promoted, key=lambda x: x[0])]  # stable
    targets = dict((oid, pos) for pos, oid in promoted)
    organic = [x for x in ranking if x not in hidden and x not in asked]
    result: list[str] = []
    while queue or organic:
        if queue and (targets[queue[0]] <= len(result) or not organic):
            result.append(queue.pop(0))
        else:
            result.append(organic.pop(0))
    return result


@settings(max_examples=300, deadline=None)
@given(rules=rules_strategy,
       ranking=st.lists(st.sampled_from(IDS), unique=True, max_size=30),
       exists=st.sets(st.sampled_from(IDS)), matches=st.sets(st.sampled_from(IDS)),
       per_page=st.integers(1, 7))
def test_pages_hold_every_hit_once_with_promotes_at_their_positions(
        rules: list[dict[str, Any]], ranking: list[str], exists: set[str], matches: set[str],
        per_page: int) -> None:
    ruleset = RuleSet([decode_rule(r) for r in rules], real=lambda n: n,
                      read_filters=filter_reader(lambda n: n))
    plan = ruleset.apply(RuleQuery(text="anything"))
    excluded = set(plan.hidden) | {p.object_id for p in plan.promoted}
    organic = [x for x in ranking if x not in excluded]  # what the engine searches
    # the records found when searched by objectID (with the filters for filterPromotes)
    present = [p for p in plan.promoted
               if p.object_id in exists and (not p.filtered or p.object_id in matches)]
    expected = expected_list(rules, ranking, exists, matches)
    total = len(organic) + len(present)
    assert total == len(expected)
    pages: list[str] = []
    for page in range(total // per_page + 2):  # and pages past the end
        window = organic_window(page, per_page, len(plan.promoted))
        fetched = organic[window.offset:window.offset + window.limit]
        shown = place(page, per_page, present, fetched, window, len(organic))
        assert len(shown) == max(0, min(per_page, total - page * per_page))
        pages += [x.object_id if isinstance(x, Promotion) else x for x in shown]
    assert pages == expected
