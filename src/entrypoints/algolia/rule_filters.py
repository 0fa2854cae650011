"""The filter parameters of a rule (``filters``, ``facetFilters``, ``numericFilters``, in
Algolia's grammars) read into domain filters for the rules of one handle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from searchport.domain.query import Filter
from searchport.entrypoints.algolia.filters import (
    Cnf,
    parse_facet_filters,
    parse_filters,
    parse_numeric_filters,
)
from searchport.entrypoints.algolia.translate import to_domain_filters

_PARSERS: dict[str, Callable[[Any], Cnf]] = {
    "filters": lambda value: parse_filters(value),
    "facetFilters": parse_facet_filters,
    "numericFilters": parse_numeric_filters,
}


def filter_reader(real: Callable[[str], str]) -> Callable[[str, Any], tuple[Filter, ...]]:
    """``real`` maps a public attribute name (an alias) to its field."""

    def read(name: str, value: Any) -> tuple[Filter, ...]:
        return to_domain_filters(_PARSERS[name](value), real)

    return read
