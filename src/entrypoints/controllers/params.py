"""Documented query parameters shared by the controllers (OpenAPI text lives here)."""

from __future__ import annotations

from typing import Any

from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import QueryParameter

from searchport.domain.params import MAX_QUERY_CHARS
from searchport.domain.responses import ErrorBody
from searchport.entrypoints.http.error_bodies import AlgoliaErrorBody


def _error(description: str) -> ResponseSpec:
    return ResponseSpec(data_container=ErrorBody, description=description)


def _algolia(spec: ResponseSpec) -> ResponseSpec:
    return ResponseSpec(data_container=AlgoliaErrorBody, description=f"{spec.description} "
                        'Algolia\'s "message" (the same sentence) and "status" come with "error".')


GUARDS = {
    401: _error('Missing or invalid bearer token (when a key is configured): {"error": '
                '"Unauthorized"}.'),
    429: _error("Rate limited (when rateLimit is configured); Retry-After says how many "
                "seconds to wait."),
}
ERRORS = {
    400: _error("Bad input: invalid JSON or value, an unsupported feature, or a query the "
                "engine rejected. The message says what to fix."),
    **GUARDS,
    404: _error("Unknown index handle (or document)."),
    414: _error("The query string is longer than limits.maxQueryBytes (16 KiB by default)."),
    502: _error("The engine is unreachable or failing."),
    504: _error("The engine did not answer in time."),
}


def answers(body: Any, description: str) -> dict[int, ResponseSpec]:
    """The documented responses of a cacheable GET route: its body, 304, and the errors."""
    return {
        200: ResponseSpec(data_container=body, generate_examples=False,
                          description=f"{description} Carries an ETag and Cache-Control "
                          "(private when a key is configured)."),
        304: ResponseSpec(data_container=None, description="Not modified: the If-None-Match "
                          "header named this answer's ETag. No body."),
        **ERRORS,
    }


ALGOLIA_ERRORS = {
    status: _algolia(spec) for status, spec in {
        **ERRORS, 413: _error("The body is larger than limits.maxBodyBytes."),
    }.items()
}

RAW_ERRORS = {
    **ERRORS,
    403: _error("The raw query endpoint is turned off for this index."),
    413: _error("The body is larger than limits.maxBodyBytes."),
}


def _ex(value: str, summary: str) -> list[Example]:
    return [Example(value=value, summary=summary)]


Q = QueryParameter(
    description="Query text. Empty returns all documents. The last word also matches as a prefix.",
    examples=_ex("paris", "a city name"),
    max_length=MAX_QUERY_CHARS,
)
PAGE = QueryParameter(
    description="1-based page number. Values below 1 are clamped to 1; page * perPage may not "
    "exceed the index's result window (10,000 by default).",
    examples=_ex("1", "first page"),
)
PER_PAGE = QueryParameter(
    name="perPage",
    description="Hits per page, 1 to 100 (outside values are clamped). Default: 20 or the "
    "index's defaults.perPage.",
    examples=_ex("20", "twenty hits"),
)
SORT = QueryParameter(
    description='JSON object field -> "asc" | "desc"; key order is the sort priority. '
    '"_score" sorts by relevance. Aliases allowed.',
    examples=_ex('{"population":"desc"}', "largest first"),
)
FACETS = QueryParameter(
    description="Comma-separated fields to count values of (default: the index's "
    "defaults.facets), at most 100. Counts are disjunctive: a field's own filter does not "
    "narrow its counts.",
    examples=_ex("continent,country", "two facets"),
)
FILTERS = QueryParameter(
    description='JSON object field -> filter. A value ("France", 3, true) means equals; a list '
    'means any of; {"min": x, "max": y} is an inclusive range of numbers or ISO-8601 dates; '
    '{"not": v or [..]} excludes; {"exists": true|false} tests presence. Fields AND together.',
    examples=_ex('{"continent":"Europe","population":{"min":1000000}}', "European cities of 1M+"),
)
HIGHLIGHT = QueryParameter(
    description="true highlights every searched text field, false none, or a comma-separated "
    "field list. Fragments are HTML-escaped with matches in <mark> tags.",
    examples=_ex("true", "highlight"),
)
FIELDS = QueryParameter(
    description="Comma-separated stored fields to return (default: all). Hit metadata "
    "(objectID, _index, _score, _highlights) is always returned.",
    examples=_ex("name,country,population", "three fields"),
)
SUGGEST = QueryParameter(
    description="true returns phrase suggestions for q (needs defaults.suggestField and an "
    "engine that supports suggestions, see GET /indexes capabilities).",
    examples=_ex("false", "no suggestions"),
)
BOOSTS = QueryParameter(
    description="JSON object field -> weight (number >= 0). Replaces the configured weights: "
    "only the boosted fields are searched.",
    examples=_ex('{"name":3,"alternateNames":1}', "favour names"),
)
HISTOGRAM = QueryParameter(
    description="JSON object numeric field -> interval (> 0), at most 100 fields. Response "
    "histograms[field] lists {key, count} buckets ascending, empty buckets inside the range "
    "included; an interval that would give too many buckets is a 400.",
    examples=_ex('{"population":1000000}', "population in steps of one million"),
)
RULE_CONTEXTS = QueryParameter(
    name="ruleContexts",
    description="Comma-separated contexts: rules whose condition names one of them may "
    "apply (docs/rules.md).",
    examples=_ex("mobile", "one context"),
)
SEMANTIC = QueryParameter(
    description="The share of meaning in the ranking, from 0 (words only) to 1 (meaning "
    "only), on a handle with a semantic section (docs/semantic.md); default: the handle's "
    "semantic.ratio, else 0. When its embedder fails or is late the search goes on by "
    "words alone and the answer carries X-Searchport-Semantic: degraded.",
    examples=_ex("0.5", "words and meaning alike"),
    ge=0, le=1,
)
AC_SEMANTIC = QueryParameter(
    description="The share of meaning in the ranking, from 0 (words only) to 1 (meaning "
    "only), as on /search (default: the handle's semantic.ratio, else 0). Only the complete "
    "words of q are searched by meaning (all but the last one, unless q ends with a space); "
    "the last word, being typed, matches as a prefix. One unfinished word: by words alone. "
    "A failing embedder: words alone, with X-Searchport-Semantic: degraded.",
    examples=_ex("0.5", "words and meaning alike"),
    ge=0, le=1,
)
ENABLE_RULES = QueryParameter(
    name="enableRules",
    description="false: the handle's query rules do not apply to this search (default true).",
    examples=_ex("true", "rules apply"),
)
GEO_GRID = QueryParameter(
    name="geoGrid",
    description='JSON {"field", "precision" 0..29 (zoom), "bounds"?: {"top_left": {lat, lon}, '
    '"bottom_right": {lat, lon}}}. Response geoClusters lists map tiles "z/x/y" with the '
    "centroid and count of their documents and one sample hit. Bounds also limit the hits.",
    examples=_ex('{"field":"location","precision":3}', "zoom 3 tiles"),
)
FACET_Q = QueryParameter(
    description="Case-insensitive substring that facet values must contain (empty: all).",
    examples=_ex("fr", "values containing fr"),
    max_length=MAX_QUERY_CHARS,
)
MAX_VALUES = QueryParameter(
    name="maxValues",
    description="Maximum values returned, 1 to 100 (clamped). Default 20.",
    examples=_ex("20", "twenty values"),
)
FACET_FILTERS = QueryParameter(
    name="filters",
    description="JSON filters narrowing the counts, same grammar as on /search. For "
    "disjunctive (OR) facets leave this field out of the filters.",
    examples=_ex('{"continent":"Europe"}', "within Europe"),
)
AC_PER_PAGE = QueryParameter(
    name="perPage",
    description="Hits to return, 1 to 20 (clamped). Default 5.",
    examples=_ex("5", "five hits"),
)
AC_FACETS = QueryParameter(
    description="Comma-separated facet fields whose values containing q are suggested too.",
    examples=_ex("country", "suggest countries"),
)
AC_MAX_FACETS = QueryParameter(
    name="maxFacetsPerField",
    description="Facet values per field, 1 to 20 (clamped). Default 4.",
    examples=_ex("4", "four values"),
)


# -- the query log (docs/analytics.md), Algolia's names ---------------------------------------

ANALYTICS = QueryParameter(
    description="false: this search is not logged in the analytics. Default true.",
    examples=_ex("false", "not logged"),
)
CLICK_ANALYTICS = QueryParameter(
    name="clickAnalytics",
    description="true: the answer carries a queryID (32 hex characters) that click and "
    "conversion events (POST /1/events) refer to. Default false.",
    examples=_ex("true", "a queryID in the answer"),
)
ANALYTICS_TAGS = QueryParameter(
    name="analyticsTags",
    description="Comma-separated tags logged with this search.",
    examples=_ex("mobile,fr", "two tags"),
    max_length=1024,
)
USER_TOKEN = QueryParameter(
    name="userToken",
    description="Who searched (letters, digits, _=/+-, at most 129); default the "
    "X-Algolia-UserToken header, else a pseudonym of the client's address for the day (the "
    "address itself is never kept).",
    examples=_ex("user-42", "a user token"),
    max_length=256,
)
