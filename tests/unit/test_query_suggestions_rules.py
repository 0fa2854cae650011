"""The rules that pick suggestions among popular queries, against brute-force versions;
and a ``querySuggestions`` handle's config errors, each naming its key path."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchport.adapters.config_loader import parse_config
from searchport.domain.analytics.reports import PopularQuery
from searchport.domain.config import ConfigError
from searchport.domain.results import FacetValue
from searchport.domain.suggestions.records import top_values, without_typing_prefixes
from searchport.domain.suggestions.selection import eligible, exclusion, letters

queries = st.lists(st.tuples(st.text(alphabet="ab ", min_size=1, max_size=5),
                             st.integers(min_value=1, max_value=6)),
                   max_size=25, unique_by=lambda t: t[0])


@given(queries)
def test_typing_prefixes_are_those_with_an_extension_searched_as_often(
        pairs: list[tuple[str, int]]) -> None:
    popular = [PopularQuery(q, n, 1) for q, n in pairs]
    kept = without_typing_prefixes(popular)
    brute = [p for p in popular
             if not any(o.query != p.query and o.query.startswith(p.query) and o.count >= p.count
                        for o in popular)]
    assert kept == brute


def test_typing_prefixes_keep_a_query_searched_more_than_its_extensions() -> None:
    popular = [PopularQuery("paris", 9, 1), PopularQuery("pari", 9, 1),
               PopularQuery("par", 12, 1), PopularQuery("paris france", 3, 1)]
    assert [p.query for p in without_typing_prefixes(popular)] == ["paris", "par",
                                                                  "paris france"]


@pytest.mark.parametrize(("patterns", "query", "out"), [
    (["kill"], "kill bill", True),
    (["kill"], "skill", False),
    (["kill"], "killing", False),
    (["new york"], "hotels new   york", True),
    (["new york"], "new yorker", False),
    (["p[o0]rn"], "p0rnography", True),
    (["^ciu"], "ciudad", True),
    (["^ciu"], "la ciudad", False),
    (["KILL"], "kill", True),
])
def test_exclude_words_and_expressions(patterns: list[str], query: str, out: bool) -> None:
    assert (not eligible(query, min_letters=0, excluded=exclusion(patterns))) is out


def test_min_letters_counts_letters_and_digits_only() -> None:
    assert letters("a b-c 1") == 4
    assert eligible("ab cd", min_letters=4, excluded=None)
    assert not eligible("ab c", min_letters=4, excluded=None)


def test_top_values_most_frequent_then_by_value() -> None:
    values = [FacetValue(value=v, count=c) for v, c in
              (("b", 2), ("a", 2), ("c", 5), ("d", 1))]
    assert [v.value for v in top_values(values, 3)] == ["c", "a", "b"]


BASE = """
indexes:
  cities:
    engine: tantivy
    path: p
    fields: { name: { type: text }, country: { type: keyword } }
  qs:
    engine: querySuggestions
"""


@pytest.mark.parametrize(("extra", "top", "message"), [
    ("", "", "indexes.qs.source: required"),
    ("    source: nope\n", "", "indexes.qs.source: 'nope' is not a configured handle"),
    ("    source: qs\n", "", "indexes.qs.source: 'qs' is itself a querySuggestions"),
    ("    source: cities\n", "analytics: { backend: none }\n",
     "indexes.qs.engine: querySuggestions is built from the query log"),
    ("    source: cities\n    minHits: -1\n", "", "indexes.qs.minHits: Expected `int` >= 0"),
    ("    source: cities\n    refresh: 0\n", "", "indexes.qs.refresh: Expected `float` >= 1"),
    ("    source: cities\n    exclude: ['(']\n", "", "indexes.qs.exclude[0]: not a regular"),
    ("    source: cities\n    exclude: [' ']\n", "", "indexes.qs.exclude[0]: an empty pattern"),
    ("    source: cities\n    facets: [{attribute: region}]\n", "",
     "indexes.qs.facets[0].attribute: 'region' is not a field of cities"),
    ("    source: cities\n    facets: [{attribute: country}, {attribute: country}]\n", "",
     "indexes.qs.facets[1].attribute: 'country' is named twice"),
    ("    source: cities\n    facets: [{amount: 2}]\n", "",
     "indexes.qs.facets[0]: Object missing required field `attribute`"),
    ("    source: cities\n    host: http://h\n", "",
     "indexes.qs.host: not a setting of engine querySuggestions"),
    ("    source: cities\n    fields: { a: {} }\n", "",
     "indexes.qs.fields: not a setting of engine querySuggestions"),
])
def test_config_errors_name_the_key(extra: str, top: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(top + BASE + extra, {})
    assert str(caught.value).startswith(message), str(caught.value)


def test_suggestion_options_are_refused_on_other_engines() -> None:
    with pytest.raises(ConfigError, match=re.escape("indexes.cities.minHits: only for engine "
                                                    "querySuggestions")):
        parse_config(BASE.replace("    path: p\n", "    path: p\n    minHits: 3\n"), {})


def test_defaults_are_algolias_and_searchports() -> None:
    config = parse_config(BASE + "    source: cities\n", {})
    qs = config.indexes["qs"]
    assert (qs.min_hits, qs.min_letters, qs.min_count, qs.period, qs.refresh) == (
        5, 4, 5, 30, 3600.0)
    assert qs.path == ".searchport/suggestions/qs"
    assert set(qs.fields) == {"query", "popularity", "nb_words"}
    assert [(k.field, k.order) for k in qs.custom_ranking] == [("popularity", "desc")]
