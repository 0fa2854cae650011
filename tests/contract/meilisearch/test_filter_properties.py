"""Properties of the filter-expression builder, checked with an independent reader of the
Meilisearch filter grammar (``filter_grammar``): any value round-trips (the expression
names exactly the given value, never more) and no field name can inject syntax."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
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
from searchport.domain.errors import InvalidRequest, UnsupportedFeature
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
from tests.contract.meilisearch.filter_grammar import Unreadable, read, same, selects
from tests.specs.meilisearch import request_problems

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


def beyond_the_doubles(f: Filter) -> bool:
    """A range with both bounds and a strict one at the largest double, outward: no double
    lies beyond it, so ``TO`` cannot say it (refused naming the engine)."""
    match f:
        case RangeFilter(min=low, max=high) if low is not None and high is not None:
            return (f.min_exclusive and low == sys.float_info.max) or (
                f.max_exclusive and high == -sys.float_info.max)
        case AnyOf(filters=members):
            return any(beyond_the_doubles(m) for m in members)
        case Negated(filter=inner):
            return beyond_the_doubles(inner)
    return False


@settings(max_examples=400)
@given(filters)
def test_every_filter_reads_back_as_itself(f: Filter) -> None:
    if beyond_the_doubles(f):
        with pytest.raises(UnsupportedFeature):
            expression(f)
        return
    text = expression(f)
    found = read(text)
    assert same(f, found), (f, text, found)
    # and as a search body's filter, it fits the schema of Meilisearch's reference
    assert not request_problems("POST", "/indexes/books/search", {"filter": [text]})


# ---------------------------------------------------------------- ranges on arrays

range_numbers = st.one_of(st.integers(-50, 50), st.sampled_from([0.5, -2.25, 10.0, 1e16]),
                          st.floats(-1e3, 1e3, allow_nan=False))


@st.composite
def two_sided(draw: st.DrawFn) -> RangeFilter:
    low, high = sorted([draw(range_numbers), draw(range_numbers)])
    if draw(st.booleans()):
        low, high = high, low  # empty ranges too
    return RangeFilter(field="price", min=low, max=high, min_exclusive=draw(st.booleans()),
                       max_exclusive=draw(st.booleans()))


def around(value: float) -> list[float]:
    """Doubles at, just below and just above a bound: where strictness decides."""
    return [value, math.nextafter(value, -math.inf), math.nextafter(value, math.inf)]


@st.composite
def ranges_and_docs(draw: st.DrawFn) -> tuple[Filter, dict[str, list[float]]]:
    f: Filter = draw(two_sided())
    if draw(st.booleans()):
        f = Negated(filter=f)
    inner = f.filter if isinstance(f, Negated) else f
    assert isinstance(inner, RangeFilter) and inner.min is not None and inner.max is not None
    near = around(float(inner.min)) + around(float(inner.max)) + [-1e9, 1e9]
    values = draw(st.lists(st.sampled_from(near) | st.floats(-2e3, 2e3), max_size=4))
    return f, ({"price": values} if values or draw(st.booleans()) else {})


def domain_holds(f: Filter, doc: dict[str, list[float]]) -> bool:
    """searchport's meaning: some value of the field is in the range (strict bounds strict,
    compared exactly); ``Negated``: no value is (documents without the field included)."""
    if isinstance(f, Negated):
        return not domain_holds(f.filter, doc)
    assert isinstance(f, RangeFilter) and f.min is not None and f.max is not None
    low, high = Fraction(f.min), Fraction(f.max)
    return any((Fraction(v) > low if f.min_exclusive else Fraction(v) >= low)
               and (Fraction(v) < high if f.max_exclusive else Fraction(v) <= high)
               for v in doc.get(f.field, []))


@settings(max_examples=500)
@given(ranges_and_docs())
def test_a_range_selects_the_documents_with_some_value_in_it(
        case: tuple[Filter, dict[str, list[float]]]) -> None:
    """Evaluated as Meilisearch evaluates it, on a field with several values, a range
    selects exactly the documents with some value inside it (``[1, 50]`` is not in
    ``[10, 20]``), strict bounds kept strict; its negation exactly the others."""
    f, doc = case
    assert selects(expression(f), doc) == domain_holds(f, doc), (f, expression(f), doc)


@pytest.mark.parametrize(("f", "text"), [
    (RangeFilter(field="price", min=10, max=20), "price 10 TO 20"),
    (RangeFilter(field="price", min=10, max=20, min_exclusive=True),
     "price 10.000000000000002 TO 20"),
    (RangeFilter(field="price", min=-1.5, max=0, max_exclusive=True),
     "price -1.5 TO -5e-324"),
    (RangeFilter(field="price", min=10, min_exclusive=True), "price > 10"),
    (RangeFilter(field="price", max=20), "price <= 20"),
])
def test_ranges_are_one_condition(f: Filter, text: str) -> None:
    assert expression(f) == text
    assert same(f, read(text))
    assert not selects(expression(RangeFilter(field="price", min=10, max=20)),
                       {"price": [1, 50]})


@settings(max_examples=300)
@given(st.lists(filters, min_size=1, max_size=4))
def test_each_expression_is_one_filter_and_nothing_more(fs: list[Filter]) -> None:
    """Several filters are several expressions (a list Meilisearch ANDs): each one reads
    back whole, so no value can end its expression early or start another."""
    for f in fs:
        if beyond_the_doubles(f):
            with pytest.raises(UnsupportedFeature):
                expression(f)
            continue
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
    # two conditions, each held by some value: not "some value in [1, 2]"
    "price >= 1 AND price <= 2", "price 1 TO", "price TO 2", "price 1 2",
])
def test_the_reader_refuses_what_searchport_never_writes(text: str) -> None:
    with pytest.raises(Unreadable):
        read(text)


@pytest.mark.parametrize(("f", "text"), [
    (AnyOf(filters=(TermFilter(field="genre", values=("a",)),
                    RangeFilter(field="price", min=10, min_exclusive=True))),
     '(genre = "a") OR (price > 10)'),
    (Negated(filter=RangeFilter(field="price", min=10, max=20)),
     "NOT (price 10 TO 20)"),
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
        "(NOT (published 1589068800 TO 1589155199.9999998)) OR (genre = \"a\")")
