"""The refinements the query log keeps from a search's filters."""

from __future__ import annotations

from searchport.domain.analytics.records import Refinement
from searchport.domain.analytics.refinements import MAX_REFINEMENTS, refinements_of
from searchport.domain.query import (
    AllOf,
    AnyOf,
    ExistsFilter,
    GeoRadiusFilter,
    Negated,
    NotFilter,
    RangeFilter,
    TermFilter,
)


def test_each_filter_kind_as_a_refinement() -> None:
    filters = (
        TermFilter(field="genre_kw", values=("sf", "fantasy")),
        AnyOf(filters=(TermFilter(field="lang", values=("en",)),
                       RangeFilter(field="year", min=1960, max=1970.5, max_exclusive=True))),
        NotFilter(field="genre_kw", values=("horror",)),
        Negated(filter=TermFilter(field="available", values=(False,))),
        AllOf(filters=(RangeFilter(field="published", min="2001-01-01"),)),
        ExistsFilter(field="isbn", exists=True),
        GeoRadiusFilter(field="location", lat=1.0, lon=2.0, radius_m=100.0),
        TermFilter(field="genre_kw", values=("sf",)),  # again: kept once
    )
    public = {"genre_kw": "genre"}.get
    assert refinements_of(filters, lambda f: public(f) or f) == (
        Refinement("genre", ":", "sf"), Refinement("genre", ":", "fantasy"),
        Refinement("lang", ":", "en"), Refinement("year", ">=", "1960"),
        Refinement("year", "<", "1970.5"), Refinement("genre", "!=", "horror"),
        Refinement("available", "!=", "false"), Refinement("published", ">=", "2001-01-01"),
    )


def test_a_long_filter_list_is_bounded() -> None:
    filters = (TermFilter(field="id", values=tuple(range(500))),)
    found = refinements_of(filters)
    assert len(found) == MAX_REFINEMENTS
    assert found[-1] == Refinement("id", ":", str(MAX_REFINEMENTS - 1))
