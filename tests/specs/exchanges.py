"""Which specification and endpoint an exchange of the tests belongs to, and its check.

- ``engine_request(engine, method, path, query, body)``: a request searchport sent to an
  engine (Elasticsearch, OpenSearch, Typesense, Meilisearch);
- ``engine_answer(engine, method, path, status, body)``: an engine's answer as the tests
  script it (Elasticsearch, OpenSearch) or as the real engine sent it (Typesense);
- ``algolia_answer(method, path, status, body)``: what searchport answered on an Algolia route.

Each returns the problems found (empty: the exchange satisfies its specification, or no
specification covers it). ``VIOLATIONS`` collects what the hooks find
(``tests/conftest.py``, ``tests/contract/scripted.py``); the autouse fixture of
``tests/conftest.py`` fails the test that caused any.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from searchport.entrypoints.http.error_bodies import is_algolia_path
from tests.specs.checker import problems
from tests.specs.meilisearch import request_problems as meili_request_problems

ELASTIC = frozenset({"elasticsearch", "opensearch"})
# the real Typesense servers of the tests (tests/typesense_server.py): only their exchanges
# are Typesense's (a misbehaving fake upstream on /collections is not)
TYPESENSE_ORIGINS: set[str] = set()


class Violations:
    """What the hooks found, for the running test to report (thread-safe: the app under
    test answers from its own threads)."""

    def __init__(self) -> None:
        self._found: list[str] = []
        self._lock = threading.Lock()

    def add(self, what: str, found: list[str]) -> None:
        if found:
            with self._lock:
                self._found.append(what + ":\n  " + "\n  ".join(found))

    def take(self) -> list[str]:
        with self._lock:
            found, self._found = self._found, []
        return found


VIOLATIONS = Violations()


# ---------------------------------------------------------------- engines


def engine_request(engine: str, method: str, path: str, query: str, body: Any) -> list[str]:
    if engine in ELASTIC:
        return _elastic_request(engine, method, path, body)
    if engine == "typesense":
        return _typesense_request(method, path, query, body)
    if engine == "meilisearch":
        return meili_request_problems(method, path, body)
    if engine == "openai":
        return _openai_request(method, path, body)
    return []


def engine_answer(engine: str, method: str, path: str, status: int, body: Any) -> list[str]:
    if engine in ELASTIC:
        return _elastic_answer(engine, method, path, status, body)
    if engine == "typesense":
        return _typesense_answer(method, path, status, body)
    if engine == "openai":
        return _openai_answer(method, path, status, body)
    return []


def _openai_request(method: str, path: str, body: Any) -> list[str]:
    if method == "POST" and path.endswith("/embeddings"):
        return problems("openai", "embeddings.request", body)
    return [f"{method} {path}: not an endpoint of the OpenAI embeddings API"]


def _openai_answer(method: str, path: str, status: int, body: Any) -> list[str]:
    if not isinstance(body, dict):
        return []  # not JSON: the adapter's handling of a broken answer is under test
    if status >= 400:
        return problems("openai", "error.response", body)
    return problems("openai", "embeddings.response", body)


def _elastic_request(engine: str, method: str, path: str, body: Any) -> list[str]:
    if body is None:
        return []
    if method == "POST" and path.endswith("/_search"):
        return problems(engine, "search.request", body)
    if method == "POST" and path.endswith("/_count"):
        return problems(engine, "count.request", body)
    return [f"{method} {path}: no specification endpoint is mapped for this request body"]


def _elastic_answer(engine: str, method: str, path: str, status: int, body: Any) -> list[str]:
    if not isinstance(body, dict):
        return []  # not JSON: the adapter's handling of a broken answer is under test
    if "/_doc/" in path and method == "GET" and "found" in body:
        return problems(engine, "get.response", body)
    if status >= 400:
        return problems(engine, "error.response", body) if "error" in body else []
    if path.endswith("/_search"):
        return problems(engine, "search.response", body)
    if path.endswith("/_count"):
        return problems(engine, "count.response", body)
    if path.endswith("/_mapping"):
        return problems(engine, "mapping.response", body)
    return []


TYPESENSE_SEARCH = re.compile(r"^/collections/[^/]+/documents/search$")
TYPESENSE_COLLECTION = re.compile(r"^/collections/[^/]+$")


def typesense_params(endpoint: str, query: dict[str, str]) -> dict[str, Any]:
    """Query-string parameters typed by the specification (``per_page=10`` is an integer)."""
    from tests.specs.checker import document

    spec = document("typesense")
    schema = spec["endpoints"][endpoint]
    name = schema.get("$ref", "").removeprefix("#/$defs/")
    props: dict[str, Any] = {}
    for part in [spec["$defs"].get(name, schema)]:
        props.update(part.get("properties", {}))
    typed: dict[str, Any] = {}
    for key, text in query.items():
        kind = props.get(key, {}).get("type")
        if kind == "integer" and re.fullmatch(r"-?\d+", text):
            typed[key] = int(text)
        elif kind == "number" and re.fullmatch(r"-?\d+(\.\d+)?", text):
            typed[key] = float(text)
        elif kind == "boolean" and text in ("true", "false"):
            typed[key] = text == "true"
        else:
            typed[key] = text
    return typed


def _typesense_request(method: str, path: str, query: str, body: Any) -> list[str]:
    from urllib.parse import parse_qsl

    params = dict(parse_qsl(query, keep_blank_values=True))
    params.pop("x-typesense-api-key", None)
    if method == "GET" and TYPESENSE_SEARCH.match(path):
        return problems("typesense", "search.params", typesense_params("search.params", params))
    if method == "POST" and path == "/multi_search":
        return (problems("typesense", "multi_search.params",
                         typesense_params("multi_search.params", params))
                + problems("typesense", "multi_search.request", body))
    if body is not None:
        return [f"{method} {path}: no specification endpoint is mapped for this request body"]
    return []


def _typesense_answer(method: str, path: str, status: int, body: Any) -> list[str]:
    if not isinstance(body, dict):
        return []
    if status >= 400:
        return problems("typesense", "error.response", body)
    if method == "GET" and TYPESENSE_SEARCH.match(path):
        return problems("typesense", "search.response", body)
    if method == "POST" and path == "/multi_search":
        return problems("typesense", "multi_search.response", body)
    if method == "GET" and TYPESENSE_COLLECTION.match(path):
        return problems("typesense", "collection.response", body)
    return []


# ---------------------------------------------------------------- Algolia routes

ALGOLIA_ROUTES = (
    (re.compile(r"^/1/indexes/\*/queries$"), "multi.response"),
    (re.compile(r"^/[^/]+/instantsearch$"), "multi.response"),
    (re.compile(r"^/1/indexes/[^/]+/facets/[^/]+/query$"), "facet_values.response"),
    (re.compile(r"^/1/indexes/[^/]+/query$"), "search.response"),
)


def algolia_answer(method: str, path: str, status: int, content: bytes) -> list[str]:
    if method != "POST" or not (is_algolia_path(path) or path.endswith("/instantsearch")):
        return []
    try:
        body = json.loads(content) if content else None
    except ValueError:
        return [f"{path}: the answer is not JSON"]
    if status >= 400:
        found = problems("algolia", "error.response", body)
        if not isinstance(body, dict) or not isinstance(body.get("message"), str):
            found.append("an Algolia error answer carries no message (its clients show it)")
        return found
    for pattern, endpoint in ALGOLIA_ROUTES:
        if pattern.match(path):
            return problems("algolia", endpoint, body)
    return []
