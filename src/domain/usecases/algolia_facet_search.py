"""AlgoliaFacetSearch: Algolia's search for facet values (``facetHits``)."""

from __future__ import annotations

import time

from searchport.domain.algolia import params as ap
from searchport.domain.algolia.highlight import DEFAULT_POST, DEFAULT_PRE, Tags
from searchport.domain.algolia.query import MAX_FACET_VALUES, algolia_filters
from searchport.domain.algolia.requests import OUTER_KEYS, AlgoliaQuery
from searchport.domain.algolia.responses import FacetHit, FacetHitsResult
from searchport.domain.catalog import Catalog
from searchport.domain.params import clamp
from searchport.domain.query import FacetValuesQuery, SearchQuery
from searchport.domain.results import FacetValue
from searchport.domain.shaping import order_facet_values


class AlgoliaFacetSearch:
    """Values of one facet containing ``facetQuery``, counted under the query's filters.

    Without ``query`` the engine's facet-value search counts every document the filters
    select (exhaustive). With a ``query`` the values come from the top
    ``MAX_FACET_VALUES`` facet values of that search, so ``exhaustiveFacetsCount`` is false.
    """

    def __init__(self, *, catalog: Catalog) -> None:
        self._catalog = catalog

    async def __call__(self, request: AlgoliaQuery) -> FacetHitsResult:
        entry = self._catalog.get_entry(request.handle)
        raw = ap.collect(request.request, OUTER_KEYS)
        values = raw.values
        facet = request.facet or ap.text(values, "facetName")
        field = entry.fields.real(facet)
        needle = ap.text(values, "facetQuery").strip()
        limit = clamp(ap.integer(values, "maxFacetHits"), 10, 1, MAX_FACET_VALUES)
        tags = Tags(ap.text(values, "highlightPreTag", DEFAULT_PRE),
                    ap.text(values, "highlightPostTag", DEFAULT_POST))
        filters = algolia_filters(values, entry)
        text = ap.text(values, "query")
        started = time.perf_counter()
        found: list[FacetValue]
        if text.strip():
            result = await entry.engine.search(SearchQuery(
                text=text, limit=0, filters=filters, facets=(field,),
                max_facet_values=MAX_FACET_VALUES, search_fields=entry.fields.configured_weights,
                exact_total=entry.config.exact_totals, disjunctive_facets=False))
            every = result.facets.get(field, [])
            found = [v for v in every if needle.casefold() in v.value.casefold()]
            exhaustive = len(every) < MAX_FACET_VALUES
        else:
            found = await entry.engine.facet_values(
                FacetValuesQuery(field=field, text=needle, limit=limit, filters=filters))
            exhaustive = True
        took = round((time.perf_counter() - started) * 1000)
        return FacetHitsResult(
            facet_hits=[FacetHit(value=v.value, highlighted=_highlighted(v.value, needle, tags),
                                 count=v.count) for v in order_facet_values(found, limit)],
            exhaustive_facets_count=exhaustive and entry.engine.name == "tantivy",
            processing_time_ms=took,
        )


def _highlighted(value: str, needle: str, tags: Tags) -> str:
    at = value.casefold().find(needle.casefold()) if needle else -1
    if at < 0 or len(value.casefold()) != len(value):  # casefold changed the length: no marks
        return tags.plain(value)
    end = at + len(needle)
    return (tags.plain(value[:at]) + tags.pre + tags.plain(value[at:end]) + tags.post
            + tags.plain(value[end:]))
