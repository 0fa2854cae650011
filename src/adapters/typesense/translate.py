"""``SearchQuery`` and ``FacetValuesQuery`` as Typesense search parameters.

Pure functions of the query and the collection ``Schema``; ``parse.py`` reads the answers.

- Text: ``q`` (``*`` when blank) over ``query_by``. Typesense matches every word by default;
  ``exhaustive_search`` makes it also drop words (from the right, then from the left) and
  consider every prefix expansion, which gives any-word matching for one or two words. With
  three or more, a document holding only a middle word is not found (0.24 never drops words
  on both sides). Typo tolerance is off (``num_typos: 0``): the contract has no fuzziness.
  ``"`` (phrase) and a leading ``-`` (exclusion) are Typesense operators, so they are taken
  out of the words; a text without any word is a blank one (Typesense treats it so too).
  ``prefix`` applies to the last word, and only when the text ends in a letter or digit.
  With ``all_words`` (Algolia's routes), ``q`` holds the required words only, and
  ``drop_tokens_threshold: 0`` without ``exhaustive_search`` keeps Typesense from dropping
  any (a typed prefix then expands to Typesense's ``max_candidates`` words at most, 4 by
  default): optional words neither match nor rank; when every word is optional, words are
  dropped as above.
- Weights: ``query_by_weights`` takes integers, and 0.24 uses weights of 1 to 15 as given
  but replaces them all by 15, 14, 13... in weight order as soon as one is above 15. So
  ``integer_weights`` scales the weights so the largest is 15, rounds them (at least 1) and
  bumps a collision up by one: ratios are kept to the nearest fifteenth, and distinct weights
  stay distinct and in order (past 15 levels Typesense falls back to the order alone).
  Fields go in descending weight order; equal weights are sent too, since without weights
  Typesense weighs fields by their position. ``prioritize_exact_match`` is off: with it, a
  field equal to the whole query outranks any weight.
- Disjunctive facets, in one ``multi_search``: the first search has every filter and the
  facets that have no filter of their own; each facet with its own filters gets one more
  search with every other filter, ``per_page: 0`` and only that facet.
- Stats of a numeric field come with its ``facet_counts`` (``stats``), so a stats field is
  faceted like a facet, in the same search as a facet on it would be.
- Pages: 0.24 ignores ``offset``/``limit``; ``page_window`` finds a page size holding the
  requested window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from searchport.adapters.typesense.filters import NEVER, coordinate, filter_by, number
from searchport.adapters.typesense.schema import ENGINE, Schema
from searchport.domain.errors import InvalidRequest, UnsupportedFeature
from searchport.domain.query import (
    FacetValuesQuery,
    FieldWeight,
    SearchQuery,
    SortClause,
    TermFilter,
    filter_field,
)

Json = dict[str, Any]

MAX_PER_PAGE = 250  # Typesense's largest page
MAX_SORT_KEYS = 3  # "Only upto 3 sort fields are allowed." (0.24.1)
MAX_WEIGHT = 15  # the largest weight Typesense 0.24 uses as given
FACET_SCAN = 1000  # values of one facet read to match facet-value search text here
DATE_SCAN = 10_000  # values of a date facet read at most to match facet-value search text
# Private-use characters as highlight tags: the snippet is HTML-escaped, then they become
# <mark> and </mark>. Typesense does not escape the text it returns.
MARK_START = "\ue000\ue001"
MARK_END = "\ue001\ue000"


@dataclass(frozen=True)
class SearchPlan:
    searches: list[Json]  # the main search first
    facet_search: dict[str, int]  # facet or stats field -> the search whose facet_counts hold it
    skip: int  # hits of the fetched page before the requested window
    highlight_fields: frozenset[str]
    facet_budget: int  # max_facet_values asked for


def search_plan(query: SearchQuery, schema: Schema, collection: str,
                ranking: tuple[SortClause, ...] = (), vectors: str | None = None) -> SearchPlan:
    """``ranking``: the handle's custom ranking (``domain.ranking``), the tie-break of
    relevance when the query has no sort of its own; ``vectors``: the field holding the
    records' vectors (``semantic.field``), never returned unless ``fields`` names it."""
    base = {"collection": collection, **text_params(query, schema), **hidden_hits(query)}
    for name in query.facets:
        schema.facet(name)
    for name in query.stats:
        schema.stats(name)
    faceted = tuple(dict.fromkeys([*query.facets, *query.stats]))
    budget = query.max_facet_values + 1  # one more, to see a tie across the cut
    own = {filter_field(f) for f in query.filters} if query.disjunctive_facets else set()
    page, per_page, skip = page_window(query.offset, query.limit)
    main: Json = {**base, "page": page, "per_page": per_page}
    where = _and(filter_by(query.filters, schema), _only_ids(query, schema))
    if where:
        main["filter_by"] = where
    keys = sort_keys(query, schema, ranking)
    if keys:
        main["sort_by"] = ",".join(keys)
    if query.fields is not None:
        main["include_fields"] = ",".join(dict.fromkeys(
            [*(f for f in query.fields if "," not in f), "id"]
        ))
    elif vectors is not None and vectors in schema.fields:
        main["exclude_fields"] = vectors
    highlighted: tuple[str, ...] = ()
    if query.highlight and base["q"] != "*":
        wanted = query.highlight_fields or tuple(base["query_by"].split(","))
        highlighted = tuple(f for f in wanted if f in schema.string_fields)
        if highlighted:
            main.update(highlight_fields=",".join(highlighted),
                        highlight_start_tag=MARK_START, highlight_end_tag=MARK_END)
    plain = [f for f in faceted if f not in own]
    if plain:
        main.update(facet_by=",".join(plain), max_facet_values=budget)
    searches, sources = [main], dict.fromkeys(plain, 0)
    for name in faceted:
        if name not in own:
            continue
        extra: Json = {**base, "per_page": 0, "facet_by": name, "max_facet_values": budget}
        others = _and(filter_by((f for f in query.filters if filter_field(f) != name), schema),
                      _only_ids(query, schema))
        if others:
            extra["filter_by"] = others
        sources[name] = len(searches)
        searches.append(extra)
    return SearchPlan(searches=searches, facet_search=sources, skip=skip,
                      highlight_fields=frozenset(highlighted), facet_budget=budget)


def _only_ids(query: SearchQuery, schema: Schema) -> str:
    """``ids`` as a filter on ``id`` (which compares whole strings)."""
    if query.ids is None:
        return ""
    return filter_by((TermFilter(field="id", values=query.ids),), schema) if query.ids \
        else NEVER


def _and(*clauses: str) -> str:
    return " && ".join(c for c in clauses if c)


def hidden_hits(query: SearchQuery) -> Json:
    """``excluded_ids`` as ``hidden_hits``: Typesense has no ``!=`` on ``id``, and a hidden
    hit is left out of the hits, ``found`` and every facet count (checked against the real
    server). The list is comma-separated, so an id holding a comma cannot be written."""
    if not query.excluded_ids:
        return {}
    if any("," in oid for oid in query.excluded_ids):
        raise UnsupportedFeature("Leaving out a record whose id holds a comma", ENGINE)
    return {"hidden_hits": ",".join(query.excluded_ids)}


def sort_keys(query: SearchQuery, schema: Schema,
              ranking: tuple[SortClause, ...] = ()) -> list[str]:
    """``sort_by`` keys: a ``geo_sort`` first (``field(lat, lng):asc``, closest first,
    documents without the field last), then the sort keys, or relevance when there are none
    (``_text_match:desc``, then the custom ranking's keys, as many as fit).
    Typesense takes at most three keys: with a distance sort, more is a 400 naming the
    engine here, never a cut (without one, Typesense's own 400 says so)."""
    keys = [
        f"{'_text_match' if c.field == '_score' else schema.sortable(c.field).name}:{c.order}"
        for c in query.sort
    ]
    relevance = ["_text_match:desc",
                 *(f"{schema.sortable(c.field).name}:{c.order}" for c in ranking)]
    geo = query.geo_sort
    if geo is None:
        return keys or (relevance[:MAX_SORT_KEYS] if ranking else [])
    field = schema.geo_sortable(geo.field).name
    nearest = f"{field}({coordinate(geo.lat)}, {coordinate(geo.lon)}):asc"
    if not keys:  # the custom ranking is a tie-break: cut to what fits after the distance
        return [nearest, *relevance][:MAX_SORT_KEYS]
    keys = [nearest, *keys]
    if len(keys) > MAX_SORT_KEYS:
        raise UnsupportedFeature(
            f"Sorting by {len(keys)} keys (at most {MAX_SORT_KEYS}; a distance sort from "
            "aroundLatLng is one of them)", ENGINE)
    return keys


def text_params(query: SearchQuery, schema: Schema) -> Json:
    fields, weights = query_by(query.search_fields, schema)
    required = query.required_words()
    # every word must match: the optional words are left out (they neither match nor rank)
    # and Typesense drops none of the others
    words = query_words(query.text if required is None else " ".join(required))
    params: Json = {
        "q": " ".join(words) if words else "*",
        "query_by": ",".join(fields),
        # num_typos and prefix are strings in Typesense's specification (a value per
        # query_by field, comma separated): one value holds for every field
        "num_typos": "0",
        "exhaustive_search": True,
        "prioritize_exact_match": False,  # else a whole-field match outranks the weights
        "prefix": "true" if query.prefix_last_word and query.text[-1:].isalnum() else "false",
    }
    if weights:
        params["query_by_weights"] = ",".join(map(str, weights))
    if required is not None:
        # exhaustive_search would drop words whatever the threshold says
        params.update(exhaustive_search=False, drop_tokens_threshold=0)
    return params


def query_words(text: str) -> list[str]:
    words = (w.lstrip("-") for w in text.replace('"', " ").split())
    return [w for w in words if w and w != "*"]


def query_by(search_fields: Sequence[FieldWeight], schema: Schema) -> tuple[list[str], list[int]]:
    """The searched fields, heaviest first, with their integer weights."""
    if not search_fields:
        names = list(schema.string_fields)
        return names, [1] * len(names) if len(names) > 1 else []
    chosen: dict[str, float] = {}
    for fw in search_fields:
        name = schema.searchable(fw.field).name
        chosen[name] = max(chosen.get(name, 0.0), fw.weight)
    ordered = sorted(chosen.items(), key=lambda kv: -kv[1])
    weights = integer_weights([w for _, w in ordered])
    return [n for n, _ in ordered], weights if len(weights) > 1 else []


def integer_weights(weights: Sequence[float]) -> list[int]:
    """Positive float weights as positive integers in the same order (see the docstring)."""
    if not weights:
        return []
    top = max(weights)
    scaled = {w: max(1, round(w / top * MAX_WEIGHT)) for w in weights}
    previous: int | None = None
    for w in sorted(scaled):
        if previous is not None and scaled[w] <= previous:
            scaled[w] = previous + 1
        previous = scaled[w]
    return [scaled[w] for w in weights]


def page_window(offset: int, limit: int) -> tuple[int, int, int]:
    """``page``, ``per_page`` and the hits to skip so the page holds offset..offset+limit."""
    if limit <= 0:
        return 1, 0, 0
    for size in range(limit, MAX_PER_PAGE + 1):
        page = offset // size
        if (offset + limit - 1) // size == page:
            return page + 1, size, offset - page * size
    raise InvalidRequest(
        f"The typesense engine cannot return hits {offset + 1} to {offset + limit} in one page"
    )


def facet_values_searches(query: FacetValuesQuery, schema: Schema, collection: str,
                          *, dated: bool = False) -> list[Json]:
    """Values of one facet counted under the filters: the first FACET_SCAN of them (matched
    against the text by ``parse``), plus, when there is text, Typesense's own facet search
    (a prefix match on the words of the values), which reaches values past the scan.

    ``dated`` (a date field, Unix seconds): Typesense's facet search would match the digits
    of the seconds, not the ISO-8601 text the client sees, so with text the scan reads up to
    DATE_SCAN values, one more to tell when there are more (the engine refuses then)."""
    name = schema.facet(query.field).name
    scan: Json = {"collection": collection, "q": "*", "query_by": "", "per_page": 0,
                  "facet_by": name, "max_facet_values": FACET_SCAN}
    where = filter_by(query.filters, schema)
    if where:
        scan["filter_by"] = where
    needle = " ".join(query.text.replace(",", " ").split())
    if dated:
        return [{**scan, "max_facet_values": DATE_SCAN + 1}] if needle else [scan]
    searches = [scan]
    if needle:
        searches.append({**scan, "facet_query": f"{name}:{needle}"})
    return searches


def facet_retry(search: Json, name: str, budget: int) -> Json:
    """One facet's search again, reading more values (a tie crossed the cut)."""
    return {**search, "page": 1, "per_page": 0, "facet_by": name, "max_facet_values": budget}


RETARGETING_KEYS = frozenset({"collection", "collections"})


def raw_params(body: dict[str, Any]) -> dict[str, str]:
    """A client's search parameters as a query string, minus any key that would pick another
    collection or carry another API key."""
    params: dict[str, str] = {}
    for key, value in body.items():
        lowered = key.lower()
        if lowered in RETARGETING_KEYS or lowered.startswith("x-typesense"):
            continue
        params[key] = _param(key, value)
    return params


def _param(key: str, value: Any) -> str:
    if isinstance(value, list):
        return ",".join(_scalar(key, v) for v in value)
    return _scalar(key, value)


def _scalar(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number(value)
    if isinstance(value, str):
        return value
    raise InvalidRequest(
        f"Raw query parameter '{key}' must be a string, a number, a boolean or a list of them"
    )

