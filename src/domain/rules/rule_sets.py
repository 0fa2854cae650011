"""Every handle's rules as the config gives them, read with the filter grammar
(``domain/filters``): a rule's ``filters``, ``facetFilters`` and ``numericFilters`` become
domain filters, and each handle's rules a checked ``RuleSet``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from searchport.domain.config import Config, ConfigError
from searchport.domain.fields import FieldMap
from searchport.domain.filters.grammar import (
    Cnf,
    parse_facet_filters,
    parse_filters,
    parse_numeric_filters,
)
from searchport.domain.filters.translate import to_domain_filters
from searchport.domain.query import Filter
from searchport.domain.rules.ruleset import RuleSet

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


def rule_sets(config: Config, clock: Callable[[], float] = time.time) -> dict[str, RuleSet]:
    """Every handle's rules, checked and indexed (handles without rules have none);
    ``ConfigError`` naming the handle, the rule's objectID and the key path."""
    found: dict[str, RuleSet] = {}
    for handle, index in config.indexes.items():
        if not index.rule_list or index.replica_of is not None:  # a replica shares them
            continue
        fields = FieldMap(index.fields)
        try:
            found[handle] = RuleSet(index.rule_list, real=fields.real,
                                    read_filters=filter_reader(fields.real), clock=clock)
        except ValueError as exc:
            raise ConfigError(f"indexes.{handle}.rules: {exc}") from None
    return found
