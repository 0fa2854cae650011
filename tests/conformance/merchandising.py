"""The query rules and replicas every conformance backend's handle carries, and the plain
Python reading of what they do, the expectations of ``test_merchandising``.

The rules fire only on words and contexts the other conformance tests never send, so they
change no other answer.
"""

from __future__ import annotations

from typing import Any

from tests.conformance.dataset import ROWS

PINNED = ["c41", "c07", "c33"]  # promoted in this order from position 2 (a group), 9
HIDDEN = ["c12", "c50", "c07"]  # c07 is promoted too: hidden wins
RULES: list[dict[str, Any]] = [
    {"objectID": "pins", "conditions": [{"context": "pinned"}],
     "consequence": {"promote": [{"objectIDs": ["c41", "c07"], "position": 2},
                                 {"objectID": "c33", "position": 9}],
                     "hide": [{"objectID": h} for h in HIDDEN]}},
    {"objectID": "bargain", "conditions": [{"pattern": "bargain", "anchoring": "contains"}],
     "consequence": {"params": {"query": {"edits": [{"type": "remove", "delete": "bargain"}]},
                                "filters": "price < 20"}}},
    {"objectID": "fortress", "conditions": [{"pattern": "fortress", "anchoring": "is"}],
     "consequence": {"params": {"query": "castle"}}},
    {"objectID": "banner", "conditions": [{"context": "banner"}],
     "consequence": {"userData": {"banner": "spring.png"},
                     "params": {"renderingContent": {"facetOrdering": {
                         "facets": {"order": ["tags", "genre"]}}}}}},
    {"objectID": "filtered-pin", "conditions": [{"context": "filtered-pin"}],
     "consequence": {"promote": [{"objectID": "c03", "position": 0},
                                 {"objectID": "c04", "position": 1}],
                     "filterPromotes": True}},
]
STANDARD = "books_by_rank"  # a standard replica: rank ascending
VIRTUAL = "books_relevant"  # a virtual replica: relevant hits by rank descending
REPLICAS: dict[str, dict[str, Any]] = {
    STANDARD: {"replicaOf": "books", "sort": [{"field": "rank", "order": "asc"}]},
    VIRTUAL: {"replicaOf": "books", "relevantSort": {"strictness": 100},
              "customRanking": [{"field": "rank", "order": "desc"}]},
}
BY_RANK = sorted(ROWS, key=lambda r: r["rank"])


def placed(organic: list[str], promoted: list[tuple[str, int]]) -> list[str]:
    """Promoted ids at their positions (placing order), the organic ones around them: a
    walk over positions, independent of searchport's paging arithmetic."""
    queue, rest, found = list(promoted), list(organic), []
    while queue or rest:
        if queue and (queue[0][1] <= len(found) or not rest):
            found.append(queue.pop(0)[0])
        else:
            found.append(rest.pop(0))
    return found


def pinned_by_rank() -> list[str]:
    """The ``pins`` rule over every record, ranked by ``rank`` ascending."""
    hidden = set(HIDDEN)
    promoted = [("c41", 2), ("c33", 9)]  # c07 is hidden
    taken = hidden | {oid for oid, _ in promoted} | {"c07"}
    organic = [r["id"] for r in BY_RANK if r["id"] not in taken]
    return placed(organic, promoted)
