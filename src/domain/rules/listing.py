"""A handle's rules listed, as Algolia's rule search and rule retrieval answer.

``query`` matches a rule when each of its words begins a word of the rule's objectID,
description, condition patterns or contexts (case and accents aside); ``anchoring`` and
``context`` keep rules with a condition having that anchoring or that context; ``enabled``
keeps enabled (true) or disabled (false) rules. Rules come in objectID order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated

import msgspec

from searchport.domain.rules.format import Anchoring, Rule
from searchport.domain.rules.text import keys

MAX_HITS_PER_PAGE = 1000


class RuleSearch(msgspec.Struct, frozen=True, kw_only=True, rename="camel",
                 forbid_unknown_fields=True):
    query: str = ""
    anchoring: Anchoring | None = None
    context: str | None = None
    page: Annotated[int, msgspec.Meta(ge=0)] = 0
    hits_per_page: Annotated[int, msgspec.Meta(ge=1, le=MAX_HITS_PER_PAGE)] = 20
    enabled: bool | None = None


class RuleHits(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    hits: list[Rule]
    nb_hits: int
    page: int
    nb_pages: int


def search_rules(rules: Sequence[Rule], request: RuleSearch) -> RuleHits:
    wanted = keys(request.query)
    found = [r for r in sorted(rules, key=lambda r: r.object_id) if _keeps(r, request, wanted)]
    start = request.page * request.hits_per_page
    return RuleHits(hits=found[start:start + request.hits_per_page], nb_hits=len(found),
                    page=request.page,
                    nb_pages=math.ceil(len(found) / request.hits_per_page))


def _keeps(rule: Rule, request: RuleSearch, wanted: tuple[str, ...]) -> bool:
    conditions = rule.all_conditions
    if request.enabled is not None and rule.enabled != request.enabled:
        return False
    if request.anchoring is not None and all(c.anchoring != request.anchoring
                                             for c in conditions):
        return False
    if request.context is not None and all(c.context != request.context for c in conditions):
        return False
    if not wanted:
        return True
    texts = [rule.object_id, rule.description or "",
             *(c.pattern or "" for c in conditions), *(c.context or "" for c in conditions)]
    words = {w for text in texts for w in keys(text)}
    return all(any(w.startswith(part) for w in words) for part in wanted)


def get_rule(rules: Sequence[Rule], object_id: str) -> Rule | None:
    return next((r for r in rules if r.object_id == object_id), None)
