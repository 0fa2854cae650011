"""Real engine servers the tests start themselves, from packages the registries serve.

``count`` keeps, for the run's closing summary (``tests/conftest.py``), how many tests passed
against each real node and how many contract-tier searches each node accepted again.
"""

from __future__ import annotations

from collections import Counter

PASSED: Counter[str] = Counter()  # engine -> tests passed against its real node
RESENT: Counter[str] = Counter()  # engine -> contract-tier searches its real node accepted

# the tests that always run against the named node, whatever their parameters
_FILES = {
    "tests/e2e/test_opensearch_e2e.py": "opensearch",
    "tests/integration/test_opensearch_failures.py": "opensearch",
    "tests/integration/test_opensearch_node.py": "opensearch",
    "tests/integration/test_elasticsearch_node.py": "elasticsearch",
}
# the suites parametrized over engines, where a parameter names the real node's engine
_SUITES = ("tests/conformance/", "tests/contract/elastic/test_live.py",
           "tests/integration/test_suggestion_facets.py")


def count(nodeid: str) -> None:
    """A passed test, counted for the real node it ran against (if any)."""
    path, _, params = nodeid.partition("::")
    engine = _FILES.get(path)
    if engine is None and path.startswith(_SUITES):
        ids = set(params.partition("[")[2].rstrip("]").split("-"))
        engine = next((e for e in ("opensearch", "elasticsearch") if e in ids), None)
    if engine is not None:
        PASSED[engine] += 1


def summary() -> str | None:
    """One line for the end of the run, or None when no real node served a test."""
    if not PASSED and not RESENT:
        return None
    parts = [f"{name}: {PASSED[engine]} tests passed against the real node, "
             f"{RESENT[engine]} contract-tier searches accepted again by it"
             for engine, name in (("opensearch", "OpenSearch"),
                                  ("elasticsearch", "Elasticsearch"))]
    return "real engines: " + "; ".join(parts)
