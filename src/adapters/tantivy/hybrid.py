"""A hybrid search on the embedded engine: words and meaning at once (docs/semantic.md).

Two rankings of the records that pass every filter: by words (the keyword search as
``/search`` ranks it, its best ``WINDOW``) and by meaning (the records whose vectors are
nearest the query's, exactly, its best ``WINDOW``, each with its cosine), fused by
reciprocal rank fusion with the query's share of meaning and the handle's similarity floor
(``domain/fusion.py``). The fused records are the hits, in that order; ``total`` counts
them (``complete_total`` when neither half was cut short by its window), and facets,
stats, histograms and the geo grid describe exactly them (a facet's own filter was applied
to both halves, so it narrows its counts too). A sort is refused: a sorted search ranks by
its sort, not by relevance.
"""

from __future__ import annotations

from typing import Any

import msgspec

from searchport.adapters.tantivy.filters import must
from searchport.adapters.tantivy.highlight import highlight_specs, highlighter
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.schema import SEQ_FIELD
from searchport.adapters.tantivy.search import filter_queries, keyword_rows, run_search
from searchport.domain.errors import EngineUnavailable, InvalidRequest
from searchport.domain.fusion import meaning_complete, reciprocal_rank_fusion, words_complete
from searchport.domain.query import SearchQuery
from searchport.domain.results import EngineResult, Hit

WINDOW = 100  # records each half brings to the fusion (more when the page ends further)


def run_hybrid(ix: OpenIndex, query: SearchQuery, floor: float) -> EngineResult:
    vectors = ix.vectors
    if vectors is None or query.vector is None:
        raise EngineUnavailable(f"the vectors of {ix.handle} are not built")
    if query.sort or query.geo_sort is not None:
        raise InvalidRequest("A sorted search ranks by its sort: leave out semantic (or "
                             "the sort) to rank by meaning")
    share = query.semantic
    window = max(WINDOW, query.offset + query.limit)
    # the keyword ranking's rows only: its records are never shown, and reading its
    # window of them is a noticeable share of a hybrid search's work
    keyword = keyword_rows(ix, msgspec.structs.replace(
        query, offset=0, limit=window if share < 1 else 0, facets=(), stats=(),
        histograms=(), highlight=False, fields=None, semantic=0.0, vector=None))
    live = vectors.live
    by_words = [seq for seq in keyword.seqs if seq < live.shape[0] and live[seq]]
    by_meaning: list[tuple[int, float]] = []
    if share > 0:  # one record more than the window: whether any beyond it would rank
        scores = vectors.similarities(query.vector)
        by_meaning = vectors.nearest(scores, window + 1, _allowed(ix, query))
    complete = ((share >= 1 or words_complete(len(keyword.seqs), window, keyword.total))
                and meaning_complete([c for _, c in by_meaning], window + 1, share, floor))
    by_meaning = by_meaning[:window]
    fused = reciprocal_rank_fusion(by_words, by_meaning, share, floor)
    hits = _page(ix, query, fused[query.offset:query.offset + query.limit])
    wanted = query.facets or query.stats or query.histograms or query.geo_grid is not None
    extras = run_search(ix, msgspec.structs.replace(
        query, text="", offset=0, limit=0, highlight=False, suggest_field=None,
        ids=tuple(str(vectors.meta.ids[seq]) for seq, _ in fused), semantic=0.0,
        vector=None)) if wanted and fused else None
    return EngineResult(
        hits=hits, total=len(fused),
        complete_total=complete,
        facets=extras.facets if extras else {name: [] for name in query.facets},
        stats=extras.stats if extras else {},
        histograms=extras.histograms if extras else {h.field: [] for h in query.histograms},
        geo_clusters=(extras.geo_clusters if extras else []) if query.geo_grid else None,
        suggestions=keyword.suggestions)


def _allowed(ix: OpenIndex, query: SearchQuery) -> Any:
    """The rows every filter of the query lets through (a boolean mask by seq), or None
    when nothing filters."""
    filters = filter_queries(ix, query)
    if not filters or ix.vectors is None:
        return None
    import numpy as np

    scope = must(filters)
    total = ix.count(scope)
    mask = np.zeros(ix.vectors.live.shape[0], dtype=bool)
    if total:
        addresses = [address for _, address in ix.searcher.search(scope, limit=total).hits]
        seqs = [int(s) for s in ix.searcher.fast_field_values(SEQ_FIELD, addresses)
                if s is not None and 0 <= s < mask.shape[0]]
        mask[seqs] = True
    return mask


def _page(ix: OpenIndex, query: SearchQuery, page: list[tuple[int, float]]) -> list[Hit]:
    addresses = ix.addresses_by_seq([seq for seq, _ in page])
    match = None
    if query.highlight and query.text.strip():
        match = ix.text.build(query.text, query.search_fields, query.prefix_last_word,
                              query.required_words())
    marker = (highlighter(match, highlight_specs(ix.layout, query.highlight_fields, match))
              if match is not None else None)
    hits = []
    for seq, score in page:
        address = addresses.get(seq)
        if address is None:
            continue
        row = ix.row(address)
        hit = ix.hit(row, score, query.fields)
        if marker is not None:
            hit.highlights = marker.highlight(row, (address.segment_ord, address.doc))
        hits.append(hit)
    return hits
