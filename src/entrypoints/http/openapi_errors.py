"""The error answers the OpenAPI document shows: for each route and status, one sentence
that route really sends, in the one error body of every route (``{"error": ...}``, with
Algolia's ``message`` and ``status`` on the Algolia routes)."""

from __future__ import annotations

from typing import Any

from searchport.domain.errors import DocumentNotFound, IndexNotFound
from searchport.domain.usecases.similar import NOT_CONFIGURED
from searchport.entrypoints.http.auth import UNAUTHORIZED
from searchport.entrypoints.http.error_bodies import EVENTS_PATH, is_algolia_path
from searchport.entrypoints.http.http_errors import HTTP_MESSAGES

ERROR_SCHEMA = "#/components/schemas/ErrorBody"
INSIGHTS_SCHEMA = "#/components/schemas/InsightsBody"
ALGOLIA_ERROR_SCHEMA = "#/components/schemas/AlgoliaErrorBody"

# what each status means on every route (the description of the documented answer)
MEANING = {
    400: "Bad input: the sentence says what to fix (an invalid value, an unsupported "
         "feature named with its engine, or a query the engine refused).",
    401: "A key is configured and the request has no valid token "
         "(Authorization: Bearer <key>).",
    403: "A feature turned off for this handle.",
    404: "No such handle (or document).",
    405: "The route does not take this method.",
    413: "The request body is larger than limits.maxBodyBytes.",
    414: "The query string is longer than limits.maxQueryBytes.",
    429: "Rate limited (rateLimit); Retry-After says how many seconds to wait.",
    500: "A fault of searchport itself; the body carries the request id to quote.",
    502: "The engine is unreachable, failing or refusing searchport's credentials.",
    504: "The engine did not answer within the handle's timeout.",
}

# one sentence per status that searchport sends on any route
SENTENCES = {
    400: "Invalid JSON in 'filters' parameter",
    401: UNAUTHORIZED,
    403: "The raw query endpoint is turned off for this index",
    404: IndexNotFound("products").message,
    405: HTTP_MESSAGES[405],
    413: HTTP_MESSAGES[413],
    414: "The query string is longer than 16384 bytes; send fewer or shorter parameters",
    429: "Too many requests: try again in 3 seconds",
    500: "Internal server error; quote the request id when reporting it",
    502: "The elasticsearch engine cannot be reached",
    504: "The elasticsearch engine did not answer within 5 s",
}

# an engine's refusal of a misconfigured handle, in the engine's own words
ENGINE_REFUSED = ("The meilisearch engine rejected the query: `my books` is not a valid index "
                  "uid. Index uid can be an integer or a string containing only alphanumeric "
                  "characters, hyphens (-) and underscores (_), and can not be more than 512 "
                  "bytes.")

# the sentence a given route sends instead, where it has its own
ROUTE_SENTENCES: dict[tuple[str, int], str] = {
    ("/{handle}/autocomplete", 400): "Invalid value for parameter 'perPage': expected `int`, "
                                     "got `str`",
    ("/{handle}/documents/{doc_id}", 404): DocumentNotFound().message,
    ("/{handle}/documents/{doc_id}", 400): ENGINE_REFUSED,
    ("/{handle}/documents/{doc_id}/similar", 400): NOT_CONFIGURED,
    ("/1/indexes/*/recommendations", 400): 'The body must be {"requests": [..]}',
    ("/{handle}/mapping", 400): ENGINE_REFUSED,
    ("/{handle}/query", 400): "The request body must be a JSON object",
    ("/{handle}/instantsearch", 400): "hitsPerPage: must be an integer, got 'x'",
    ("/1/indexes/*/queries", 400): "hitsPerPage: must be an integer, got 'x'",
    ("/1/indexes/{handle}/query", 400): "hitsPerPage: must be an integer, got 'x'",
    ("/1/indexes/{handle}", 400): "hitsPerPage: must be an integer, got 'x'",
    ("/1/indexes/{handle}/facets/{facet}/query", 400): "facetQuery: must be a string",
    ("/1/indexes/{handle}/browse", 400): "cursor: not a cursor of this server's browse "
                                         "answers",
    ("/1/indexes/{handle}/{object_id}", 400): "attributesToRetrieve: not a valid JSON array",
    ("/1/indexes/{handle}/{object_id}", 404): "ObjectID does not exist",
    ("/1/indexes/*/objects", 400): "The get objects body is not valid: Expected `array`, got "
                                   "`int` - at `$.requests`",
    ("/1/indexes/{handle}/rules/search", 400): "The rule search body is not valid: Expected "
                                               "`int` >= 1 - at `$.hitsPerPage`",
}

# the Analytics API: the 400 of a bad limit, the 403 of a key that reads no analytics
ANALYTICS_400 = "limit must be between 1 and 1000"
ANALYTICS_403 = ("This API key may not read analytics: use the apiKey, or a named key with "
                 "analytics: true")
ROUTE_SENTENCES.update({
    **{(path, 400): ANALYTICS_400 for path in (
        "/2/searches", "/2/searches/count", "/2/searches/noResults", "/2/searches/noClicks",
        "/2/searches/noResultRate", "/2/searches/noClickRate", "/2/clicks/clickThroughRate",
        "/2/clicks/averageClickPosition", "/2/clicks/positions",
        "/2/conversions/conversionRate", "/2/hits", "/2/users/count", "/2/filters",
        "/2/filters/noResults", "/2/filters/{attribute}")},
    ("/2/status", 400): "index is required: the handle whose analytics to read",
    **{(path, 403): ANALYTICS_403 for path in (
        "/2/searches", "/2/searches/count", "/2/searches/noResults", "/2/searches/noClicks",
        "/2/searches/noResultRate", "/2/searches/noClickRate", "/2/clicks/clickThroughRate",
        "/2/clicks/averageClickPosition", "/2/clicks/positions",
        "/2/conversions/conversionRate", "/2/hits", "/2/users/count", "/2/filters",
        "/2/filters/noResults", "/2/filters/{attribute}", "/2/status")},
    (EVENTS_PATH, 403): "events[0].index: this key may not send events for 'products'",
    (EVENTS_PATH, 422): "No events to process",
})

# answers a route declares but can never send: it reads no input, or calls no engine
NEVER_SENT = frozenset({
    ("/1/indexes", 400), ("/1/indexes", 404),
    ("/1/indexes/{handle}/settings", 400), ("/1/indexes/{handle}/settings", 502),
    ("/1/indexes/{handle}/settings", 504),
    ("/metrics", 429),  # never rate limited, as /health and /openapi
    # the rule routes answer from the configuration: no engine call, and get_rule reads
    # nothing a client can get wrong
    ("/1/indexes/{handle}/rules/search", 502), ("/1/indexes/{handle}/rules/search", 504),
    ("/1/indexes/{handle}/rules/{object_id}", 400),
    ("/1/indexes/{handle}/rules/{object_id}", 502),
    ("/1/indexes/{handle}/rules/{object_id}", 504),
})


def never_sent(path: str, method: str, status: int) -> bool:
    """A documented error answer the route cannot send (a GET has no body, so no 413)."""
    return (path, status) in NEVER_SENT or (method == "get" and status == 413)


def sentence(path: str, status: int) -> str:
    """The example sentence of ``status`` on the route ``path`` (an OpenAPI path template)."""
    return ROUTE_SENTENCES.get((path, status)) or SENTENCES.get(status) or MEANING[status]


def error_answer(path: str, status: int, description: str) -> dict[str, Any]:
    """The documented answer of ``status`` on ``path``: the one error schema and a real
    example."""
    said = sentence(path, status)
    if path == EVENTS_PATH:
        schema, value = INSIGHTS_SCHEMA, {"status": status, "message": said}
    elif is_algolia_path(path):
        schema, value = ALGOLIA_ERROR_SCHEMA, {"error": said, "message": said, "status": status}
    else:
        schema, value = ERROR_SCHEMA, {"error": said}
    return {
        "description": description or MEANING.get(status, said),
        "content": {"application/json": {
            "schema": {"$ref": schema},
            "examples": {f"status-{status}": {"summary": MEANING.get(status, said),
                                              "value": value}},
        }},
    }


ERROR_BODY_PROPERTIES = {
    "error": {"type": "string", "description": "One sentence saying what went wrong and "
              "what to fix."},
    "details": {"type": "array", "items": {"type": "string"}, "description": "Every problem "
                "found, when there is more than one (the first is in error)."},
    "requestId": {"type": "string", "description": "On a 500 only: the request id to quote "
                  "when reporting it (also in the X-Request-ID header)."},
}
ALGOLIA_BODY_PROPERTIES = {
    **ERROR_BODY_PROPERTIES,
    "message": {"type": "string", "description": "The same sentence, where Algolia's clients "
                "read it."},
    "status": {"type": "integer", "description": "The HTTP status, as Algolia sends it."},
}


def error_components(schemas: dict[str, Any]) -> None:
    """The two error bodies, described, with a real example each."""
    said = SENTENCES[404]
    schemas["ErrorBody"] = {
        "type": "object", "title": "ErrorBody", "required": ["error"],
        "properties": ERROR_BODY_PROPERTIES,
        "description": "The body of every error answer outside the Algolia routes.",
        "examples": [{"error": said}],
    }
    schemas["AlgoliaErrorBody"] = {
        "type": "object", "title": "AlgoliaErrorBody", "required": ["error", "message", "status"],
        "properties": ALGOLIA_BODY_PROPERTIES,
        "description": "The body of every error answer on the Algolia routes (/1/... and "
                       "/{handle}/instantsearch).",
        "examples": [{"error": said, "message": said, "status": 404}],
    }
