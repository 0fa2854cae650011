"""SearchRules: a handle's rules listed, page by page (Algolia's rule search)."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.catalog import Catalog
from searchport.domain.errors import Forbidden
from searchport.domain.rules.format import Rule
from searchport.domain.rules.listing import RuleHits, RuleSearch, search_rules


def readable_rules(catalog: Catalog, handle: str, access: Access) -> list[Rule]:
    """A handle's rules, for a key that reads every record of it: rules name records (to
    promote, to hide) that a key limited to some records must not learn about."""
    entry = access.entry(catalog, handle)
    if access.forced(entry):
        raise Forbidden("This API key may not list rules: it is restricted to some records "
                        "of this handle")
    return entry.config.rule_list


class SearchRules:
    """The rules of one handle matching a rule search."""

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, handle: str, request: RuleSearch,
                       access: Access = FULL_ACCESS) -> RuleHits:
        return search_rules(readable_rules(self._catalog, handle, access), request)
