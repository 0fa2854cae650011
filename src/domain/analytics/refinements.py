"""The refinements of a search, as the query log keeps them: from the domain filters a
request asked for (a key's forced filters are not the user's and are not passed here).

A facet value (``TermFilter``, each value of it, also inside ``AnyOf``) is ``attribute : value``;
a numeric or date bound (``RangeFilter``) is ``attribute >= min`` / ``> min`` / ``<= max`` /
``< max``; a negation is ``attribute != value``. Existence and geo filters refine no
attribute value and are left out. Nesting (``AllOf``, ``AnyOf``) is flattened."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Literal

import msgspec

from searchport.domain.query import (
    AllOf,
    AnyOf,
    Filter,
    Negated,
    NotFilter,
    RangeFilter,
    Scalar,
    TermFilter,
)

Operator = Literal[":", "<", "<=", "=", "!=", ">", ">="]  # as Algolia's Analytics API says


class Refinement(msgspec.Struct, frozen=True, array_like=True):
    """One refinement a search applied: an attribute (public name), how (``:`` for a facet
    value, a comparison for a numeric bound) and the value, as text."""

    attribute: str
    operator: Operator
    value: str


MAX_REFINEMENTS = 50  # per search: a long filter list is kept in part, never whole


def _text(value: Scalar | float) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def _walk(filters: Iterable[Filter], public: Callable[[str], str]) -> Iterator[Refinement]:
    for f in filters:
        if isinstance(f, TermFilter):
            for value in f.values:
                yield Refinement(public(f.field), ":", _text(value))
        elif isinstance(f, NotFilter):
            for value in f.values:
                yield Refinement(public(f.field), "!=", _text(value))
        elif isinstance(f, RangeFilter):
            if f.min is not None:
                yield Refinement(public(f.field), ">" if f.min_exclusive else ">=",
                                 _text(f.min))
            if f.max is not None:
                yield Refinement(public(f.field), "<" if f.max_exclusive else "<=",
                                 _text(f.max))
        elif isinstance(f, AllOf | AnyOf):
            yield from _walk(f.filters, public)
        elif isinstance(f, Negated) and isinstance(f.filter, TermFilter):
            yield from (Refinement(public(f.filter.field), "!=", _text(v))
                        for v in f.filter.values)


def refinements_of(filters: Iterable[Filter],
                   public: Callable[[str], str] = str) -> tuple[Refinement, ...]:
    """The refinements of ``filters`` (real field names, shown through ``public``), each
    once, in order, at most ``MAX_REFINEMENTS``."""
    found: dict[Refinement, None] = {}
    for refinement in _walk(filters, public):
        found[refinement] = None
        if len(found) == MAX_REFINEMENTS:
            break
    return tuple(found)
