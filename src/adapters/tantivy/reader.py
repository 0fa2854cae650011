"""An opened index generation: the searcher and the few primitives every request uses."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import tantivy

from searchport.adapters.tantivy.documents import document_id
from searchport.adapters.tantivy.filters import FilterTranslator, any_of
from searchport.adapters.tantivy.matched_terms import MatchedTerms
from searchport.adapters.tantivy.ranked_facets import RankedValues
from searchport.adapters.tantivy.schema import (
    ID_FIELD,
    SEQ_FIELD,
    SOURCE_FIELD,
    IndexLayout,
    lat_field,
    lon_field,
    register_analyzers,
)
from searchport.adapters.tantivy.text_query import TextQueryBuilder
from searchport.adapters.tantivy.typo_words import Vocabulary
from searchport.adapters.tantivy.vectors import RecordVectors
from searchport.domain.errors import InvalidRequest
from searchport.domain.results import Hit

_decode_row = msgspec.json.Decoder(dict[str, Any]).decode
Scored = tuple[Any, tantivy.DocAddress]  # (score or sort value, address)
ROWS_CACHED = 4_096  # stored rows kept in memory (bytes): the documents shown most


class OpenIndex:
    def __init__(self, handle: str, path: Path, layout: IndexLayout,
                 stored_fields: Iterable[str] = (), vectors: RecordVectors | None = None
                 ) -> None:
        """``stored_fields``: the top-level keys of the rows indexed (``IndexMeta``);
        ``vectors``: the records' vectors, when the handle searches by meaning."""
        self.handle = handle
        self.vectors = vectors
        self.layout = layout
        self.stored_fields = frozenset(stored_fields)
        self.index = tantivy.Index.open(str(path))
        register_analyzers(self.index)
        self.schema = self.index.schema
        self.searcher = self.index.searcher()
        self.filters = FilterTranslator(layout, self.schema, self.points_in)
        self._distinct: dict[str, float] = {}
        self.ranked = RankedValues(self.searcher)  # keyword facets counted by rank
        # (segment, document) -> stored row; a generation never changes, so neither do they
        self._rows: dict[tuple[int, int], bytes] = {}
        # the words behind the one-typo ways (none to read when typos are off)
        self.vocabulary = Vocabulary(self.searcher, self.schema,
                                     layout.of_type("text") if layout.typos.enabled else [])
        self.text = TextQueryBuilder(layout, self.schema, self.vocabulary,
                                     MatchedTerms(self.searcher, self.schema, self.row),
                                     self.searcher.doc_freq)

    @property
    def num_docs(self) -> int:
        return self.searcher.num_docs

    def probe(self) -> None:
        """Fail unless the index can be searched."""
        self.count(tantivy.Query.all_query())

    def count(self, query: tantivy.Query) -> int:
        # limit=0 panics inside tantivy: count with the smallest real page instead.
        return _total(self.searcher.search(query, limit=1, count=True))

    def top(self, query: tantivy.Query, limit: int, offset: int = 0,
            order_by: str | None = None, descending: bool = True) -> tuple[int, list[Scored]]:
        """(total matches, one page of matches); ``limit`` 0 counts only."""
        if limit <= 0:
            return self.count(query), []
        order = tantivy.Order.Desc if descending else tantivy.Order.Asc
        result = self.searcher.search(query, limit=limit, offset=offset, count=True,
                                      order_by_field=order_by, order=order)
        return _total(result), list(result.hits)

    def distinct_values(self, field: str) -> float:
        """Roughly how many distinct values a fast field holds (HyperLogLog), cached."""
        found = self._distinct.get(field)
        if found is None:
            found = self._distinct[field] = self.searcher.cardinality(
                tantivy.Query.all_query(), field)
        return found

    def aggregate(self, query: tantivy.Query, aggregations: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.searcher.aggregate(query, aggregations)
        except ValueError as exc:
            reason = str(exc).lower()
            # a histogram interval far too small: tantivy stops at its bucket or memory limit
            if "bucket limit" in reason or "memory limit" in reason:
                raise InvalidRequest(
                    "The request asks for too many buckets: use a larger histogram interval "
                    "or a smaller geoGrid precision"
                ) from None
            raise

    def row(self, address: tantivy.DocAddress) -> dict[str, Any]:
        return _decode_row(self.raw_row(address))

    def raw_row(self, address: tantivy.DocAddress) -> bytes:
        key = (address.segment_ord, address.doc)
        found = self._rows.get(key)
        if found is None:
            source = self.searcher.doc(address).get_first(SOURCE_FIELD)
            found = source if isinstance(source, bytes) else b"{}"
            if len(self._rows) >= ROWS_CACHED:
                self._rows.clear()
            self._rows[key] = found
        return found

    def addresses_by_seq(self, seqs: Sequence[int]) -> dict[int, tantivy.DocAddress]:
        if not seqs:
            return {}
        # A disjunction of term queries: for the few dozen documents named here, faster than
        # term_set_query.
        query = any_of([tantivy.Query.term_query(self.schema, SEQ_FIELD, s) for s in seqs])
        _, hits = self.top(query, limit=len(seqs))
        addresses = [address for _, address in hits]
        found = self.searcher.fast_field_values(SEQ_FIELD, addresses)
        return {int(seq): address for seq, address in zip(found, addresses, strict=True)
                if seq is not None}

    def documents(self, addresses: Sequence[tantivy.DocAddress]) -> tantivy.Query:
        """A query matching exactly these documents (by their ``SEQ_FIELD``)."""
        seqs = self.searcher.fast_field_values(SEQ_FIELD, list(addresses))
        return any_of([tantivy.Query.term_query(self.schema, SEQ_FIELD, s) for s in seqs
                       if s is not None])

    def points_in(self, query: tantivy.Query, field: str) -> list[tuple[int, float, float]]:
        """Every document ``query`` matches, with its point in the geo_point ``field``:
        ``(seq, lat, lon)``."""
        total = self.count(query)
        if total == 0:
            return []
        addresses = [address for _, address in self.searcher.search(query, limit=total).hits]
        seqs = self.searcher.fast_field_values(SEQ_FIELD, addresses)
        lats = self.searcher.fast_field_values(lat_field(field), addresses)
        lons = self.searcher.fast_field_values(lon_field(field), addresses)
        return [(int(seq), float(lat), float(lon))
                for seq, lat, lon in zip(seqs, lats, lons, strict=True)
                if seq is not None and lat is not None and lon is not None]

    def address_by_id(self, doc_id: str) -> tantivy.DocAddress | None:
        query = tantivy.Query.term_query(self.schema, ID_FIELD, doc_id)
        _, hits = self.top(query, limit=1)
        return hits[0][1] if hits else None

    def check_returned(self, fields: tuple[str, ...] | None) -> None:
        """A 400 naming a field to return that no row has and the config does not type
        (``objectID`` and names starting with "_" are hit metadata, always returned)."""
        for name in fields or ():
            if (name not in self.stored_fields and self.layout.spec(name) is None
                    and name != "objectID" and not name.startswith("_")):
                raise InvalidRequest(f'Cannot return "{name}": it is not a field of this index')

    def hit(self, row: dict[str, Any], score: float | None = None,
            fields: tuple[str, ...] | None = None) -> Hit:
        source = row if fields is None else {k: row[k] for k in fields if k in row}
        return Hit(id=document_id(row, self.layout.id_field), index=self.handle,
                   score=score, source=source)


def _total(result: tantivy.SearchResult) -> int:
    count: int | None = getattr(result, "count", None)  # missing from tantivy's stub
    return count or 0
