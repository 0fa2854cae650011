"""``SearchQuery`` and ``FacetValuesQuery`` to Meilisearch search parameters.

Pure functions; ``parse.py`` reads the answers back.

- Text: ``q`` (left out when blank: a placeholder search matches every document) with
  ``matchingStrategy: frequency``: documents with every word rank first, then Meilisearch
  drops the most common words one by one, so the order of the words does not decide what
  matches (as with an OR query) and the rarest word stays required. Meilisearch has no pure
  any-word mode. The last word always matches as a prefix. With ``all_words`` (Algolia's
  routes): the required words with ``matchingStrategy: all`` (optional words are left out:
  they neither match nor rank); when every word is optional, as above.
- Searched fields: ``attributesToSearchOn`` (configured weights only pick the fields:
  Meilisearch weighs attributes by the index's ``searchableAttributes`` order).
- Disjunctive facets: when a requested facet has a filter of its own, one ``/multi-search``
  carries the main query (every filter; it counts the other facets) and, per such facet, a
  count-only query with every filter but that facet's own.
- Stats: Meilisearch gives ``facetStats`` (min and max only) of the numeric fields in
  ``facets``, so a stats field is requested as a facet, in the query a facet on it would be.
- Pages: ``page``/``hitsPerPage`` (exhaustive ``totalHits``) unless exact totals are off,
  then ``offset``/``limit`` (``estimatedTotalHits``).
- Highlights: ``_formatted`` with private sentinel tags, which ``parse`` turns into
  ``<mark>`` after HTML-escaping the text (Meilisearch does not escape it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from searchport.adapters.meilisearch.filters import expression, sort_rules
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import (
    AllOf,
    FacetValuesQuery,
    Filter,
    NotFilter,
    SearchQuery,
    SortClause,
    TermFilter,
    filter_field,
)

Json = dict[str, Any]

MATCHING_STRATEGY = "frequency"
PRE, POST = "\ue000", "\ue001"  # private-use characters: no text of a document has them
CROP_WORDS = 30  # words of a highlighted value kept around its matches (no "…" added:
# a fragment is document text with only <mark> added, as on the other engines)
RAW_QUERY_DROPPED = frozenset({"indexUid"})  # a raw query only searches the handle's index


def index_path(uid: str, suffix: str = "") -> str:
    return f"/indexes/{quote(uid, safe='')}{suffix}"


@dataclass(frozen=True)
class SearchPlan:
    """The one request a search sends, and how to read its answer."""

    path: str
    body: Json
    own_facets: tuple[str, ...] = ()  # facets counted by the extra queries, in order
    skip: int = 0  # hits to drop from the front of the page (an offset between pages)

    @property
    def multi(self) -> bool:
        return bool(self.own_facets)


def text_params(query: SearchQuery) -> Json:
    params: Json = {}
    required = query.required_words()
    if required is not None:  # every required word matches; optional ones are left out
        params["q"] = " ".join(required)
        params["matchingStrategy"] = "all"
    elif query.text.strip():
        params["q"] = query.text
        params["matchingStrategy"] = MATCHING_STRATEGY
    names = list(dict.fromkeys(fw.field for fw in query.search_fields))
    if names:
        params["attributesToSearchOn"] = names
    return params


def window(query: SearchQuery) -> tuple[Json, int]:
    """The pagination parameters and the hits to skip in the page they fetch."""
    offset, limit = query.offset, query.limit
    if not query.exact_total:
        return {"offset": offset, "limit": limit}, 0
    if limit > 0 and offset % limit == 0:
        return {"page": offset // limit + 1, "hitsPerPage": limit}, 0
    return {"page": 1, "hitsPerPage": offset + limit}, offset  # one page holding the window


def count_only(exact: bool) -> Json:
    return {"hitsPerPage": 0} if exact else {"limit": 0}


def retrieved(fields: tuple[str, ...], primary_key: str) -> list[str]:
    """The chosen fields, plus the primary key (each hit's ``objectID``)."""
    return list(dict.fromkeys((*fields, primary_key)))


def id_filters(query: SearchQuery, primary_key: str) -> list[Filter]:
    """``ids`` and ``excluded_ids`` as filters on the primary key (which Meilisearch filters
    on only when ``filterableAttributes`` lists it: docs/engines.md)."""
    found: list[Filter] = []
    if query.ids is not None:
        found.append(TermFilter(field=primary_key, values=query.ids) if query.ids else
                     AllOf(filters=(TermFilter(field=primary_key, values=("0",)),
                                    NotFilter(field=primary_key, values=("0",)))))
    if query.excluded_ids:
        found.append(NotFilter(field=primary_key, values=query.excluded_ids))
    return found


@dataclass(frozen=True)
class Meaning:
    """How a handle searches by meaning (``semantic``): the index's embedder (the name in
    its ``embedders`` setting), and whether searchport sends the query's vector (a
    ``userProvided`` embedder) or Meilisearch embeds the text itself."""

    embedder: str
    sends_vector: bool


def hybrid_params(query: SearchQuery, meaning: Meaning | None) -> Json:
    """``hybrid`` (and ``vector``) of a search that asks for meaning: Meilisearch runs its
    keyword and semantic searches and merges them by ranking score, each weighted by its
    share (``semanticRatio``)."""
    if meaning is None or query.semantic <= 0:
        return {}
    if query.sort or query.geo_sort is not None:
        raise InvalidRequest("A sorted search ranks by its sort: leave out semantic (or "
                             "the sort) to rank by meaning")
    params: Json = {"hybrid": {"embedder": meaning.embedder,
                               "semanticRatio": query.semantic}}
    if meaning.sends_vector:
        if query.vector is None:
            raise InvalidRequest("A search by meaning needs the query's vector")
        params["vector"] = list(query.vector)
    return params


def search_plan(query: SearchQuery, uid: str, primary_key: str,
                dates: frozenset[str] = frozenset(),
                ranking: tuple[SortClause, ...] = (),
                meaning: Meaning | None = None) -> SearchPlan:
    """``dates``: the fields the config types ``date`` (see ``filters``); ``ranking``: the
    handle's custom ranking, sent as the ``sort`` of a query without one of its own
    (Meilisearch applies it where the index's ``rankingRules`` hold ``sort``);
    ``meaning``: the handle's embedder, for a query that asks for meaning."""
    by_field = [(filter_field(f), expression(f, dates)) for f in query.filters]
    by_field += [(None, expression(f)) for f in id_filters(query, primary_key)]
    hybrid = hybrid_params(query, meaning)
    params = {**text_params(query), **hybrid}
    if by_field:
        params["filter"] = [text for _, text in by_field]
    faceted = tuple(dict.fromkeys([*query.facets, *query.stats]))
    if faceted:
        params["facets"] = list(faceted)
    sort = sort_rules(query.sort or ranking, query.geo_sort)
    if sort:
        params["sort"] = sort
    page, skip = window(query)
    params.update(page)
    if query.fields is not None:
        params["attributesToRetrieve"] = retrieved(query.fields, primary_key)
    if query.highlight:
        names = list(query.highlight_fields) or ["*"]
        params.update(attributesToHighlight=names, highlightPreTag=PRE,
                      highlightPostTag=POST, attributesToCrop=names, cropLength=CROP_WORDS,
                      cropMarker="")
    params["showRankingScore"] = True

    filtered = {field for field, _ in by_field} if query.disjunctive_facets else set()
    own = tuple(f for f in faceted if f in filtered)
    if not own:
        return SearchPlan(path=index_path(uid, "/search"), body=params, skip=skip)
    shared = [f for f in faceted if f not in own]
    main = {k: v for k, v in params.items() if k != "facets"}
    if shared:
        main["facets"] = shared
    queries = [{"indexUid": uid, **main}]
    for facet in own:
        # a hybrid search's candidates are every record its semantic search ranked, that
        # is every record passing the filters: counted by a placeholder search (the same
        # query with hybrid would skip its semantic half when asked for no hit)
        counts = {} if hybrid else text_params(query)
        others = [text for field, text in by_field if field != facet]
        if others:
            counts["filter"] = others
        counts["facets"] = [facet]
        counts.update(count_only(query.exact_total))
        queries.append({"indexUid": uid, **counts})
    return SearchPlan(path="/multi-search", body={"queries": queries}, own_facets=own,
                      skip=skip)


# ---------------------------------------------------------------- facet values


def _filters(filters: tuple[Filter, ...], dates: frozenset[str]) -> Json:
    return {"filter": [expression(f, dates) for f in filters]} if filters else {}


def distribution_body(query: FacetValuesQuery, dates: frozenset[str] = frozenset()) -> Json:
    """A count-only search whose ``facetDistribution`` lists the field's values (up to the
    index's ``faceting.maxValuesPerFacet``), numbers and booleans included."""
    return {**_filters(query.filters, dates), "facets": [query.field], **count_only(True)}


def facet_search_body(query: FacetValuesQuery, dates: frozenset[str] = frozenset()) -> Json:
    """Meilisearch's facet search: string values whose words start like ``text`` (typos
    tolerated), so values beyond ``maxValuesPerFacet`` are found too."""
    return {"facetName": query.field, "facetQuery": query.text, **_filters(query.filters, dates),
            "exhaustiveFacetCount": True}


def raw_body(body: Json) -> Json:
    return {k: v for k, v in body.items() if k not in RAW_QUERY_DROPPED}
