"""``AllOf`` (the group a key's forced filters travel in) in the filter languages of the
engines whose filters are text: Typesense's ``&&`` and Meilisearch's ``AND``, each member in
parentheses, and its complement by De Morgan (Typesense) or ``NOT (...)`` (Meilisearch). The
real engines run it in tests/integration/test_scoped_properties.py (Typesense) and the
Meilisearch filter properties."""

from __future__ import annotations

from searchport.adapters.meilisearch.filters import expression
from searchport.adapters.typesense.filters import clause
from searchport.adapters.typesense.schema import FieldInfo, Schema
from searchport.domain.query import (
    AllOf,
    ExistsFilter,
    Negated,
    RangeFilter,
    TermFilter,
    filter_field,
)

SCHEMA = Schema(fields={"genre": FieldInfo("genre", "string", facet=True),
                        "year": FieldInfo("year", "int32")})
BOTH = AllOf(filters=(TermFilter(field="genre", values=("a",)),
                      RangeFilter(field="year", min=1900, max=2000)))


def test_typesense_joins_the_members_with_and() -> None:
    assert clause(BOTH, SCHEMA) == "((genre:=`a`) && (year:>=1900 && year:<=2000))"


def test_typesense_negates_by_de_morgan() -> None:
    # not (a and b) = (not a) or (not b); year is a required int32: its range's complement
    # is the two comparisons outside it
    assert clause(Negated(filter=BOTH), SCHEMA) == (
        "((genre:!=`a`) || (((year:<1900) || (year:>2000))))")


def test_typesense_drops_a_group_that_holds_for_every_document() -> None:
    # year is required: every document has it, so the group adds no clause
    assert clause(AllOf(filters=(ExistsFilter(field="year", exists=True),)), SCHEMA) == ""


def test_meilisearch_joins_the_members_with_and() -> None:
    assert expression(BOTH) == '(genre = "a") AND (year 1900 TO 2000)'
    assert expression(Negated(filter=BOTH)) == 'NOT ((genre = "a") AND (year 1900 TO 2000))'


def test_a_group_is_no_facets_own_filter() -> None:
    assert filter_field(BOTH) is None
