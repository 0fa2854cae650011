"""Rules in Algolia's format: decoding, refusals naming objectID and key path, matching
with Algolia's precedence, and the merged consequences."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.domain.query import NotFilter, RangeFilter, TermFilter
from searchport.domain.rules.format import decode_rule
from searchport.domain.rules.rule_sets import filter_reader
from searchport.domain.rules.ruleset import RuleQuery, RuleSet, selected_values
from searchport.domain.rules.text import keys, pattern_tokens, words

ALIASES = {"kind": "genre"}


def real(name: str) -> str:
    return ALIASES.get(name, name)


def ruleset(*rules: dict[str, Any], now: float = 1_000.0) -> RuleSet:
    return RuleSet([decode_rule(r) for r in rules], real=real,
                   read_filters=filter_reader(real), clock=lambda: now)


def rule(oid: str, pattern: str | None = None, anchoring: str = "contains",
         **consequence: Any) -> dict[str, Any]:
    conditions = [] if pattern is None else [{"pattern": pattern, "anchoring": anchoring}]
    return {"objectID": oid, "conditions": conditions, "consequence": consequence}


def applied(rules: RuleSet, text: str = "", **kw: Any) -> tuple[str, ...]:
    return rules.apply(RuleQuery(text=text, **kw)).applied


def refusal(raw: dict[str, Any]) -> str:
    with pytest.raises((ValueError, msgspec.ValidationError)) as caught:
        ruleset(raw)
    return str(caught.value)


# -- words ---------------------------------------------------------------------------------


def test_words_ignore_case_accents_and_punctuation() -> None:
    assert keys("Café, RED t-shirt!") == ("cafe", "red", "t", "shirt")
    assert pattern_tokens("{facet:color} T-Shirt")[1:] == ("t", "shirt")


# -- decoding and refusals -----------------------------------------------------------------


def test_an_algolia_rule_with_every_consequence_decodes_and_encodes_back() -> None:
    raw = {
        "objectID": "r1", "description": "all of it", "enabled": False,
        "conditions": [{"pattern": "{facet:kind} sale", "anchoring": "contains",
                        "context": "mobile",
                        "filters": "brand:acme"}],
        "consequence": {
            "params": {"query": {"remove": ["sale"],
                                 "edits": [{"type": "replace", "delete": "tee",
                                            "insert": "t-shirt"}]},
                       "filters": "price < 10", "facetFilters": [["kind:a", "kind:b"]],
                       "numericFilters": ["year>=2000"],
                       "automaticFacetFilters": [{"facet": "kind", "disjunctive": True}],
                       "renderingContent": {"facetOrdering": {
                           "facets": {"order": ["brand"]},
                           "values": {"brand": {"order": ["acme"],
                                                "sortRemainingBy": "count"}}}}},
            "promote": [{"objectID": "a", "position": 0},
                        {"objectIDs": ["b", "c"], "position": 2}],
            "filterPromotes": True, "hide": [{"objectID": "z"}],
            "userData": {"banner": "sale.png"}},
        "validity": [{"from": 0, "until": 2_000}],
    }
    rules = ruleset(raw)  # every part checked (a disabled rule too), then kept as given
    assert msgspec.json.decode(msgspec.json.encode(rules.rules[0])) == raw
    assert applied(rules, "x sale", contexts=frozenset({"mobile"})) == ()


@pytest.mark.parametrize(("raw", "expected"), [
    (rule("r9", consequence_extra=1), "consequence_extra"),
    ({"objectID": "r9", "consequence": {"params": {"hitsPerPage": 3}}},
     "unknown field `hitsPerPage` - at `$.consequence.params`"),
    ({"objectID": "r9", "consequence": {"redirect": {"indexName": "x"}}},
     "unknown field `redirect`"),
    ({"objectID": "r9", "consequence": {"params": {"automaticOptionalFacetFilters": ["a"]}}},
     "automaticOptionalFacetFilters"),
    ({"objectID": "r9", "conditions": [{"pattern": "x", "anchoring": "contains",
                                        "alternatives": True}], "consequence": {}},
     "rule 'r9': conditions[0].alternatives"),
    ({"objectID": "r9", "conditions": [{"pattern": "x"}], "consequence": {}},
     "rule 'r9': conditions[0].anchoring: required with a pattern"),
    ({"objectID": "r9", "conditions": [{"pattern": "", "anchoring": "contains"}],
      "consequence": {}}, "rule 'r9': conditions[0].pattern"),
    ({"objectID": "r9", "conditions": [{"filters": "a:x OR a:y"}], "consequence": {}},
     "rule 'r9': conditions[0].filters"),
    ({"objectID": "r9", "conditions": [{"filters": "price > 3"}], "consequence": {}},
     "rule 'r9': conditions[0].filters"),
    ({"objectID": "r9", "consequence": {"params": {"filters": "genre:"}}},
     "rule 'r9': consequence.params.filters"),
    ({"objectID": "r9", "consequence": {"params": {"automaticFacetFilters": ["brand"]}}},
     "rule 'r9': consequence.params.automaticFacetFilters[0]: no condition"),
    ({"objectID": "r9", "conditions": [{"pattern": "{facet:brand}", "anchoring": "is"}],
      "consequence": {"params": {"automaticFacetFilters": [{"facet": "brand", "score": 3}]}}},
     "automaticFacetFilters[0].score"),
    ({"objectID": "r9", "consequence": {"params": {"query": {
        "edits": [{"type": "replace", "delete": "a"}]}}}},
     "rule 'r9': consequence.params.query.edits[0].insert"),
    ({"objectID": "r9", "consequence": {"promote": [{"objectID": "a", "objectIDs": ["b"],
                                                      "position": 0}]}},
     "either objectID or objectIDs"),
    ({"objectID": "r9", "consequence": {}, "validity": [{"from": 5, "until": 1}]},
     "rule 'r9': validity[0]: from is after until"),
    ({"objectID": "r9", "conditions": [{"context": "has space"}], "consequence": {}},
     "conditions[0].context"),
])
def test_what_searchport_cannot_honour_is_refused_with_its_key_path(
        raw: dict[str, Any], expected: str) -> None:
    assert expected in refusal(raw)


def test_two_rules_with_one_objectid_are_refused() -> None:
    with pytest.raises(ValueError, match="rule 'r1': objectID"):
        ruleset(rule("r1"), rule("r1"))


# -- matching ------------------------------------------------------------------------------


def test_anchoring_decides_where_a_pattern_may_match() -> None:
    rules = ruleset(rule("is", "red shoes", "is"), rule("starts", "red", "startsWith"),
                    rule("ends", "shoes", "endsWith"), rule("contains", "big", "contains"))
    assert applied(rules, "Red Shoes") == ("is",)
    assert applied(rules, "red big shoes") == ("starts", "contains", "ends")
    assert applied(rules, "shoes red") == ()
    assert applied(rules, "reddish shoes") == ("ends",)


def test_an_empty_pattern_with_is_matches_the_empty_query_only() -> None:
    rules = ruleset(rule("empty", "", "is"))
    assert applied(rules, "") == ("empty",)
    assert applied(rules, "  ") == ("empty",)
    assert applied(rules, "x") == ()


def test_overlapping_matches_keep_the_rule_of_highest_precedence() -> None:
    # position first, then match length, anchoring, context, literal, temporary, objectID
    rules = ruleset(rule("b-long", "red shoes"), rule("a-short", "shoes"),
                    rule("c-later", "cheap"))
    assert applied(rules, "red shoes cheap") == ("b-long", "c-later")
    rules = ruleset(rule("contains", "red"), rule("starts", "red", "startsWith"))
    assert applied(rules, "red car") == ("starts",)
    rules = ruleset(rule("b", "red"), rule("a", "red"))
    assert applied(rules, "red car") == ("a",)
    temporary = {**rule("b", "red"), "validity": [{"from": 0, "until": 5_000}]}
    assert applied(ruleset(rule("a", "red"), temporary), "red") == ("b",)
    context = {"objectID": "z", "conditions": [{"pattern": "red", "anchoring": "contains",
                                                "context": "web"}], "consequence": {}}
    assert applied(ruleset(rule("a", "red"), context), "red", contexts=frozenset({"web"})) \
        == ("z",)


def test_an_earlier_match_wins_over_a_longer_one() -> None:
    rules = ruleset(rule("late-long", "shoes for kids"), rule("early", "red shoes"))
    assert applied(rules, "red shoes for kids") == ("early",)


def test_context_filters_and_validity_restrict_a_rule() -> None:
    ctx = {"objectID": "ctx", "conditions": [{"context": "mobile"}], "consequence": {}}
    flt = {"objectID": "flt", "conditions": [{"filters": "kind:comedy AND year:2000"}],
           "consequence": {}}
    old = {**rule("old"), "validity": [{"from": 0, "until": 999}]}
    soon = {**rule("soon"), "validity": [{"from": 1_001}]}
    now = {**rule("now"), "validity": [{"from": 0, "until": 10}, {"from": 900}]}
    off = {**rule("off"), "enabled": False}
    rules = ruleset(ctx, flt, old, soon, now, off)
    assert applied(rules, "x") == ("now",)
    assert set(applied(rules, "x", contexts=frozenset({"mobile", "web"}))) == {"now", "ctx"}
    selected = selected_values([TermFilter(field="genre", values=("comedy", "drama")),
                                TermFilter(field="year", values=(2000,))])
    assert set(applied(rules, "x", selected=selected)) == {"now", "flt"}
    assert applied(rules, "x", selected=frozenset({("genre", "comedy")})) == ("now",)
    assert applied(ruleset(soon, now=1_001.0), "x") == ("soon",)


def test_a_rule_with_several_conditions_applies_once() -> None:
    raw = {"objectID": "two", "consequence": {"userData": {"n": 1}}, "conditions": [
        {"pattern": "red", "anchoring": "contains"}, {"pattern": "blue", "anchoring": "contains"}]}
    found = ruleset(raw).apply(RuleQuery(text="red blue"))
    assert found.applied == ("two",)
    assert found.user_data == ({"n": 1},)


def test_no_rules_leave_the_query_alone() -> None:
    found = ruleset().apply(RuleQuery(text="Red  shoes"))
    assert found.query == "Red  shoes"
    assert found.applied == () and found.filters == ()


# -- consequences --------------------------------------------------------------------------


def test_query_edits_remove_and_replace_words_anywhere() -> None:
    edits = {"edits": [{"type": "remove", "delete": "cheap"},
                       {"type": "replace", "delete": "tee", "insert": "t-shirt"}]}
    rules = ruleset(rule("e", "cheap", params={"query": edits}))
    assert rules.apply(RuleQuery(text="Cheap red TEE, cheap")).query == "red t-shirt,"
    legacy = ruleset(rule("e", "diet", params={"query": {"remove": "diet"}}))
    assert legacy.apply(RuleQuery(text="diet coke")).query == "coke"


def test_a_replacement_query_wins_and_two_replacements_conflict() -> None:
    rules = ruleset(rule("a", "phone", params={"query": "smartphone"}),
                    rule("b", "cheap", params={"query": "budget"}),
                    rule("c", "red", params={"query": {"remove": ["red"]}}))
    found = rules.apply(RuleQuery(text="cheap red phone"))
    assert found.applied == ("b", "c")
    assert found.query == "budget"


def test_filters_of_every_applied_rule_and_facet_values_become_filters() -> None:
    rules = ruleset(
        rule("cheap", "cheap", params={"filters": "price < 10",
                                       "facetFilters": ["kind:-horror"]}),
        {"objectID": "kind", "conditions": [{"pattern": "{facet:kind}", "anchoring": "contains"}],
         "consequence": {"params": {"automaticFacetFilters": [{"facet": "kind",
                                                              "disjunctive": True}],
                                    "query": {"remove": ["{facet:kind}"]}}}})
    facets = {"kind": {("science", "fiction"): "Science Fiction", ("comedy",): "Comedy"}}
    found = rules.apply(RuleQuery(text="cheap science fiction or comedy"), facets)
    assert found.applied == ("cheap", "kind")
    assert found.filters == (
        RangeFilter(field="price", max=10, max_exclusive=True),
        NotFilter(field="genre", values=("horror",)),
        TermFilter(field="genre", values=("Science Fiction", "Comedy")))
    assert found.query == "cheap or"


def test_promotes_hides_user_data_and_facet_ordering_merge_by_precedence() -> None:
    ordering = {"facetOrdering": {"facets": {"order": ["brand"]}}}
    rules = ruleset(
        rule("a", "red", promote=[{"objectID": "p1", "position": 2},
                                  {"objectIDs": ["p2", "p3"], "position": 0}],
             hide=[{"objectID": "p3"}], userData={"a": 1}),
        rule("b", "shoes", promote=[{"objectID": "p1", "position": 0},
                                    {"objectID": "p4", "position": 0}], filterPromotes=True,
             userData={"b": 2}, params={"renderingContent": ordering}))
    found = rules.apply(RuleQuery(text="red shoes"))
    assert [(p.object_id, p.position, p.filtered) for p in found.promoted] == [
        ("p2", 0, False), ("p4", 0, True), ("p1", 2, False)]
    assert found.hidden == ("p3",)
    assert found.user_data == ({"a": 1}, {"b": 2})
    assert found.facet_ordering is not None and found.facet_ordering.facets is not None
    assert found.facet_ordering.facets.order == ("brand",)


def test_placeholder_rules_are_told_which_facets_they_need() -> None:
    rules = ruleset({"objectID": "k", "conditions": [{"pattern": "{facet:kind}",
                                                      "anchoring": "is"}], "consequence": {}})
    assert rules.facet_attributes == frozenset({"kind"})
    assert applied(rules, "comedy") == ()
    found = rules.apply(RuleQuery(text="Comedy"), {"kind": {("comedy",): "Comedy"}})
    assert found.applied == ("k",)


def test_placeholders_match_multi_word_values_at_every_anchoring() -> None:
    facets = {"brand": {("acme",): "Acme", ("big", "co"): "Big Co"}}
    rules = ruleset(
        {"objectID": "ends", "conditions": [{"pattern": "by {facet:brand}",
                                             "anchoring": "endsWith"}], "consequence": {}},
        {"objectID": "is", "conditions": [{"pattern": "{facet:brand} shoes",
                                           "anchoring": "is"}], "consequence": {}},
        {"objectID": "and", "conditions": [{"pattern": "{facet:brand}",
                                            "anchoring": "contains"}],
         "consequence": {"params": {"automaticFacetFilters": ["brand"]}}})
    # "by big co" starts before "big co": the earlier match wins, the overlapping one is out
    assert rules.apply(RuleQuery(text="hats by big co"), facets).applied == ("ends",)
    assert rules.apply(RuleQuery(text="Big Co shoes"), facets).applied == ("is",)
    found = rules.apply(RuleQuery(text="acme or big co"), facets)
    assert found.applied == ("and",)
    # not disjunctive: each value found is a filter of its own (both must hold)
    assert found.filters == (TermFilter(field="brand", values=("Acme",)),
                             TermFilter(field="brand", values=("Big Co",)))
    assert rules.apply(RuleQuery(text="hats by nobody"), facets).applied == ()


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_matching_and_editing_cut_any_text_into_the_same_words(text: str) -> None:
    assert keys(text) == tuple(w.text for w in words(text))
