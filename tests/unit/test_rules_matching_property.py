"""The indexed matcher agrees with a plain scan of every rule, over generated rules and
queries: the same rules apply, in the same order (Algolia's precedence: position, match
length, anchoring, context, filters, literal, temporary, objectID; a rule whose words
overlap those of a rule of higher precedence is left out)."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from searchport.domain.rules.format import decode_rule
from searchport.domain.rules.rule_sets import filter_reader
from searchport.domain.rules.ruleset import RuleQuery, RuleSet

WORDS = ["red", "shoes", "cheap"]
ANCHORINGS = ["is", "startsWith", "endsWith", "contains"]
RANK = {a: i for i, a in enumerate(ANCHORINGS)}
NOW = 100

condition = st.fixed_dictionaries(
    {"pattern": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
     "anchoring": st.sampled_from(ANCHORINGS)},
    optional={"context": st.sampled_from(["web", "app"]),
              "filters": st.sampled_from(["brand:acme", "brand:acme AND size:m"])})
window = st.sampled_from([[], [{"from": 0, "until": 200}], [{"from": 150}]])
rules_strategy = st.lists(
    st.tuples(st.lists(condition, max_size=2), window),
    max_size=8).map(lambda found: [
        {"objectID": f"r{i}", "conditions": conditions, "validity": validity,
         "consequence": {}} for i, (conditions, validity) in enumerate(found)])


def spans(words: list[str], pattern: list[str], anchoring: str) -> list[tuple[int, int]]:
    k, n = len(pattern), len(words)
    starts = [i for i in range(n - k + 1) if words[i:i + k] == pattern]
    if anchoring == "is":
        starts = [i for i in starts if i == 0 and k == n]
    elif anchoring == "startsWith":
        starts = [i for i in starts if i == 0]
    elif anchoring == "endsWith":
        starts = [i for i in starts if i + k == n]
    kept: list[tuple[int, int]] = []
    for i in starts:  # non-overlapping, leftmost first
        if not kept or kept[-1][1] <= i:
            kept.append((i, i + k))
    return kept[:1] if anchoring != "contains" else kept


def scan(rules: list[dict[str, Any]], text: str, contexts: set[str],
         selected: set[tuple[str, str]]) -> tuple[str, ...]:
    words = text.split()
    candidates = []
    for rule in rules:
        validity = rule["validity"]
        if validity and not any(w.get("from", 0) <= NOW <= w.get("until", 10**9)
                                for w in validity):
            continue
        for cond in rule["conditions"] or [None]:
            if cond is None:
                candidates.append(((len(words), 0, 3, True, True, False, not validity,
                                    rule["objectID"]), rule["objectID"], set()))
                continue
            if "context" in cond and cond["context"] not in contexts:
                continue
            pairs = {tuple(f.split(":")) for f in cond.get("filters", "").split(" AND ") if f}
            if not pairs <= selected:
                continue
            found = spans(words, cond["pattern"].split(), cond["anchoring"])
            if not found:
                continue
            length = sum(e - s for s, e in found) + len(pairs)
            key = (found[0][0], -length, RANK[cond["anchoring"]], "context" not in cond,
                   not pairs, False, not validity, rule["objectID"])
            candidates.append((key, rule["objectID"],
                               {i for s, e in found for i in range(s, e)}))
    applied: list[str] = []
    used: set[int] = set()
    for _, oid, taken in sorted(candidates):
        if oid not in applied and not taken & used:
            applied.append(oid)
            used |= taken
    return tuple(applied)


@settings(max_examples=600, deadline=None)
@example(rules=[{"objectID": "r0", "validity": [], "consequence": {},
                 "conditions": [{"pattern": "red", "anchoring": "contains"}]},
                {"objectID": "r1", "validity": [], "consequence": {},
                 "conditions": [{"pattern": "red", "anchoring": "contains", "context": "web"}]}],
         text="red", contexts={"web"}, selected=set())
@given(rules=rules_strategy,
       text=st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join),
       contexts=st.sets(st.sampled_from(["web", "app"])),
       selected=st.sets(st.sampled_from([("brand", "acme"), ("size", "m")])))
def test_the_index_finds_what_a_scan_of_every_rule_finds(
        rules: list[dict[str, Any]], text: str, contexts: set[str],
        selected: set[tuple[str, str]]) -> None:
    ruleset = RuleSet([decode_rule(r) for r in rules], real=lambda n: n,
                      read_filters=filter_reader(lambda n: n), clock=lambda: NOW)
    plan = ruleset.apply(RuleQuery(text=text, contexts=frozenset(contexts),
                                   selected=frozenset(selected)))
    assert plan.applied == scan(rules, text, contexts, selected)
