"""Properties of the filter-expression builder, checked with an independent reader of the
Meilisearch filter grammar (``filter_grammar``): any value round-trips (the expression
names exactly the given value, never more) and no field name can inject syntax."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.adapters.meilisearch.filters import (
    KEYWORDS,
    attribute,
    expression,
    safe_name,
    sort_rules,
)
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import (
    AnyOf,
    ExistsFilter,
    Filter,
    Negated,
    NotFilter,
    RangeFilter,
    SortClause,
    TermFilter,
)
from tests.contract.meilisearch.filter_grammar import Unreadable, read, same

TRICKY = ['"', "\\", '\\"', "'", "\\\\", '"]', "AND", "OR", "NOT", "TO", "IN", "EXISTS",
          "IS NULL", "[", "]", ",", "(", ")", "=", "!=", ">=", " ", "\n", "\t", "\0",
          "\\n", "\\u{41}", "\ue000", "é", "🦀", "x OR y = 1", 'a" OR genre = "b']

strings = st.one_of(
    st.text(),
    st.sampled_from(TRICKY),
    st.lists(st.sampled_from(TRICKY) | st.text(max_size=3), max_size=6).map("".join),
)
numbers = st.one_of(st.integers(), st.integers(min_value=-(10**40), max_value=10**40),
                    st.floats(allow_nan=False, allow_infinity=False))
scalars = st.one_of(strings, numbers, st.booleans())
name_chars = st.one_of(
    st.characters(categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Nd")),
    st.sampled_from("_-."),
)
safe_names = st.one_of(st.text(name_chars, min_size=1, max_size=12),
                       st.sampled_from(sorted(KEYWORDS)))
value_lists = st.lists(scalars, min_size=1, max_size=5).map(tuple)


@st.composite
def ranges(draw: st.DrawFn, field: str) -> RangeFilter:
    low = draw(st.none() | numbers)
    high = draw(numbers if low is None else st.none() | numbers)
    return RangeFilter(field=field, min=low, max=high,
                       min_exclusive=low is not None and draw(st.booleans()),
                       max_exclusive=high is not None and draw(st.booleans()))


def filters_on(field: str) -> st.SearchStrategy[Filter]:
    return st.one_of(
        value_lists.map(lambda values: TermFilter(field=field, values=values)),
        value_lists.map(lambda values: NotFilter(field=field, values=values)),
        ranges(field),
        st.booleans().map(lambda exists: ExistsFilter(field=field, exists=exists)),
    )


field_filters = safe_names.flatmap(filters_on)


def groups(inner: st.SearchStrategy[Filter]) -> st.SearchStrategy[Filter]:
    return st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda fs: AnyOf(filters=tuple(fs))),
        inner.map(lambda f: Negated(filter=f)),
    )


# filters on one field, and AnyOf/Negated groups of them (and of groups)
filters = st.one_of(field_filters, groups(st.recursive(field_filters, groups, max_leaves=4)))


@settings(max_examples=400)
@given(filters)
def test_every_filter_reads_back_as_itself(f: Filter) -> None:
    text = expression(f)
    found = read(text)
    assert same(f, found), (f, text, found)


@settings(max_examples=300)
@given(st.lists(filters, min_size=1, max_size=4))
def test_each_expression_is_one_filter_and_nothing_more(fs: list[Filter]) -> None:
    """Several filters are several expressions (a list Meilisearch ANDs): each one reads
    back whole, so no value can end its expression early or start another."""
    for f in fs:
        assert same(f, read(expression(f)))


@settings(max_examples=400)
@given(st.one_of(st.text(), st.sampled_from(["a b", "a=b", 'x"', "a)", "t:asc", ""])))
def test_a_field_name_is_used_verbatim_or_refused(name: str) -> None:
    try:
        text = attribute(name)
    except InvalidRequest:
        assert not safe_name(name)
        return
    assert safe_name(name)
    assert read(f'{text} = "v"') == TermFilter(field=name, values=("v",))


@settings(max_examples=200)
@given(st.text(min_size=1), strings)
def test_no_field_name_and_value_pair_injects(name: str, value: str) -> None:
    """Whatever the name and the value, the expression either is refused or reads back as
    the one equality it stands for."""
    f = TermFilter(field=name, values=(value,))
    try:
        text = expression(f)
    except InvalidRequest:
        return
    assert same(f, read(text))


@given(safe_names, st.sampled_from(["asc", "desc"]))
def test_sort_rules_are_the_name_and_the_order(name: str, order: Any) -> None:
    [rule] = sort_rules([SortClause(field=name, order=order)])
    field, _, direction = rule.rpartition(":")
    assert (field, direction) == (name, order) and ":" not in field


@pytest.mark.parametrize("text", [
    'genre = "a" AND genre = "b"', 'genre = "a', "genre = AND", 'genre = "a" x',
    "genre IN [a, b", 'genre = "a\\"',
])
def test_the_reader_refuses_what_searchport_never_writes(text: str) -> None:
    with pytest.raises(Unreadable):
        read(text)


@pytest.mark.parametrize(("f", "text"), [
    (AnyOf(filters=(TermFilter(field="genre", values=("a",)),
                    RangeFilter(field="price", min=10, min_exclusive=True))),
     '(genre = "a") OR (price > 10)'),
    (Negated(filter=RangeFilter(field="price", min=10, max=20)),
     "NOT (price >= 10 AND price <= 20)"),
    (AnyOf(filters=(NotFilter(field="genre", values=("a",)),
                    Negated(filter=AnyOf(filters=(ExistsFilter(field="price", exists=False),
                                                  TermFilter(field="tags", values=(1, 2))))))),
     '(genre NOT IN ["a"]) OR (NOT ((price NOT EXISTS OR price IS NULL) OR (tags IN [1, 2])))'),
])
def test_groups_are_parenthesised_or_and_not(f: Filter, text: str) -> None:
    """``AnyOf``: each member in parentheses, joined by ``OR``; ``Negated``: ``NOT (...)``."""
    assert expression(f) == text
    assert same(f, read(text))


def test_a_group_with_a_member_on_a_date_field_follows_its_dates() -> None:
    f = AnyOf(filters=(Negated(filter=TermFilter(field="published", values=("2020-05-10",))),
                       TermFilter(field="genre", values=("a",))))
    assert expression(f, frozenset({"published"})) == (
        "(NOT ((published >= 1589068800 AND published < 1589155200))) OR (genre = \"a\")")
