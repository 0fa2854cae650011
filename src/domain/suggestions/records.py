"""One suggestion, and the record Algolia's Query Suggestions writes for it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from searchport.domain.analytics.reports import PopularQuery
from searchport.domain.results import FacetValue
from searchport.domain.suggestions.layout import ID_FIELD


class Suggestion(msgspec.Struct, frozen=True, kw_only=True):
    """A popular query of the source handle, with what the source found for it: its
    total hits and the top values of the configured facets."""

    query: str
    popularity: int  # searches in the period
    nb_words: int
    exact_nb_hits: int
    facets: dict[str, list[FacetValue]] = msgspec.field(default_factory=dict)

    def record(self, source: str) -> dict[str, Any]:
        """The record as Algolia writes it, the source's figures under the source's name."""
        return {
            ID_FIELD: self.query,
            "query": self.query,
            "popularity": self.popularity,
            "nb_words": self.nb_words,
            source: {
                "exact_nb_hits": self.exact_nb_hits,
                "facets": {"exact_matches": {
                    attribute: [{"value": v.value, "count": v.count} for v in values]
                    for attribute, values in self.facets.items()
                }},
            },
        }


def top_values(values: Iterable[FacetValue], amount: int) -> list[FacetValue]:
    """The ``amount`` most frequent values (ties by value), as Algolia keeps them."""
    return sorted(values, key=lambda v: (-v.count, v.value))[:amount]


def without_typing_prefixes(popular: list[PopularQuery]) -> list[PopularQuery]:
    """Leave out the queries that are only the first letters of a longer popular query: a
    query whose extension (a longer query starting with it) was searched at least as often.
    The log keeps every search of search-as-you-type, so typing "paris" logs "pari" as
    often as "paris"; Algolia's analytics, which its Query Suggestions read, count only
    the last query typed. Order is kept."""
    ordered = sorted(popular, key=lambda p: p.query)
    best_extension: dict[str, int] = {}
    # a depth-first walk: the queries starting with q follow q in sorted order
    stack: list[tuple[str, int]] = []  # (query, most searches among it and its extensions)

    def finish() -> None:
        _, most = stack.pop()
        if stack:
            parent, parent_most = stack[-1]
            best_extension[parent] = max(best_extension.get(parent, 0), most)
            stack[-1] = (parent, max(parent_most, most))

    for item in ordered:
        while stack and not item.query.startswith(stack[-1][0]):
            finish()
        stack.append((item.query, item.count))
    while stack:
        finish()
    return [p for p in popular if best_extension.get(p.query, 0) < p.count]
