"""Rules read with Algolia's filter grammars: a rule's ``filters``, ``facetFilters`` and
``numericFilters`` become domain filters, and each handle's rules a checked ``RuleSet``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from searchport.domain.config import Config, ConfigError, IndexConfig
from searchport.domain.fields import FieldMap
from searchport.domain.query import Filter
from searchport.domain.rules.ruleset import RuleSet
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


def rule_sets(config: Config, clock: Callable[[], float] = time.time) -> dict[str, RuleSet]:
    """Every handle's rules, checked and indexed (handles without rules have none);
    ``ConfigError`` naming the handle, the rule's objectID and the key path."""
    found: dict[str, RuleSet] = {}
    for handle, index in config.indexes.items():
        if not index.rule_list:
            continue
        fields = FieldMap(index.fields)
        try:
            found[handle] = RuleSet(index.rule_list, real=fields.real,
                                    read_filters=filter_reader(fields.real), clock=clock)
        except ValueError as exc:
            raise ConfigError(f"indexes.{handle}.rules: {exc}") from None
        _check_placing(handle, index)
    return found


def _check_placing(handle: str, index: IndexConfig) -> None:
    """Promoted and hidden records are left out of a search by a filter on the id field:
    the embedded engine needs it indexed as a keyword field."""
    placing = next((r for r in index.rule_list if r.enabled and (
        r.consequence.promote or r.consequence.hide)), None)
    if placing is None:
        return
    at = f"indexes.{handle}.rules: rule {placing.object_id!r}: consequence"
    if index.engine != "tantivy":
        raise ConfigError(f"{at}: promote and hide are supported on the tantivy engine only "
                          f"so far, not on {index.engine}")
    keyword = any((fc.field or name) == index.id_field and fc.type == "keyword"
                  for name, fc in index.fields.items())
    if not keyword:
        raise ConfigError(f"{at}: promote and hide need the id field {index.id_field!r} "
                          f"indexed as a keyword field: add fields.{index.id_field}.type: "
                          f"keyword")
