"""Real engine servers the tests start themselves, from packages the registries serve.

``count`` keeps, for the run's closing summary (``tests/conftest.py``), how many tests passed
against each real node and how many contract-tier searches each node accepted again.
"""

from __future__ import annotations

from collections import Counter

PASSED: Counter[str] = Counter()  # engine -> tests passed against its real node
RESENT: Counter[str] = Counter()  # engine -> contract-tier searches its real node accepted

# how a test's id names the node it ran against
_NAMED = {
    "opensearch": ("[opensearch]", "[opensearch-node]", "test_opensearch_e2e.py",
                   "test_opensearch_failures.py", "test_opensearch_node.py",
                   "test_suggestion_facets.py::test_suggestion_facets_are_those_of_the_search"
                   "_for_the_suggestion[opensearch]"),
    "elasticsearch": ("[elasticsearch]", "[elasticsearch-node]",
                      "test_elasticsearch_node.py"),
}


def count(nodeid: str) -> None:
    """A passed test, counted for the node its id names (if any)."""
    for engine, marks in _NAMED.items():
        if any(mark in nodeid for mark in marks):
            PASSED[engine] += 1
            return


def summary() -> str | None:
    """One line for the end of the run, or None when no real node served a test."""
    if not PASSED and not RESENT:
        return None
    parts = [f"{name}: {PASSED[engine]} tests passed against the real node, "
             f"{RESENT[engine]} contract-tier searches accepted again by it"
             for engine, name in (("opensearch", "OpenSearch"),
                                  ("elasticsearch", "Elasticsearch"))]
    return "real engines: " + "; ".join(parts)
