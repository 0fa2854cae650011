"""Algolia search parameters as a domain ``SearchQuery``, and the answer as an Algolia result.

Algolia's semantics, not those of ``/search``: ``page`` counts from 0, ``hitsPerPage`` may
be 0 (facets only), facet counts follow every filter of the query (InstantSearch asks for
disjunctive counts itself, with extra queries), a page past the result window has no hits
(not a 400).

``facets_stats``: the engine computes the stats of every requested facet typed ``integer`` or
``float`` in the config, over all matching records (so a range slider gets the bounds of
the whole result, however many distinct values); when it cannot give avg and sum (Meilisearch)
or for an untyped facet, they come from the facet's value counts if those hold every value.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from searchport.domain.catalog import IndexEntry
from searchport.domain.engines import BY_NAME
from searchport.domain.errors import InvalidRequest
from searchport.domain.fields import FieldMap
from searchport.domain.filters.grammar import (
    Cnf,
    parse_facet_filters,
    parse_filters,
    parse_numeric_filters,
)
from searchport.domain.filters.translate import to_domain_filters
from searchport.domain.geo_shapes import PairOrder, stored_points
from searchport.domain.params import clamp
from searchport.domain.query import (
    Filter,
    SearchQuery,
)
from searchport.domain.results import EngineResult, FacetValue, FieldStats, Hit
from searchport.domain.rules.search import RuleAsk, RuleOutcome
from searchport.domain.semantic import neural_share
from searchport.domain.usecases.algolia_search import MAX_FACET_VALUES
from searchport.entrypoints.algolia import params as ap
from searchport.entrypoints.algolia.geo import areas, around, single_geo_field
from searchport.entrypoints.algolia.highlight import (
    DEFAULT_POST,
    DEFAULT_PRE,
    HighlightResult,
    Tags,
    highlight_result,
    query_words,
)
from searchport.entrypoints.algolia.responses import (
    AlgoliaHit,
    AlgoliaResult,
    Exhaustive,
    FacetStats,
    rendering_content,
)
from searchport.entrypoints.algolia.snippet import (
    DEFAULT_ELLIPSIS,
    SnippetResult,
    snippet_result,
    snippet_sizes,
)
from searchport.entrypoints.algolia.words import Words, read_words

MAX_HITS_PER_PAGE = 100
GEOLOC = "_geoloc"  # Algolia's geo attribute: {lat, lng}, or a list of them
NUMERIC = ("integer", "float")


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """What one Algolia search asks of the engine, and how to shape the answer."""

    query: SearchQuery
    page: int
    hits_per_page: int
    tags: Tags
    highlighted: tuple[str, ...]  # public names of the attributes given a _highlightResult
    max_values_per_facet: int  # values shown per facet; the engine is asked for 100 (stats)
    # public name -> words, of the attributes given a _snippetResult
    snippeted: tuple[tuple[str, int], ...] = ()
    ellipsis: str = DEFAULT_ELLIPSIS
    # highlighted by the engine for their snippet only: no _highlightResult
    snippet_only: tuple[str, ...] = ()
    rule_ask: RuleAsk = RuleAsk()  # enableRules, ruleContexts and the page, for rules
    # the handle's one geo_point field (real name), read into each hit's ``_geoloc``
    geoloc: str | None = None
    point_order: PairOrder = "lat_lon"
    words: Words = Words()  # optional words, and those to try while nothing is found
    ranking_info: bool = False  # getRankingInfo: promoted hits carry _rankingInfo
    relevancy_strictness: int | None = None  # a virtual replica's, for this search
    # attributesToRetrieve's "-name" beside "*": public names left out of every hit
    hidden: frozenset[str] = frozenset()


def algolia_filters(values: dict[str, Any], entry: IndexEntry) -> tuple[Filter, ...]:
    """The filters of ``facetFilters``, ``numericFilters``, ``filters`` and the radius of
    ``aroundLatLng``/``aroundRadius``."""
    radius, _ = around(entry, values)
    area = areas(entry, values)
    return _listed_filters(values, entry) + tuple(f for f in (radius, area) if f is not None)


def _listed_filters(values: dict[str, Any], entry: IndexEntry) -> tuple[Filter, ...]:
    cnf: Cnf = ()
    if values.get("facetFilters") not in (None, "", []):
        cnf += parse_facet_filters(values["facetFilters"])
    if values.get("numericFilters") not in (None, "", []):
        cnf += parse_numeric_filters(values["numericFilters"])
    cnf += parse_filters(ap.text(values, "filters"))
    return to_domain_filters(cnf, entry.fields.real)


def plan_search(entry: IndexEntry, values: dict[str, Any]) -> Plan:
    config, fields = entry.config, entry.fields
    page = max(0, ap.integer(values, "page") or 0)
    per_page = clamp(ap.integer(values, "hitsPerPage"), config.defaults.per_page, 0,
                     MAX_HITS_PER_PAGE)
    window = config.max_result_window
    offset = min(page * per_page, window)
    limit = max(0, min(per_page, window - offset))  # past the window: no hits, as Algolia

    asked = ap.names(values, "facets")
    facet_names = list(config.defaults.facets) if asked == ["*"] else (asked or [])
    if "*" in facet_names:
        facet_names = [*config.defaults.facets, *(f for f in facet_names if f != "*")]
    max_values = clamp(ap.integer(values, "maxValuesPerFacet"), MAX_FACET_VALUES, 1,
                       MAX_FACET_VALUES)

    retrieve = ap.names(values, "attributesToRetrieve")
    geoloc = single_geo_field(entry)
    # a "-name" leaves an attribute out beside "*" only; alone it means nothing (as Algolia)
    chosen = None if retrieve is None or "*" in retrieve else fields.real_all(
        [geoloc if name == GEOLOC and geoloc else name for name in retrieve
         if not name.startswith("-")])
    snippeted = _snippeted(entry, values)
    to_highlight = ap.names(values, "attributesToHighlight")
    snippet_only: tuple[str, ...] = ()
    if to_highlight is None or "*" in to_highlight:
        highlighted = _searchable(entry)
        highlight_fields: tuple[str, ...] = ()
    else:
        highlighted = tuple(dict.fromkeys(to_highlight))
        snippet_only = tuple(name for name in snippeted if name not in highlighted)
        highlight_fields = fields.real_all((*highlighted, *snippet_only))
    tags = Tags(ap.text(values, "highlightPreTag", DEFAULT_PRE),
                ap.text(values, "highlightPostTag", DEFAULT_POST))

    facets = tuple(dict.fromkeys(fields.real_all(facet_names)))
    radius, nearest = around(entry, values)
    text = ap.text(values, "query")
    words = read_words(values, text)
    query = SearchQuery(
        text=text,
        all_words=True,
        optional_words=words.optional,
        offset=offset,
        limit=limit,
        filters=_listed_filters(values, entry) + tuple(
            f for f in (radius, areas(entry, values)) if f is not None),
        facets=facets,
        # every value up to 100, for stats of untyped facets; maxValuesPerFacet cuts
        max_facet_values=MAX_FACET_VALUES,
        geo_sort=nearest,
        stats=tuple(name for name in facets if fields.types.get(name) in NUMERIC),
        highlight=bool(highlighted or snippeted) and limit > 0,
        highlight_fields=highlight_fields,
        fields=chosen,
        search_fields=fields.configured_weights,
        exact_total=config.exact_totals,
        disjunctive_facets=False,
        # NeuralSearch; a ranking by distance (aroundLatLng) is no ranking by meaning
        semantic=0.0 if nearest is not None else neural_share(
            config, text, keyword_mode=ap.keyword_mode(values)),
    )
    rule_ask = RuleAsk(enabled=ap.flag(values, "enableRules", True),
                       contexts=frozenset(ap.names(values, "ruleContexts") or ()),
                       page=page, per_page=per_page)
    return Plan(query=query, page=page, hits_per_page=per_page, tags=tags,
                highlighted=highlighted, max_values_per_facet=max_values,
                snippeted=tuple(snippeted.items()), snippet_only=snippet_only,
                ellipsis=ap.text(values, "snippetEllipsisText", DEFAULT_ELLIPSIS),
                rule_ask=rule_ask, geoloc=geoloc, words=words,
                point_order=BY_NAME[config.engine].point_order,
                ranking_info=ap.flag(values, "getRankingInfo", False),
                relevancy_strictness=_strictness(entry, values),
                hidden=ap.excluded(retrieve))


def _strictness(entry: IndexEntry, values: dict[str, Any]) -> int | None:
    """``relevancyStrictness`` (0 to 100), applied on a virtual replica and ignored on other
    handles, as Algolia does (a ``sortBy`` widget keeps sending it after leaving one)."""
    value = ap.integer(values, "relevancyStrictness")
    if value is None:
        return None
    if not 0 <= value <= 100:
        raise InvalidRequest(f"relevancyStrictness: must be an integer from 0 to 100, got "
                             f"{value}")
    return value if entry.replica is not None and entry.replica.virtual else None


def _snippeted(entry: IndexEntry, values: dict[str, Any]) -> dict[str, int]:
    """``attributesToSnippet`` as public name -> words; ``*`` is every searchable
    attribute (an attribute also named keeps its own number)."""
    sizes = snippet_sizes(ap.names(values, "attributesToSnippet") or [])
    every = sizes.pop("*", None)
    if every is not None:
        for name in _searchable(entry):
            sizes.setdefault(name, every)
    return sizes


def _searchable(entry: IndexEntry) -> tuple[str, ...]:
    """Algolia highlights the searchable attributes by default."""
    fields = entry.fields
    configured = [fields.public(w.field) for w in fields.configured_weights]
    texts = [fields.public(name) for name, kind in fields.types.items() if kind == "text"]
    return tuple(dict.fromkeys([*configured, *texts]))


def shape_result(entry: IndexEntry, plan: Plan, result: EngineResult, raw: ap.RawParams,
                 took_ms: int, exact_facet_counts: bool,
                 rules: RuleOutcome | None = None) -> AlgoliaResult:
    fields, per_page = entry.fields, plan.hits_per_page
    pages = 0
    pageable = result.total if result.sorted_total is None else result.sorted_total
    if per_page > 0:
        pages = math.ceil(min(pageable, entry.config.max_result_window) / per_page)
    words = query_words(plan.query.text if rules is None else rules.plan.query)
    promoted = rules.promoted if rules is not None and plan.ranking_info else frozenset()
    hits = [_hit(fields, hit, plan, words, hit.id in promoted)
            for hit in result.hits[:plan.query.limit]]
    # an exact count of every matching record: not when a hybrid search's keyword half left
    # records that match the words out of the fused ones (docs/semantic.md)
    exhaustive_nb_hits = plan.query.exact_total and result.complete_total
    facets = {
        fields.public(name): {
            v.value: v.count
            for v in sorted(found, key=lambda v: (-v.count, v.value))[:plan.max_values_per_facet]
        }
        for name, found in result.facets.items() if name in plan.query.facets
    }
    stats = {
        fields.public(name): found_stats
        for name in plan.query.facets
        for found_stats in [algolia_stats(fields.types.get(name), result.stats.get(name),
                                          result.facets.get(name, []),
                                          plan.query.max_facet_values)]
        if found_stats is not None
    }
    return AlgoliaResult(
        hits=hits,
        nb_hits=result.total,
        nb_pages=pages,
        page=plan.page,
        hits_per_page=per_page,
        facets=facets,
        facets_stats=stats or msgspec.UNSET,
        exhaustive_nb_hits=exhaustive_nb_hits,
        # only an engine that counts every value exactly (not one that samples shards)
        exhaustive_facets_count=exact_facet_counts,
        exhaustive=Exhaustive(nb_hits=exhaustive_nb_hits, facets_count=exact_facet_counts),
        processing_time_ms=took_ms,
        query=plan.query.text,
        params=raw.encoded,
        index=entry.handle,
        rendering_content=rendering_content(entry.config.defaults.facets)
        if rules is None or rules.plan.facet_ordering is None else
        {"facetOrdering": msgspec.to_builtins(rules.plan.facet_ordering)},
        user_data=list(rules.plan.user_data) if rules and rules.plan.user_data
        else msgspec.UNSET,
        applied_rules=[{"objectID": oid} for oid in rules.plan.applied] if rules
        else msgspec.UNSET,
        **_relevant_sort(entry, plan, result),
    )


def _relevant_sort(entry: IndexEntry, plan: Plan, result: EngineResult) -> dict[str, Any]:
    """``nbSortedHits`` and ``appliedRelevancyStrictness`` of a virtual replica's answer
    (what the relevantSort and stats widgets read)."""
    replica = entry.replica
    if replica is None or replica.relevant is None or result.sorted_total is None:
        return {}
    strictness = plan.relevancy_strictness
    return {"nb_sorted_hits": result.sorted_total,
            "applied_relevancy_strictness": replica.relevant.strictness if strictness is None
            else strictness}


def algolia_stats(kind: str | None, engine: FieldStats | None, values: list[FacetValue],
                  asked: int) -> FacetStats | None:
    """The engine's stats when complete; else those of the value counts when they hold every
    value (and agree with the engine's min and max); else the engine's min and max alone
    (avg and sum left out, never guessed)."""
    if engine is not None and engine.avg is not None and engine.sum is not None:
        return FacetStats(min=engine.min, max=engine.max, avg=engine.avg, sum=engine.sum)
    counted = facet_stats(kind, values, asked)
    if engine is None:
        return counted
    # value counts cut short by the engine (Meilisearch's maxValuesPerFacet) miss an extreme
    if counted is not None and (counted.min, counted.max) == (engine.min, engine.max):
        return counted
    return FacetStats(min=engine.min, max=engine.max)


def facet_stats(kind: str | None, values: list[FacetValue], asked: int) -> FacetStats | None:
    """min/max/avg/sum of a numeric facet over the matching records, from its value counts;
    only when the engine gave every value (fewer than asked), so the stats are exact."""
    if kind not in (None, "integer", "float") or not values or len(values) >= asked:
        return None
    numbers: list[tuple[float, int]] = []
    for v in values:
        try:
            number = float(v.value)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        numbers.append((number, v.count))
    total = sum(n * c for n, c in numbers)
    count = sum(c for _, c in numbers)
    return FacetStats(min=min(n for n, _ in numbers), max=max(n for n, _ in numbers),
                      avg=total / count if count else 0.0, sum=total)


# A promoted hit is placed by its rule, not ranked: Algolia's ranking criteria, which the
# specification requires in ``_rankingInfo``, played no part in its place and are 0.
PROMOTED = {"promoted": True, "nbTypos": 0, "firstMatchedWord": 0, "geoDistance": 0,
            "nbExactWords": 0, "userScore": 0}


def _hit(fields: FieldMap, hit: Hit, plan: Plan, words: list[str],
         promoted: bool = False) -> AlgoliaHit:
    document = fields.document(hit.source)
    if plan.hidden:  # neither returned nor highlighted
        document = {k: v for k, v in document.items() if k not in plan.hidden}
    shaped: AlgoliaHit = {**document, "objectID": hit.id}
    highlights = fields.public_keys(hit.highlights)
    results: dict[str, HighlightResult] = {}
    for name in dict.fromkeys([*plan.highlighted, *highlights]):
        if name not in document or name in plan.snippet_only:
            continue
        entry = highlight_result(document[name], highlights.get(name), words, plan.tags)
        if entry is not None:
            results[name] = entry
    shaped["_highlightResult"] = results
    if plan.geoloc is not None and plan.geoloc in hit.source and GEOLOC not in plan.hidden:
        points = stored_points(hit.source[plan.geoloc], plan.point_order)
        if points:
            located = [{"lat": p.lat, "lng": p.lon} for p in points]
            shaped[GEOLOC] = located[0] if len(located) == 1 else located
    snippets: dict[str, SnippetResult] = {}
    for name, size in plan.snippeted:
        if name not in document:
            continue
        snippet = snippet_result(document[name], highlights.get(name), words, plan.tags, size,
                                 plan.ellipsis)
        if snippet is not None:
            snippets[name] = snippet
    if snippets:
        shaped["_snippetResult"] = snippets
    if promoted:
        shaped["_rankingInfo"] = PROMOTED
    return shaped
