"""Algolia CNF -> domain filters: whatever is accepted selects exactly the rows that the
independent evaluator of the original expression (``test_algolia_filters.holds``) selects,
with Algolia's ``!=`` read as ``NOT =``; whatever cannot be expressed is a 400 naming it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from searchport.domain.algolia.filters import (
    parse_facet_filters,
    parse_filters,
    parse_numeric_filters,
)
from searchport.domain.algolia.translate import to_domain_filters
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import (
    ExistsFilter,
    Filter,
    NotFilter,
    RangeFilter,
    TermFilter,
)
from tests.unit.test_algolia_filters import VALUES, holds, numbers, render, rows_st, trees

Row = dict[str, list[Any]]


def algolia_holds(tree: Any, row: Row) -> bool:
    """``holds``, with ``a != n`` meaning ``NOT a = n`` as in Algolia (records without the
    attribute, or with ``n`` among several values, are left in / out accordingly)."""
    if tree[0] == "compare" and tree[2] == "!=":
        return not holds(("compare", tree[1], "=", tree[3]), row)
    if tree[0] in ("and", "or"):
        return {"and": all, "or": any}[tree[0]](algolia_holds(t, row) for t in tree[1])
    if tree[0] == "not":
        return not algolia_holds(tree[1], row)
    return holds(tree, row)


def selects(flt: Filter, row: Row) -> bool:
    """An independent reading of the domain filters over rows of value lists."""
    found = row[flt.field]
    match flt:
        case TermFilter(values=values):
            return any(v == w for v in found for w in values)
        case NotFilter(values=values):
            return not any(v == w for v in found for w in values)
        case RangeFilter(min=low, max=high, min_exclusive=strict_low, max_exclusive=strict_high):
            def inside(v: float) -> bool:
                above = low is None or (v > low if strict_low else v >= low)  # type: ignore[operator]
                below = high is None or (v < high if strict_high else v <= high)  # type: ignore[operator]
                return above and below
            return any(inside(v) for v in found)
        case ExistsFilter(exists=exists):
            return bool(found) == exists
    raise AssertionError(flt)


def check(filters: tuple[Filter, ...], expected: Any, rows: list[Row]) -> None:
    for row in rows:
        assert all(selects(f, row) for f in filters) == expected(row), (filters, row)


@settings(max_examples=600, deadline=None)
@given(tree=trees, rows=rows_st)
def test_accepted_filters_select_what_the_expression_selects(tree: Any, rows: list[Row]) -> None:
    cnf = parse_filters(render(tree))
    try:
        filters = to_domain_filters(cnf)
    except InvalidRequest as refused:
        event("refused")
        assert str(refused).startswith("filters: the condition '")
        return
    event("accepted")
    check(filters, lambda row: algolia_holds(tree, row), rows)


# one attribute at a time: the expressions InstantSearch widgets send, most of them accepted
price_atoms = st.one_of(
    st.tuples(st.just("between"), st.just("price"), numbers, numbers),
    st.tuples(st.just("compare"), st.just("price"),
              st.sampled_from(("=", "!=", "<", "<=", ">", ">=")), numbers),
)
price_trees = st.recursive(
    price_atoms,
    lambda inner: st.one_of(
        st.tuples(st.sampled_from(("and", "or")), st.lists(inner, min_size=1, max_size=3)),
        st.tuples(st.just("not"), inner),
    ),
    max_leaves=4,
)


@settings(max_examples=600, deadline=None)
@given(tree=price_trees, rows=rows_st)
def test_numeric_conditions_on_one_attribute(tree: Any, rows: list[Row]) -> None:
    try:
        filters = to_domain_filters(parse_filters(render(tree)))
    except InvalidRequest:
        event("refused")
        return
    event("accepted")
    check(filters, lambda row: algolia_holds(tree, row), rows)


facet_items = st.tuples(st.sampled_from(("genre", "tags")), st.sampled_from(VALUES))


@settings(max_examples=300, deadline=None)
@given(groups=st.lists(st.lists(facet_items, min_size=1, max_size=3), max_size=4),
       negated=st.lists(facet_items, max_size=2), rows=rows_st)
def test_refinement_lists_are_always_accepted(groups: list[Any], negated: list[Any],
                                              rows: list[Row]) -> None:
    """InstantSearch's facetFilters: an OR group per attribute, exclusions one by one."""
    by_attribute: dict[str, list[str]] = {}
    for group in groups:
        for attr, value in group:
            by_attribute.setdefault(attr, []).append(value)
    value = [[f"{a}:\\{v}" if v.startswith("-") else f"{a}:{v}" for v in values]
             for a, values in by_attribute.items()]
    value += [f"{a}:-{v}" for a, v in negated]
    filters = to_domain_filters(parse_facet_filters(json.dumps(value)))

    def expected(row: Row) -> bool:
        return all(any(v in row[a] for v in values) for a, values in by_attribute.items()) and \
            not any(v in row[a] for a, v in negated)

    check(filters, expected, rows)


def test_strict_bounds_stay_strict() -> None:
    assert to_domain_filters(parse_numeric_filters(["price > 10", "year<=1950"])) == (
        RangeFilter(field="price", min=10, min_exclusive=True),
        RangeFilter(field="year", max=1950),
    )
    assert to_domain_filters(parse_filters("price:5 TO 10.5 AND (price < 8 OR price = 8)")) == (
        RangeFilter(field="price", min=5, max=10.5),
        RangeFilter(field="price", max=8),
    )


def test_equalities_and_negations() -> None:
    assert to_domain_filters(parse_facet_filters([["genre:a", "genre:b"], "tags:-old"])) == (
        TermFilter(field="genre", values=("a", "b")),
        NotFilter(field="tags", values=("old",)),
    )
    assert to_domain_filters(parse_numeric_filters(["price != 10", "year = 1999"])) == (
        NotFilter(field="price", values=(10,)),
        TermFilter(field="year", values=(1999,)),
    )
    assert to_domain_filters(parse_filters("NOT price != 2.5")) == (
        TermFilter(field="price", values=(2.5,)),)
    assert to_domain_filters(parse_filters("price < 3 OR price >= 3")) == (
        ExistsFilter(field="price", exists=True),)


def test_attribute_names_go_through_the_alias_map() -> None:
    assert to_domain_filters(parse_filters("region:Europe"), {"region": "continent"}.get) == (
        TermFilter(field="continent", values=("Europe",)),)


@pytest.mark.parametrize(("text", "says"), [
    ("genre:a OR price > 10", "ORs different attributes (genre, price)"),
    ("NOT price > 10", "a negated comparison"),
    ("NOT price:1 TO 5", "a negated comparison or range"),
    ("NOT genre:a OR NOT genre:b", "an OR of a negation"),
    ("genre:a OR NOT genre:b", "an OR of a negation"),
    ("price < 1 OR price > 5", "separate intervals"),
    ("year:abc OR year > 5", "text value 'abc'"),
])
def test_what_cannot_be_expressed_is_a_400_naming_the_condition(text: str, says: str) -> None:
    with pytest.raises(InvalidRequest, match=r"^filters: the condition '") as refused:
        to_domain_filters(parse_filters(text))
    assert says in str(refused.value)
