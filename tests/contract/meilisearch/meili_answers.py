"""Meilisearch answers, in the shapes of the Meilisearch API reference (search, multi-search,
facet search, indexes, documents, settings, errors), built from small arguments."""

from __future__ import annotations

import math
from typing import Any

INDEX = "books"
DATE = "2024-05-14T09:31:12.512345Z"

Json = dict[str, Any]


def index(uid: str = INDEX, primary_key: str | None = "id") -> Json:
    """``GET /indexes/{uid}``."""
    return {"uid": uid, "createdAt": DATE, "updatedAt": DATE, "primaryKey": primary_key}


def hit(doc: Json, *, score: float | None = None, formatted: Json | None = None) -> Json:
    """A search hit: the document plus ``_formatted`` and ``_rankingScore`` when asked."""
    out = dict(doc)
    if formatted is not None:
        out["_formatted"] = formatted
    if score is not None:
        out["_rankingScore"] = score
    return out


def search(hits: list[Json] | None = None, *, total: int | None = None, page: int = 1,
           hits_per_page: int = 20, query: str = "", facets: Json | None = None,
           stats: Json | None = None) -> Json:
    """An exhaustive (``page``/``hitsPerPage``) search response."""
    hits = hits or []
    total = len(hits) if total is None else total
    out: Json = {
        "hits": hits,
        "query": query,
        "processingTimeMs": 1,
        "hitsPerPage": hits_per_page,
        "page": page,
        "totalPages": math.ceil(total / hits_per_page) if hits_per_page else 0,
        "totalHits": total,
    }
    if facets is not None:
        out["facetDistribution"] = facets
        out["facetStats"] = stats or {}
    return out


def estimated(hits: list[Json] | None = None, *, estimated_total: int = 0, offset: int = 0,
              limit: int = 20, query: str = "", facets: Json | None = None) -> Json:
    """An ``offset``/``limit`` search response: ``estimatedTotalHits``."""
    out: Json = {"hits": hits or [], "query": query, "processingTimeMs": 1, "limit": limit,
                 "offset": offset, "estimatedTotalHits": estimated_total}
    if facets is not None:
        out["facetDistribution"] = facets
        out["facetStats"] = {}
    return out


def multi(*results: Json, uid: str = INDEX) -> Json:
    """``POST /multi-search`` (not federated): one result per query, in order."""
    return {"results": [{"indexUid": uid, **r} for r in results]}


def facet_search(values: list[tuple[str, int]], facet_query: str | None = None) -> Json:
    """``POST /indexes/{uid}/facet-search``."""
    return {"facetHits": [{"value": v, "count": c} for v, c in values],
            "facetQuery": facet_query, "processingTimeMs": 0}


def error(message: str, code: str, kind: str = "invalid_request") -> Json:
    """Every Meilisearch error body: ``{message, code, type, link}``."""
    return {"message": message, "code": code, "type": kind,
            "link": f"https://docs.meilisearch.com/errors#{code}"}


def settings() -> Json:
    """``GET /indexes/{uid}/settings`` of a books index."""
    return {
        "displayedAttributes": ["*"],
        "searchableAttributes": ["title", "author"],
        "filterableAttributes": ["genre", "tags", "year", "price", "available"],
        "sortableAttributes": ["year", "price", "title"],
        "rankingRules": ["words", "typo", "proximity", "attribute", "sort", "exactness"],
        "stopWords": [],
        "nonSeparatorTokens": [],
        "separatorTokens": [],
        "dictionary": [],
        "synonyms": {},
        "distinctAttribute": None,
        "proximityPrecision": "byWord",
        "typoTolerance": {
            "enabled": True,
            "minWordSizeForTypos": {"oneTypo": 5, "twoTypos": 9},
            "disableOnWords": [],
            "disableOnAttributes": [],
        },
        "faceting": {"maxValuesPerFacet": 100, "sortFacetValuesBy": {"*": "alpha"}},
        "pagination": {"maxTotalHits": 1000},
        "searchCutoffMs": None,
        "localizedAttributes": None,
        "facetSearch": True,
        "prefixSearch": "indexingTime",
    }


# ---------------------------------------------------------------- documents

CASTLE = {"id": "b01", "title": "The Castle of Otranto", "author": "Horace Walpole",
          "genre": "fiction", "tags": ["award", "night"], "year": 1925, "price": 10.0,
          "available": True}
RIVER = {"id": "b07", "title": "River of Stars", "author": "Kate <K> Smith",
         "genre": "travel", "tags": ["city", "night"], "year": 1950, "price": 10.0,
         "available": False}
NUMBERED = {"id": 46, "title": "Gardens of the Moon", "author": "Steven Erikson",
            "genre": "history", "year": 2004}
