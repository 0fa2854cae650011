"""A hybrid search on Typesense: words and meaning at once (docs/semantic.md).

Two searches in one ``multi_search``, both with every filter (and ``hidden_hits``): the
keyword search as ``/search`` sends it (its best ``WINDOW``), and the nearest records by
``vector_query`` on the handle's ``semantic.field`` (its best ``WINDOW``), fused here by
reciprocal rank fusion with the query's share of meaning and the handle's similarity
floor (``domain/fusion.py``), as on the embedded engine.

- With searchport's embedder (``builtin``, ``openai``) the query's vector is sent:
  ``q: "*"``, ``vector_query: "<field>:([v1,...], k: N)"``. Typesense 0.24 answers a
  ``vector_query`` on a wildcard search only ("Vector query is supported only on wildcard
  (q=*) searches"), hence the two searches; Typesense 0.25+ could fuse them itself
  (``alpha``), but by its own formula, so searchport fuses on every version.
- With ``embedder: engine`` the field is one Typesense embeds itself (``embed``, 0.25+):
  the meaning half sends the text, ``q: <text>, query_by: <field>``, with
  ``vector_query: "<field>:([], k: N)"`` bounding it to N records.

The fused records are the hits; ``total`` counts them, and facets and stats describe
exactly them (a third search, on their ids). A sort is refused, as on the embedded engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from searchport.adapters.network.answers import UnreadableAnswer, as_list, mapping
from searchport.adapters.typesense.filters import number
from searchport.adapters.typesense.schema import Schema
from searchport.adapters.typesense.translate import MAX_PER_PAGE, Json
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import SearchQuery

WINDOW = 100  # records each half brings to the fusion (more when the page ends further)
# the keys of the keyword search the meaning half keeps: which records, which fields
SHARED_KEYS = ("collection", "filter_by", "hidden_hits", "include_fields", "exclude_fields")


@dataclass(frozen=True)
class Halves:
    window: int
    keyword: SearchQuery | None  # None: meaning only (semantic 1)


def halves(query: SearchQuery) -> Halves:
    """The window each half brings, and the keyword half's query (``search_plan`` turns it
    into its search). Refuses what a hybrid search cannot answer."""
    if query.sort or query.geo_sort is not None:
        raise InvalidRequest("A sorted search ranks by its sort: leave out semantic (or "
                             "the sort) to rank by meaning")
    window = max(WINDOW, query.offset + query.limit)
    if window > MAX_PER_PAGE:
        raise InvalidRequest(
            f"A search by meaning on the typesense engine reaches its hit {MAX_PER_PAGE} at "
            f"most: hits {query.offset + 1} to {query.offset + query.limit} were asked")
    keyword = None if query.semantic >= 1 else msgspec.structs.replace(
        query, offset=0, limit=window, facets=(), stats=(), semantic=0.0, vector=None)
    return Halves(window=window, keyword=keyword)


def meaning_search(query: SearchQuery, schema: Schema, keyword: Json, field: str,
                   engine_embeds: bool, window: int) -> Json:
    """The search of the records nearest in meaning; ``keyword``: the keyword half's
    search, whose collection, filters and returned fields it keeps."""
    name = schema.vector_field(field, engine_embeds).name
    search: Json = {k: keyword[k] for k in SHARED_KEYS if k in keyword}
    search.update(page=1, per_page=window)
    if engine_embeds and query.vector is None:  # with one (a record's): as any vector
        search.update(q=query.text, query_by=name, prefix="false",
                      vector_query=f"{name}:([], k: {window})")
        return search
    if query.vector is None:
        raise InvalidRequest("A search by meaning needs the query's vector")
    values = ",".join(number(float(v)) for v in query.vector)
    search.update(q="*", vector_query=f"{name}:([{values}], k: {window})")
    return search


def cosine(raw: Any) -> float:
    """The cosine of a hit's vector with the query's: Typesense answers the cosine distance
    of a ``vector_query`` hit, ``1 - cosine``, as its ``vector_distance``."""
    distance = raw.get("vector_distance") if isinstance(raw, dict) else None
    return 1 - float(distance) if isinstance(distance, int | float) else -1.0


def ranked(answer: Any) -> list[tuple[str, Any]]:
    """A search's hits, in its order, each with its record's id; an answer of another shape
    raises ``UnreadableAnswer`` (a 502, as every unreadable answer)."""
    found = []
    for raw in as_list(mapping(answer, "result").get("hits", []), "hits"):
        document = mapping(mapping(raw, "hit").get("document"), "hit.document")
        if "id" not in document:
            raise UnreadableAnswer("a hit has no id")
        found.append((str(document["id"]), raw))
    return found
