"""The query rules and replicas every conformance backend's handle carries, and the plain
Python reading of what they do, the expectations of ``test_merchandising``.

The rules fire only on words and contexts the other conformance tests never send, so they
change no other answer.
"""

from __future__ import annotations

import random
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


def generated_rules(count: int = 24, seed: int = 2511) -> list[dict[str, Any]]:
    """Rules ``gen-00``... each applying in its own context ``gen-NN``: promotes (single
    records and groups, some of records that do not exist), hides, ``filterPromotes``; a
    search names any set of contexts, so any combination of them applies."""
    rnd = random.Random(seed)
    ids = [r["id"] for r in ROWS] + ["nope-1", "nope-2"]
    rules = []
    for i in range(count):
        promote: list[dict[str, Any]] = []
        for _ in range(rnd.randint(0, 3)):
            group = rnd.sample(ids, rnd.randint(1, 3))
            position = rnd.randint(0, 40)
            promote.append({"objectID": group[0], "position": position} if len(group) == 1
                           else {"objectIDs": group, "position": position})
        rules.append({"objectID": f"gen-{i:02d}", "conditions": [{"context": f"gen-{i:02d}"}],
                      "consequence": {
                          "promote": promote,
                          "hide": [{"objectID": h} for h in rnd.sample(ids, rnd.randint(0, 3))],
                          "filterPromotes": rnd.random() < 0.4}})
    return rules


GENERATED = generated_rules()
RULES += GENERATED
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


def expected_pages(rules: list[dict[str, Any]], ranking: list[str], matches: set[str]
                   ) -> list[str]:
    """What paging through a search shows with ``rules`` applied (in objectID order, the
    precedence of rules that match no words): ``ranking``, the search's hits in order;
    ``matches``, the records its filters select (``filterPromotes``)."""
    ordered = sorted(rules, key=lambda r: r["objectID"])
    hidden = {h["objectID"] for r in ordered for h in r["consequence"]["hide"]}
    asked: dict[str, tuple[int, bool]] = {}
    for rule in ordered:
        consequence = rule["consequence"]
        for promote in consequence["promote"]:
            group = [promote["objectID"]] if "objectID" in promote else promote["objectIDs"]
            for i, oid in enumerate(group):
                asked.setdefault(oid, (promote["position"] + i, consequence["filterPromotes"]))
    existing = {r["id"] for r in ROWS}
    promoted = sorted(((position, oid) for oid, (position, filtered) in asked.items()
                       if oid not in hidden and oid in existing
                       and (not filtered or oid in matches)), key=lambda p: p[0])
    placing: list[tuple[str, int]] = []
    for position, oid in promoted:  # a position taken moves the next record along
        placing.append((oid, max(position, placing[-1][1] + 1) if placing else position))
    organic = [i for i in ranking if i not in hidden and i not in asked]
    return placed(organic, placing)


def pinned_by_rank() -> list[str]:
    """The ``pins`` rule over every record, ranked by ``rank`` ascending."""
    hidden = set(HIDDEN)
    promoted = [("c41", 2), ("c33", 9)]  # c07 is hidden
    taken = hidden | {oid for oid, _ in promoted} | {"c07"}
    organic = [r["id"] for r in BY_RANK if r["id"] not in taken]
    return placed(organic, promoted)
