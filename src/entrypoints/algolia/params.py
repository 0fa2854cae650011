"""One Algolia request's parameters: from the client's JSON (``params`` as a URL-encoded
string, client v4, or an object, client v5, or flat next to ``indexName``) to checked values.

Three groups, listed in docs/algolia.md:
- ``SUPPORTED``: applied with Algolia's meaning;
- ``IGNORED``: accepted and ignored, because ignoring them cannot change hits, counts or
  facets (ranking details, A/B tests, personalisation);
- ``NO_OP_VALUES``: refused unless given a value that changes nothing (``tagFilters: ""``,
  ``attributesToSnippet: []``...). Anything else is a 400 naming the parameter.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode

import msgspec

from searchport.domain.analytics.records import DEFAULT_TRACKING, Tracking
from searchport.domain.errors import InvalidRequest
from searchport.domain.params import MAX_QUERY_CHARS

MAX_SHAPES = 100  # boxes or polygons in one insideBoundingBox or insidePolygon
MAX_SHAPE_POINTS = 1000  # vertices of one polygon

TRACKING = ("analytics", "clickAnalytics", "analyticsTags", "userToken")

SUPPORTED = frozenset({
    "query", "page", "hitsPerPage", "facets", "facetFilters", "numericFilters", "filters",
    "attributesToRetrieve", "attributesToHighlight", "highlightPreTag", "highlightPostTag",
    "maxValuesPerFacet", "insideBoundingBox", "insidePolygon", "aroundLatLng", "aroundRadius",
    "attributesToSnippet", "snippetEllipsisText",
    # which words must match (``words``)
    "optionalWords", "removeWordsIfNoResults", "queryLanguages", "ignorePlurals",
    "removeStopWords",
    # query rules (docs/rules.md); getRankingInfo marks the promoted hits
    "enableRules", "ruleContexts", "getRankingInfo",
    # virtual replicas' relevant sort (docs/replicas.md); ignored on other handles
    "relevancyStrictness",
    # NeuralSearch (docs/semantic.md): keywordSearch turns meaning off for one search
    "mode",
    # facet-value search
    "facetQuery", "maxFacetHits", "facetName",
    # the query log (``tracking``)
    "analytics", "clickAnalytics", "analyticsTags", "userToken",
})
IGNORED = frozenset({
    "enableABTest", "percentileComputation", "enablePersonalization",
    "personalizationImpact", "facetingAfterDistinct", "responseFields",
    # NeuralSearch's event sources train Algolia's model; searchport learns from no event
    "semanticSearch",
})
# Refused unless the value is one of these: then the parameter changes nothing.
NO_OP_VALUES: dict[str, tuple[Any, ...]] = {
    "tagFilters": ("", [], None),
    "optionalFilters": ("", [], None),
    "distinct": (False, 0, "false", "0", None),
    "sortFacetValuesBy": ("count",),
    "advancedSyntax": (False, "false"),
    "sumOrFiltersScores": (False, "false"),
    "restrictHighlightAndSnippetArrays": (False, "false"),
}


class RawParams(msgspec.Struct, frozen=True):
    """The parameters of one request, as sent, and their URL-encoded form for ``params``."""

    values: dict[str, Any]
    encoded: str


def collect(request: dict[str, Any], outer: frozenset[str]) -> RawParams:
    """The parameters of one request object: its own keys (but ``outer``: ``indexName``...),
    then those of ``params`` (a URL-encoded string or an object), which win."""
    values = {k: v for k, v in request.items() if k not in outer and k != "params"}
    params = request.get("params")
    if isinstance(params, str):
        try:
            pairs = parse_qsl(params, keep_blank_values=True, strict_parsing=False)
        except ValueError:
            raise InvalidRequest("params: is not a valid URL-encoded string") from None
        values.update(pairs)
    elif isinstance(params, dict):
        values.update(params)
    elif params is not None:
        raise InvalidRequest("params: must be a URL-encoded string or an object")
    check_names(values)
    for name in QUERIES:
        check_query_length(values, name)
    return RawParams(values, encode(values))


QUERIES = ("query", "facetQuery")


def check_query_length(values: dict[str, Any], name: str) -> None:
    """The cap of ``q`` on searchport's own routes, with the same 400."""
    value = values.get(name)
    if isinstance(value, str) and len(value) > MAX_QUERY_CHARS:
        raise InvalidRequest(f"Invalid value for parameter '{name}': expected `str` of length "
                             f"<= {MAX_QUERY_CHARS}")


def check_names(values: dict[str, Any]) -> None:
    for name in sorted(values):
        if name in SUPPORTED or name in IGNORED:
            continue
        if name in NO_OP_VALUES:
            if _same_as_any(values[name], NO_OP_VALUES[name]):
                continue
            raise InvalidRequest(
                f"{name} is not supported by searchport (only its default, which changes "
                "nothing, is accepted)"
            )
        raise InvalidRequest(f"{name} is not a supported Algolia search parameter")


def _same_as_any(value: Any, allowed: tuple[Any, ...]) -> bool:
    return any(type(value) is type(a) and value == a for a in allowed)


def encode(values: dict[str, Any]) -> str:
    """Algolia's ``params`` echo: ``key=value`` pairs, lists and objects as JSON."""
    return urlencode([
        (k, v if isinstance(v, str) else msgspec.json.encode(v).decode()) for k, v in
        values.items()
    ])


# ---------------------------------------------------------------- typed readers


def text(values: dict[str, Any], name: str, default: str = "") -> str:
    value = values.get(name, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise InvalidRequest(f"{name}: must be a string")
    return value


def flag(values: dict[str, Any], name: str, default: bool) -> bool:
    """A boolean: true/false, or their text ("true", "false", "1", "0")."""
    value = values.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "false", "0"):
        return value.strip().lower() in ("true", "1")
    raise InvalidRequest(f"{name}: must be true or false, got {value!r}")


MODES = ("neuralSearch", "keywordSearch")


def keyword_mode(values: dict[str, Any]) -> bool:
    """``mode``: ``keywordSearch`` searches by words alone; ``neuralSearch`` (or none) is
    the handle's own mode (NeuralSearch only on a handle that has it, as on Algolia)."""
    value = values.get("mode")
    if value is None or value == "":
        return False
    if value not in MODES:
        raise InvalidRequest(f"mode: must be neuralSearch or keywordSearch, got {value!r}")
    return bool(value == "keywordSearch")


def tracking(values: dict[str, Any]) -> Tracking:
    """``analytics`` (default true), ``clickAnalytics``, ``analyticsTags``, ``userToken``."""
    if not any(name in values for name in TRACKING):
        return DEFAULT_TRACKING
    return Tracking(analytics=flag(values, "analytics", True),
                    click_analytics=flag(values, "clickAnalytics", False),
                    tags=tuple(names(values, "analyticsTags") or ()),
                    user_token=text(values, "userToken") or None)


def integer(values: dict[str, Any], name: str) -> int | None:
    value = values.get(name)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    elif isinstance(value, int) and not isinstance(value, bool):
        return value
    elif isinstance(value, float) and value.is_integer():
        return int(value)
    raise InvalidRequest(f"{name}: must be an integer, got {value!r}")


def _listed(values: dict[str, Any], name: str) -> Any:
    """``values[name]`` with a JSON list text decoded; a comma-separated text becomes a tuple
    of its parts (callers trim them); ``None`` when absent."""
    value = values.get(name)
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    if not stripped.startswith("["):
        return tuple(stripped.split(","))
    try:
        return msgspec.json.decode(stripped)
    except msgspec.DecodeError:
        raise InvalidRequest(f"{name}: is not valid JSON") from None


def excluded(attributes: list[str] | None) -> frozenset[str]:
    """The attributes ``attributesToRetrieve`` leaves out: those named with a leading ``-``
    beside ``*`` (Algolia's "everything but"; without ``*`` they mean nothing)."""
    if not attributes or "*" not in attributes:
        return frozenset()
    return frozenset(name[1:] for name in attributes if name.startswith("-") and name[1:])


def names(values: dict[str, Any], name: str) -> list[str] | None:
    """A list of attribute names: a list, a JSON list text or a comma-separated text."""
    value = _listed(values, name)
    if value is None:
        return None
    if isinstance(value, tuple):  # comma-separated text
        return [p.strip() for p in value if p.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidRequest(f"{name}: must be a list of attribute names")
    if len(value) > 100:
        raise InvalidRequest(f"{name}: at most 100 attributes")
    return [v.strip() for v in value if v.strip()]


def shapes(values: dict[str, Any], name: str) -> list[list[float]]:
    """Lists of numbers, one per shape (``insideBoundingBox``, ``insidePolygon``): a list of
    lists, one flat list, or a comma-separated text (one shape); empty when absent."""
    value = _listed(values, name)
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, tuple):  # comma-separated text
        value = [list(value)]
    elif isinstance(value, list) and not any(isinstance(v, list) for v in value):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, list) for v in value):
        raise InvalidRequest(f"{name}: must be a list of lists of numbers")
    if len(value) > MAX_SHAPES:
        raise InvalidRequest(f"{name}: at most {MAX_SHAPES} shapes")
    found = []
    for shape in value:
        try:
            numbers = [float(v) for v in shape if not isinstance(v, bool | list | dict)]
        except (TypeError, ValueError):
            raise InvalidRequest(f"{name}: must be lists of numbers") from None
        if len(numbers) != len(shape) or len(numbers) > 2 * MAX_SHAPE_POINTS:
            raise InvalidRequest(f"{name}: must be lists of numbers, at most "
                                 f"{MAX_SHAPE_POINTS} points each")
        if any(f != f or abs(f) == float("inf") for f in numbers):
            raise InvalidRequest(f"{name}: must be finite numbers")
        found.append(numbers)
    return found
