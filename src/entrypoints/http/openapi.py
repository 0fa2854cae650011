"""The OpenAPI document as searchport serves it at ``/openapi`` and ``/openapi/json``.

Litestar builds the document from the routes; ``polish`` then makes it read like the
product: the search routes first, one error body on every error answer with a sentence the
route really sends (``openapi_errors``), no generated example values, and plain types
where the generated schema wraps them in unions (an optional query parameter is a
``string``, not ``string | null``: absent is how a client leaves it out).
"""

from __future__ import annotations

import copy
from typing import Any

from litestar import Request
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin

from searchport.entrypoints.http.openapi_errors import error_answer, error_components, never_sent

TAGS = [
    {"name": "search", "description": "Search one handle: hits, facets, values, documents."},
    {"name": "service", "description": "Health, the handles, the cache, metrics."},
    {"name": "algolia", "description": "Algolia's search protocol, for the stock algoliasearch "
                                       "clients and InstantSearch.js (the handle is the index "
                                       "name)."},
    {"name": "analytics", "description": "Algolia's Insights API (events) and Analytics API "
                                         "(v2: the figures of the query log)."},
]
# the order of the routes within their tag: what a newcomer reaches for first
ROUTE_ORDER = [
    "/{handle}/search", "/{handle}/facets/{field}", "/{handle}/autocomplete",
    "/{handle}/documents/{doc_id}", "/{handle}/documents/{doc_id}/similar",
    "/{handle}/fields", "/{handle}/mapping", "/{handle}/query",
    "/indexes", "/health", "/cache/clear", "/metrics",
    "/1/indexes/*/queries", "/1/indexes/{handle}/query",
    "/1/indexes/{handle}/facets/{facet}/query", "/{handle}/instantsearch",
    "/1/indexes/{handle}/{object_id}", "/1/indexes/*/objects",
    "/1/indexes/*/recommendations", "/1/indexes/{handle}/browse",
    "/1/indexes/{handle}/settings", "/1/indexes",
    "/1/events", "/2/searches", "/2/searches/count", "/2/searches/noResults",
    "/2/searches/noClicks", "/2/searches/noResultRate", "/2/searches/noClickRate",
    "/2/clicks/clickThroughRate", "/2/clicks/averageClickPosition", "/2/clicks/positions",
    "/2/conversions/conversionRate", "/2/hits", "/2/users/count", "/2/filters",
    "/2/filters/noResults", "/2/filters/{attribute}", "/2/status",
]
METHODS = ("get", "post", "put", "patch", "delete", "head", "options")
UNIONS = ("oneOf", "anyOf")


# what the routes whose 200 Litestar describes only generically answer
ANSWERS = {
    "/{handle}/fields": "The handle's fields (public names, types, searched or not), default "
                        "facets and perPage.",
    "/{handle}/query": "The engine's own answer, unmodified.",
    "/health": "status (ok, or degraded while an engine is unreachable), the cache's state, "
               "the version and each handle's engine state. Never needs a token.",
    "/indexes": "Each handle with its engine and what it supports (capabilities).",
    "/cache/clear": "Whether searchport's cache entries were dropped, and how many.",
    "/metrics": "The metrics of this process in the Prometheus text format.",
}
GENERIC = "Request fulfilled, document follows"


def _operations(path_item: dict[str, Any]) -> list[dict[str, Any]]:
    return [path_item[m] for m in METHODS if isinstance(path_item.get(m), dict)]


def _rank(item: tuple[str, dict[str, Any]]) -> tuple[int, int]:
    path, path_item = item
    tags = [t for op in _operations(path_item) for t in op.get("tags", [])]
    names = [t["name"] for t in TAGS]
    tag = names.index(tags[0]) if tags and tags[0] in names else len(names)
    return tag, ROUTE_ORDER.index(path) if path in ROUTE_ORDER else len(ROUTE_ORDER)


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "null" and len(schema) == 1


def plain_types(schema: Any, *, nullable: bool = True) -> Any:
    """``schema`` with its unions flattened: a union of one member is that member, a nested
    union joins its parent, and a member with a null (``X | null``) is ``type: [X, "null"]``;
    ``nullable=False`` drops the null (a query parameter is absent, never null)."""
    if isinstance(schema, list):
        return [plain_types(item, nullable=nullable) for item in schema]
    if not isinstance(schema, dict):
        return schema
    done = {key: plain_types(value) for key, value in schema.items() if key not in UNIONS}
    for key in UNIONS:
        if key not in schema:
            continue
        members: list[Any] = []
        for member in plain_types(schema[key]):
            nested = next((member[k] for k in UNIONS if k in member and len(member) == 1), None)
            members.extend(nested if nested is not None else [member])
        has_null = any(_is_null(m) or _allows_null(m) for m in members)
        others = [_not_null(m) for m in members if not _is_null(m)]
        if len(others) == 1:
            merged = {**others[0], **done}
            if has_null and nullable:
                merged = _with_null(merged)
            return merged
        done[key] = others + ([{"type": "null"}] if has_null and nullable else [])
    return done


def _allows_null(schema: Any) -> bool:
    kinds = schema.get("type") if isinstance(schema, dict) else None
    return isinstance(kinds, list) and "null" in kinds


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    if not _allows_null(schema):
        return schema
    kinds = [k for k in schema["type"] if k != "null"]
    return {**schema, "type": kinds[0] if len(kinds) == 1 else kinds}


def _with_null(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list):
        return {**schema, "type": [*kind, *(["null"] if "null" not in kind else [])]}
    return {"oneOf": [schema, {"type": "null"}]}


def _without_examples(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_without_examples(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: _without_examples(v) for k, v in schema.items() if k not in ("examples", "example")}


def _typed_examples(parameter: dict[str, Any]) -> None:
    """A number parameter's examples as numbers (they are declared as the URL's text)."""
    schema = parameter["schema"]
    kind = {"integer": int, "number": float}.get(str(schema.get("type")))
    if kind is None:
        return
    schema["examples"] = [kind(v) for v in schema.get("examples", [])]
    for example in parameter.get("examples", {}).values():
        example["value"] = kind(example["value"])


def _is_validation_shape(answer: dict[str, Any]) -> bool:
    """Litestar's own 400 (``{status_code, detail, extra}``), added to any route with
    parameters; searchport never sends that shape."""
    schema = answer.get("content", {}).get("application/json", {}).get("schema", {})
    return "status_code" in schema.get("properties", {})


def _errors(path: str, method: str, operation: dict[str, Any]) -> None:
    answers = operation.get("responses", {})
    queried = any(p.get("in") == "query" for p in operation.get("parameters", []))
    takes_input = queried or method == "post"
    for code in list(answers):
        if not code.isdigit() or int(code) < 400:
            continue
        answer = answers[code]
        if never_sent(path, method, int(code)):
            del answers[code]
            continue
        if _is_validation_shape(answer):
            if not takes_input:
                del answers[code]
                continue
            answer = {"description": ""}
        answers[code] = error_answer(path, int(code), answer.get("description", ""))


def polish(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of Litestar's ``document`` that reads like the product (see the module)."""
    doc = copy.deepcopy(document)
    components = doc.setdefault("components", {})
    schemas = components["schemas"] = plain_types(_without_examples(components.get("schemas",
                                                                                   {})))
    error_components(schemas)
    for path, path_item in doc.get("paths", {}).items():
        for method in METHODS:
            operation = path_item.get(method)
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if "schema" in parameter:
                    parameter["schema"] = plain_types(parameter["schema"], nullable=False)
                    _typed_examples(parameter)
            _errors(path, method, operation)
            ok = operation.get("responses", {}).get("200", {})
            if ok.get("description") == GENERIC and path in ANSWERS:
                ok["description"] = ANSWERS[path]
    doc["paths"] = dict(sorted(doc.get("paths", {}).items(), key=_rank))
    doc["tags"] = TAGS
    return doc


class _Polished:
    """Polishes the document once: Litestar hands every render the same built document."""

    def __init__(self) -> None:
        self._source: dict[str, Any] | None = None
        self._polished: dict[str, Any] = {}

    def __call__(self, document: dict[str, Any]) -> dict[str, Any]:
        if document is not self._source:
            self._source, self._polished = document, polish(document)
        return self._polished


class PolishedJson(JsonRenderPlugin):
    """``/openapi/json``: the polished document."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._polished = _Polished()

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:  # type: ignore[type-arg]
        return super().render(request, self._polished(openapi_schema))


class PolishedSwagger(SwaggerRenderPlugin):
    """``/openapi``: Swagger UI over the polished document."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._polished = _Polished()

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:  # type: ignore[type-arg]
        return super().render(request, self._polished(openapi_schema))
