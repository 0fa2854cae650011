"""The requests searchport sends to Meilisearch, checked without a published specification.

Meilisearch publishes no standalone API specification repository, so two checks stand in:
``meilisearch.json``, a JSON Schema of the search, multi-search and facet-search bodies
written by hand from Meilisearch's API reference (closed: an unknown parameter is refused,
as Meilisearch refuses it with ``bad_request``), and the filter grammar of
``tests/contract/meilisearch/filter_grammar.py`` (written from the filter reference), which
must read back every ``filter`` expression, the documented geo filters (``_geoRadius``,
``_geoBoundingBox``, ``_geoPolygon``) included (the grammar reads values quoted, as
searchport writes them; an unquoted word, which a raw query may send, is valid Meilisearch
too).
"""

from __future__ import annotations

import re
from typing import Any

from tests.contract.meilisearch.filter_grammar import Unreadable, read
from tests.specs.checker import problems

SEARCH = re.compile(r"^/indexes/[^/]+/search$")
FACET_SEARCH = re.compile(r"^/indexes/[^/]+/facet-search$")


def filter_problems(where: str, value: Any) -> list[str]:
    """Every expression of a ``filter`` (a string, or a list of strings and lists of them)
    read by the filter grammar."""
    if value is None:
        return []
    if isinstance(value, str):
        try:
            read(value)
        except Unreadable as exc:
            if str(exc).startswith("bare word"):
                return []  # valid: Meilisearch reads an unquoted word as a string (raw queries)
            return [f"{where}: the filter grammar cannot read {value!r}: {exc}"]
        return []
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in filter_problems(f"{where}/{i}", v)]
    return [f"{where}: a filter is a string or a list, not {value!r}"]


def request_problems(method: str, path: str, body: Any) -> list[str]:
    if method != "POST" or body is None:
        return []
    if SEARCH.match(path):
        return (problems("meilisearch", "search.request", body)
                + filter_problems("filter", _get(body, "filter")))
    if path == "/multi-search":
        found = problems("meilisearch", "multi_search.request", body)
        for i, query in enumerate(_get(body, "queries") or []):
            found += filter_problems(f"queries/{i}/filter", _get(query, "filter"))
        return found
    if FACET_SEARCH.match(path):
        return (problems("meilisearch", "facet_search.request", body)
                + filter_problems("filter", _get(body, "filter")))
    return [f"POST {path}: no endpoint of meilisearch.json is mapped for this request body"]


def _get(body: Any, key: str) -> Any:
    return body.get(key) if isinstance(body, dict) else None
