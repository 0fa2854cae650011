"""One page of matches in the requested order.

Every sortable field has one number per document to sort by (``schema.sortable_column``:
a keyword's rank, a date's Unix time, a number itself; an array sorts by its smallest
value, in both directions). Relevance and one-field sorts are tantivy's own top-N
collectors, which put documents without the field last either way. Several keys, or
``_score`` ascending, are sorted here from those numbers for every match, which is
bounded to ``MULTI_KEY_SORT_LIMIT`` matches.
"""

from __future__ import annotations

import heapq
from typing import Any

import tantivy

from searchport.adapters.tantivy.filters import field_spec
from searchport.adapters.tantivy.ranking import fetched, ranked_page
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.schema import SORTABLE, sortable_column
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import SortClause

MULTI_KEY_SORT_LIMIT = 100_000
SCORE = "_score"


def sort_columns(ix: OpenIndex, sort: tuple[SortClause, ...]) -> list[str]:
    """The column each clause reads (``_score`` for relevance), or a 400 naming the field."""
    columns = []
    for clause in sort:
        if clause.field == SCORE:
            columns.append(SCORE)
            continue
        spec = field_spec(ix.layout, clause.field, "sort by")
        if spec.type not in SORTABLE:
            raise InvalidRequest(
                f'Cannot sort by "{clause.field}": it is a {spec.type} field; sort by a '
                f"keyword, number, boolean or date field"
            )
        columns.append(sortable_column(spec))
    return columns


def sorted_page(ix: OpenIndex, query: tantivy.Query, sort: tuple[SortClause, ...],
                offset: int, limit: int, matching: tantivy.Query | None = None,
                first: tuple[tantivy.Query, float] | None = None
                ) -> tuple[int | None, list[tuple[float | None, Any]], list[Any] | None]:
    """(total, page, the address of every match when the search saw them all; see
    ``ranking.fetched``). ``matching``: the same documents as ``query``, unscored and cheaper,
    for sorts by fields. ``first``: a query to try first for a relevance sort, and the tier
    from which its page is ``query``'s (``TextMatch.exact``); the total is ``None`` when
    that page is taken (the caller counts ``query``'s matches)."""
    columns = sort_columns(ix, sort)
    if not sort or (columns == [SCORE] and sort[0].order == "desc"):
        if first is not None and limit > 0:
            page = _page_above(ix, *first, offset, limit)
            if page is not None:
                return None, page, None
        if ix.layout.ranking:  # relevance, then the handle's custom ranking
            return ranked_page(ix.searcher, query, offset, limit)
        if limit <= 0:
            return ix.count(query), [], None
        total, hits = ix.top(query, fetched(offset + limit))
        every = [address for _, address in hits] if len(hits) >= total else None
        return total, hits[offset:offset + limit], every
    if len(sort) == 1 and columns[0] != SCORE:
        total, hits = ix.top(query if matching is None else matching, limit, offset,
                             order_by=columns[0], descending=sort[0].order == "desc")
        return total, [(None, address) for _, address in hits], None
    total, page = _sorted_here(ix, query, sort, columns, offset, limit)
    return total, page, None


def _page_above(ix: OpenIndex, query: tantivy.Query, floor: float, offset: int, limit: int
                ) -> list[tuple[float | None, Any]] | None:
    """The page of ``query`` when it is full and every hit's tier reaches ``floor``."""
    if ix.layout.ranking:
        _, page, _ = ranked_page(ix.searcher, query, offset, limit)
    else:
        _, page = ix.top(query, limit, offset)
    if len(page) < limit or any(tier is None or tier < floor - 0.5 for tier, _ in page):
        return None
    return page


def _sorted_here(ix: OpenIndex, query: tantivy.Query, sort: tuple[SortClause, ...],
                 columns: list[str], offset: int, limit: int
                 ) -> tuple[int, list[tuple[float | None, Any]]]:
    total = ix.count(query)
    if total > MULTI_KEY_SORT_LIMIT:
        raise InvalidRequest(
            f"Sorting by several keys is limited to {MULTI_KEY_SORT_LIMIT} matches and this "
            f"query has {total}: add a filter or sort by one field"
        )
    if total == 0 or limit <= 0:
        return total, []
    _, scored = ix.top(query, limit=total)
    addresses = [address for _, address in scored]
    scores = [float(score) for score, _ in scored]
    keys: list[list[tuple[int, Any]]] = [[] for _ in scored]
    for clause, column in zip(sort, columns, strict=True):
        found = scores if column == SCORE else ix.searcher.fast_field_values(column, addresses)
        descending = clause.order == "desc"
        for key, value in zip(keys, found, strict=True):
            # Missing values last in either direction: the flag decides before the value.
            key.append((1, 0) if value is None else (0, -value if descending else value))
    # Ties keep relevance order; nsmallest(n) equals sorted()[:n], stable included.
    best = heapq.nsmallest(offset + limit, range(len(keys)), key=keys.__getitem__)
    page = best[offset:]
    score_wanted = SCORE in columns
    return total, [(scores[i] if score_wanted else None, addresses[i]) for i in page]
