"""Algolia's filter languages: any generated expression parses to a CNF that selects
exactly the rows an independent evaluator of the original expression selects."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.domain.errors import InvalidRequest
from searchport.domain.filters.grammar import (
    MAX_LITERALS,
    Between,
    Compare,
    FacetIs,
    Lit,
    parse_facet_filters,
    parse_filters,
    parse_numeric_filters,
)

ATTRS = ("genre", "tags", "price", "my attr", "a.b")
VALUES = ("fiction", "new release", 'say "hi"', "back\\slash", "AND", "x:y", "(p)", "-5", "é")

# rows: attribute -> list of string values and a number
rows_st = st.lists(
    st.fixed_dictionaries({
        "genre": st.lists(st.sampled_from(VALUES), max_size=2),
        "tags": st.lists(st.sampled_from(VALUES), max_size=3),
        "my attr": st.lists(st.sampled_from(VALUES), max_size=1),
        "a.b": st.lists(st.sampled_from(VALUES), max_size=1),
        "price": st.lists(st.integers(-5, 5).map(float), max_size=2),
    }),
    min_size=1, max_size=8,
)


# ---- an independent model: expression trees and their direct evaluation

def holds(tree: Any, row: dict[str, list[Any]]) -> bool:
    kind = tree[0]
    if kind == "and":
        return all(holds(t, row) for t in tree[1])
    if kind == "or":
        return any(holds(t, row) for t in tree[1])
    if kind == "not":
        return not holds(tree[1], row)
    if kind == "facet":
        return tree[2] in row[tree[1]]
    if kind == "between":
        return any(tree[2] <= v <= tree[3] for v in row[tree[1]])
    op, number = tree[2], tree[3]
    tests = {"=": number.__eq__, "!=": number.__ne__, "<": number.__gt__,
             "<=": number.__ge__, ">": number.__lt__, ">=": number.__le__}
    return any(tests[op](v) for v in row[tree[1]])


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(tree: Any) -> str:
    kind = tree[0]
    if kind in ("and", "or"):
        return "(" + f" {kind.upper()} ".join(render(t) for t in tree[1]) + ")"
    if kind == "not":
        return "NOT " + render(tree[1])
    if kind == "facet":
        return f"{quote(tree[1])}:{quote(tree[2])}"
    if kind == "between":
        return f"{quote(tree[1])}:{tree[2]:g} TO {tree[3]:g}"
    return f"{quote(tree[1])} {tree[2]} {tree[3]:g}"


numbers = st.integers(-6, 6).map(float)
atoms = st.one_of(
    st.tuples(st.just("facet"), st.sampled_from(("genre", "tags", "my attr", "a.b")),
              st.sampled_from(VALUES)),
    st.tuples(st.just("between"), st.just("price"), numbers, numbers),
    st.tuples(st.just("compare"), st.just("price"),
              st.sampled_from(("=", "!=", "<", "<=", ">", ">=")), numbers),
)
trees = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.tuples(st.sampled_from(("and", "or")), st.lists(inner, min_size=1, max_size=3)),
        st.tuples(st.just("not"), inner),
    ),
    max_leaves=6,
)


def lit_holds(lit: Lit, row: dict[str, list[Any]]) -> bool:
    atom = lit.atom
    if isinstance(atom, FacetIs):
        result = atom.value in row[atom.attribute]
    elif isinstance(atom, Between):
        result = any(atom.low <= v <= atom.high for v in row[atom.attribute])
    else:
        result = holds(("compare", atom.attribute, atom.op, atom.value), row)
    return result != lit.negated


def cnf_holds(cnf: Any, row: dict[str, list[Any]]) -> bool:
    return all(any(lit_holds(lit, row) for lit in clause) for clause in cnf)


@settings(max_examples=400, deadline=None)
@given(tree=trees, rows=rows_st)
def test_filters_string_parses_to_an_equivalent_cnf(tree: Any, rows: list[Any]) -> None:
    cnf = parse_filters(render(tree))
    for row in rows:
        assert cnf_holds(cnf, row) == holds(tree, row)


facet_items = st.tuples(st.sampled_from(("genre", "tags")), st.sampled_from(VALUES), st.booleans())


def facet_text(item: tuple[str, str, bool]) -> str:
    attr, value, negated = item
    if negated:
        return f"{attr}:-{value}"
    return f"{attr}:\\{value}" if value.startswith("-") else f"{attr}:{value}"


@settings(max_examples=300, deadline=None)
@given(groups=st.lists(st.one_of(facet_items, st.lists(facet_items, min_size=1, max_size=3)),
                       max_size=4),
       rows=rows_st, as_json=st.booleans())
def test_facet_filters_and_the_outer_list_and_or_the_inner(
    groups: list[Any], rows: list[Any], as_json: bool
) -> None:
    value = [[facet_text(i) for i in g] if isinstance(g, list) else facet_text(g) for g in groups]
    cnf = parse_facet_filters(json.dumps(value) if as_json else value)
    for row in rows:
        expected = all(
            any((v in row[a]) != neg for a, v, neg in (g if isinstance(g, list) else [g]))
            for g in groups
        )
        assert cnf_holds(cnf, row) == expected


def test_numeric_filters_keep_strict_bounds_strict() -> None:
    cnf = parse_numeric_filters(["price > 10", ["year<1950", "year:2000 TO 2010"]])
    assert cnf == (
        (Lit(Compare("price", ">", 10.0)),),
        (Lit(Compare("year", "<", 1950.0)), Lit(Between("year", 2000.0, 2010.0))),
    )


def test_a_bare_facet_filter_string_is_one_filter() -> None:
    assert parse_facet_filters("genre:fiction") == ((Lit(FacetIs("genre", "fiction")),),)


@pytest.mark.parametrize("text", [
    "genre:", "genre fiction", "(genre:a", "genre:a)", "price > cheap", "AND genre:a",
    "genre:a OR", "price:1 TO", 'genre:"unterminated', "price > nan", "NOT",
])
def test_bad_filters_are_400s_naming_the_parameter(text: str) -> None:
    with pytest.raises(InvalidRequest, match=r"^filters: "):
        parse_filters(text)


@pytest.mark.parametrize("value", [{"a": 1}, [["genre:a", ["deeper:b"]]], ["no colon"], [[]], 3])
def test_bad_facet_filters_are_400s(value: Any) -> None:
    with pytest.raises(InvalidRequest, match=r"^facetFilters: "):
        parse_facet_filters(value)


def test_an_expression_that_explodes_in_cnf_is_refused() -> None:
    # (a1 AND b1) OR (a2 AND b2) OR ... : 2^n clauses once expanded
    text = " OR ".join(f"(genre:a{i} AND tags:b{i})" for i in range(12))
    with pytest.raises(InvalidRequest, match=str(MAX_LITERALS)):
        parse_filters(text)


def test_empty_filters_select_everything() -> None:
    assert parse_filters("   ") == ()
