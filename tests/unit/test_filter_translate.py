"""Algolia CNF -> domain filters: every expression is translated, and the filters select
exactly the rows that the independent evaluator of the original expression
(``test_filter_grammar.holds``) selects, with Algolia's ``!=`` read as ``NOT =``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from searchport.domain.filters.grammar import (
    parse_facet_filters,
    parse_filters,
    parse_numeric_filters,
)
from searchport.domain.filters.translate import to_domain_filters
from searchport.domain.query import (
    AnyOf,
    ExistsFilter,
    Filter,
    GeoRadiusFilter,
    Negated,
    NotFilter,
    RangeFilter,
    TermFilter,
)
from tests.unit.test_filter_grammar import (
    VALUES,
    atoms,
    holds,
    numbers,
    render,
    rows_st,
    trees,
)

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
    """An independent reading of the domain filters over rows of value lists: a filter on a
    field holds when some value does (``NotFilter``: none); ``AnyOf`` when one member does,
    ``Negated`` when its filter does not. Any other kind fails the test."""
    match flt:
        case AnyOf(filters=members):
            assert len(members) >= 2, flt
            return any(selects(m, row) for m in members)
        case Negated(filter=inner):
            return not selects(inner, row)
        case GeoRadiusFilter():
            raise AssertionError(f"no geo filter comes from an Algolia filter: {flt}")
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
def test_every_expression_selects_what_it_selects_in_algolia(tree: Any, rows: list[Row]) -> None:
    filters = to_domain_filters(parse_filters(render(tree)))
    for kind in {type(f).__name__ for f in filters}:
        event(kind)
    check(filters, lambda row: algolia_holds(tree, row), rows)


# clauses as InstantSearch and hand-written filters send them: ORs across attributes,
# negated comparisons and ranges, numbers in separate intervals, negated equalities
literals = st.tuples(st.booleans(), atoms)


def render_clause(clause: list[tuple[bool, Any]]) -> str:
    return "(" + " OR ".join(("NOT " if negated else "") + render(atom)
                             for negated, atom in clause) + ")"


def as_tree(clauses: list[list[tuple[bool, Any]]]) -> Any:
    return ("and", [("or", [("not", atom) if negated else atom for negated, atom in clause])
                    for clause in clauses])


@settings(max_examples=600, deadline=None)
@given(clauses=st.lists(st.lists(literals, min_size=1, max_size=4), min_size=1, max_size=3),
       rows=rows_st)
def test_clauses_across_attributes_with_negations_select_what_algolia_selects(
    clauses: list[list[tuple[bool, Any]]], rows: list[Row]
) -> None:
    text = " AND ".join(render_clause(c) for c in clauses)
    filters = to_domain_filters(parse_filters(text))
    for kind in {type(f).__name__ for f in filters}:
        event(kind)
    tree = as_tree(clauses)
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
    filters = to_domain_filters(parse_filters(render(tree)))
    for kind in {type(f).__name__ for f in filters}:
        event(kind)
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


@pytest.mark.parametrize(("text", "expected"), [
    ("genre:a OR price > 10", (AnyOf(filters=(
        TermFilter(field="genre", values=("a",)),
        RangeFilter(field="price", min=10, min_exclusive=True))),)),
    ("NOT price > 10", (Negated(filter=RangeFilter(field="price", min=10, min_exclusive=True)),)),
    ("NOT price:1 TO 5", (Negated(filter=RangeFilter(field="price", min=1, max=5)),)),
    ("NOT price:3 TO 3", (NotFilter(field="price", values=(3,)),)),
    ("NOT genre:a OR NOT genre:b", (AnyOf(filters=(
        NotFilter(field="genre", values=("a",)), NotFilter(field="genre", values=("b",)))),)),
    ("genre:a OR NOT genre:b", (AnyOf(filters=(
        TermFilter(field="genre", values=("a",)), NotFilter(field="genre", values=("b",)))),)),
    ("price < 1 OR price > 5", (AnyOf(filters=(
        RangeFilter(field="price", max=1, max_exclusive=True),
        RangeFilter(field="price", min=5, min_exclusive=True))),)),
    ("price = 1 OR price = 3 OR price >= 10", (AnyOf(filters=(
        TermFilter(field="price", values=(1, 3)), RangeFilter(field="price", min=10))),)),
    ("year:abc OR year > 5", (AnyOf(filters=(
        TermFilter(field="year", values=("abc",)),
        RangeFilter(field="year", min=5, min_exclusive=True))),)),
    ("genre:a OR NOT price < 3 OR price != 7", (AnyOf(filters=(
        TermFilter(field="genre", values=("a",)), NotFilter(field="price", values=(7,)),
        Negated(filter=RangeFilter(field="price", max=3, max_exclusive=True)))),)),
    ("price:5 TO 1 OR genre:a", (TermFilter(field="genre", values=("a",)),)),
    ("genre:a AND (NOT price:5 TO 1 OR tags:b)", (TermFilter(field="genre", values=("a",)),)),
])
def test_clauses_no_single_filter_expresses_become_groups(
    text: str, expected: tuple[Filter, ...]
) -> None:
    assert to_domain_filters(parse_filters(text)) == expected
