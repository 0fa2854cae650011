"""A scripted Meilisearch index that searches by meaning: ``POST /indexes/{uid}/search`` and
``POST /multi-search`` answered from documents held here, each with its vectors under
``_vectors.<embedder>``, as Meilisearch's hybrid search answers them (API reference:
search, ``hybrid`` and ``vector``; milli's ``search/hybrid.rs`` for the merge):

- ``hybrid`` is ``{embedder, semanticRatio}`` (an unknown key: ``invalid_search_hybrid_query``;
  an embedder the index does not have: ``invalid_search_embedder``; a ratio outside 0..1:
  ``invalid_search_semantic_ratio``). A ``userProvided`` embedder needs ``vector``
  (``vector_embedding_error`` without it), of its ``dimensions``
  (``invalid_search_vector``); any other embedder embeds ``q`` itself (``embed``).
- The keyword search: with ``matchingStrategy: frequency`` a document matches when it holds
  some word of ``q`` in a searchable attribute; its ranking score is the share of the
  query's words it holds (a simplification of Meilisearch's ranking rules, in 0..1). The
  semantic search ranks every document passing the filters by ``(1 + cosine) / 2`` (the
  similarity of a cosine distance, as Meilisearch scores it).
- ``semanticRatio`` 0 is the keyword search, 1 the semantic one; in between both run, each
  score is weighted (``1 - ratio`` for the keyword one, ``ratio`` for the semantic one) and
  the two lists are merged by weighted score, a document kept at its first place; the
  semantic search is skipped when the keyword results fill the page with scores that
  stay above 0.45 once weighted ("good enough"). ``totalHits`` and ``facetDistribution``
  count the candidates of both searches (the semantic one's: every filtered document);
  ``semanticHitCount`` counts the hits that came from the semantic search.
- ``filter`` expressions are read by ``filter_grammar`` (term filters, ``NOT``, ``AND``,
  ``OR``; strings compared ignoring case).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from searchport.domain.query import AllOf, AnyOf, Filter, Negated, NotFilter, TermFilter
from tests.contract.meilisearch import meili_answers as ma
from tests.contract.meilisearch.filter_grammar import read

Json = dict[str, Any]
GOOD_ENOUGH = 0.45  # milli's results_good_enough
HYBRID_KEYS = frozenset({"embedder", "semanticRatio"})


def words(text: str) -> list[str]:
    return [w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if w]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


class Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class VectorIndex:
    """One index (``uid``) of ``documents`` (primary key ``id``), searchable over
    ``searchable`` attributes, with ``embedders`` (name -> ``{"source": ..., "dimensions":
    ...}``); ``embed``: how an embedder that is not ``userProvided`` embeds a text. Every
    search body it answered is kept (``bodies``)."""

    def __init__(self, documents: list[Json], *, searchable: Sequence[str],
                 embedders: dict[str, Json], uid: str = ma.INDEX,
                 embed: Callable[[str], list[float]] | None = None) -> None:
        self.documents = documents
        self.searchable = tuple(searchable)
        self.embedders = embedders
        self.uid = uid
        self.embed = embed
        self.bodies: list[Json] = []

    # ------------------------------------------------------------ routes

    def search(self, request: httpx.Request) -> httpx.Response:
        try:
            return _json(200, self.answer(json.loads(request.content)))
        except Refused as exc:
            return _json(400, ma.error(str(exc), exc.code))

    def multi(self, request: httpx.Request) -> httpx.Response:
        queries = json.loads(request.content)["queries"]
        try:
            results = [{"indexUid": q["indexUid"],
                        **self.answer({k: v for k, v in q.items() if k != "indexUid"})}
                       for q in queries]
        except Refused as exc:
            return _json(400, ma.error(str(exc), exc.code))
        return _json(200, {"results": results})

    def document(self, request: httpx.Request) -> httpx.Response:
        """``GET /indexes/{uid}/documents/{id}``: without ``_vectors`` unless
        ``retrieveVectors=true``, then each embedder's ``{"embeddings": [[..]],
        "regenerate": false}`` (Meilisearch 1.9 and later: API reference, get one
        document)."""
        doc_id = request.url.path.rsplit("/", 1)[1]
        found = next((d for d in self.documents if d["id"] == doc_id), None)
        if found is None:
            return _json(404, ma.error(f"Document `{doc_id}` not found.",
                                       "document_not_found"))
        out = {k: v for k, v in found.items() if k != "_vectors"}
        if request.url.params.get("retrieveVectors") == "true":
            out["_vectors"] = {name: {"embeddings": [vector], "regenerate": False}
                               for name, vector in found["_vectors"].items()}
        return _json(200, out)

    # ------------------------------------------------------------ the search

    def answer(self, body: Json) -> Json:
        self.bodies.append(body)
        ratio, query_vector, embedder = self._meaning(body)
        filtered = [d for d in self.documents if self._passes(d, body.get("filter"))]
        text = body.get("q") or ""
        keyword = self._keyword(filtered, text)
        semantic: list[tuple[Json, float]] = []
        offset, limit = _window(body)
        ran_semantic = False
        if query_vector is not None and embedder is not None:
            good = (ratio < 1 and len(keyword) >= offset + limit
                    and all(s * (1 - ratio) >= GOOD_ENOUGH for _, s in keyword))
            if not good and ratio > 0:
                ran_semantic = True
                semantic = sorted(
                    ((d, (1 + cosine(d["_vectors"][embedder], query_vector)) / 2)
                     for d in filtered), key=lambda pair: -pair[1])
        if ran_semantic and ratio >= 1:
            merged = [(d, s, True) for d, s in semantic]
        elif ran_semantic:
            merged = _merge(keyword, semantic, ratio)
        else:
            merged = [(d, s, False) for d, s in keyword]
        candidates = filtered if ran_semantic else [d for d, _ in keyword]
        page = merged[offset:offset + limit]
        out = _page_answer(body, [self._hit(d, s, body) for d, s, _ in page], len(candidates),
                           offset, limit)
        out["query"] = text
        if body.get("facets"):
            out["facetDistribution"] = {name: _distribution(candidates, name)
                                        for name in body["facets"]}
            out["facetStats"] = {}
        if "hybrid" in body and body["hybrid"] is not None:
            out["semanticHitCount"] = sum(1 for *_, semantic_hit in page if semantic_hit)
        return out

    def _meaning(self, body: Json) -> tuple[float, list[float] | None, str | None]:
        hybrid = body.get("hybrid")
        vector = body.get("vector")
        if hybrid is None:
            if vector is not None:
                raise Refused("invalid_search_hybrid_query",
                              "Invalid request: `vector` requires `hybrid.embedder`")
            return 0.0, None, None
        if not isinstance(hybrid, dict) or set(hybrid) - HYBRID_KEYS:
            raise Refused("invalid_search_hybrid_query", f"Unknown field in `hybrid`: {hybrid}")
        name = hybrid.get("embedder")
        settings = self.embedders.get(name) if isinstance(name, str) else None
        if settings is None:
            raise Refused("invalid_search_embedder", f"Cannot find embedder with name `{name}`.")
        ratio = hybrid.get("semanticRatio", 0.5)
        if not isinstance(ratio, int | float) or not 0 <= ratio <= 1:
            raise Refused("invalid_search_semantic_ratio",
                          "The semantic ratio must be between 0.0 and 1.0")
        if settings["source"] == "userProvided":
            if vector is None:
                raise Refused("vector_embedding_error", "Error while generating embeddings: "
                              "user error: attempt to embed the following text in a "
                              "configuration where embeddings must be user provided")
            if len(vector) != settings["dimensions"]:
                raise Refused("invalid_search_vector",
                              f"Invalid vector dimensions: expected: `{settings['dimensions']}`"
                              f", found: `{len(vector)}`.")
            return float(ratio), list(vector), name
        if vector is not None:
            raise Refused("invalid_search_vector", "`vector` is only for a userProvided "
                          "embedder")
        assert self.embed is not None
        return float(ratio), self.embed(body.get("q") or ""), name

    def _keyword(self, documents: list[Json], text: str) -> list[tuple[Json, float]]:
        asked = words(text)
        if not asked:
            return [(d, 1.0) for d in documents]
        found = []
        for doc in documents:
            held = set(words(" ".join(str(doc.get(a, "")) for a in self.searchable)))
            matched = sum(1 for w in asked if w in held)
            if matched:
                found.append((doc, matched / len(asked)))
        return sorted(found, key=lambda pair: -pair[1])

    def _passes(self, doc: Json, expressions: Any) -> bool:
        if expressions is None:
            return True
        if isinstance(expressions, str):
            return _holds(read(expressions), doc)
        return all(self._passes(doc, e) if isinstance(e, str)
                   else any(self._passes(doc, x) for x in e) for e in expressions)

    def _hit(self, doc: Json, score: float, body: Json) -> Json:
        out = {k: v for k, v in doc.items() if k != "_vectors"}
        if body.get("retrieveVectors"):
            out["_vectors"] = doc["_vectors"]
        if body.get("showRankingScore"):
            out["_rankingScore"] = score
        return out


def _merge(keyword: list[tuple[Json, float]], semantic: list[tuple[Json, float]],
           ratio: float) -> list[tuple[Json, float, bool]]:
    """milli's merge: by weighted score, the semantic one first on a tie, each document at
    its first place; the score shown is the document's own (unweighted)."""
    merged: list[tuple[Json, float, bool]] = []
    seen: set[str] = set()
    left, right = 0, 0
    while left < len(semantic) or right < len(keyword):
        take_semantic = right >= len(keyword) or (
            left < len(semantic) and semantic[left][1] * ratio >= keyword[right][1] * (1 - ratio))
        doc, score = semantic[left] if take_semantic else keyword[right]
        if take_semantic:
            left += 1
        else:
            right += 1
        if str(doc["id"]) not in seen:
            seen.add(str(doc["id"]))
            merged.append((doc, score, take_semantic))
    return merged


def _holds(f: Filter, doc: Json) -> bool:
    if isinstance(f, TermFilter | NotFilter):
        value = doc.get(f.field)
        values = value if isinstance(value, list) else [] if value is None else [value]
        hit = any(str(v).casefold() == str(w).casefold() for v in values for w in f.values)
        return hit if isinstance(f, TermFilter) else not hit
    if isinstance(f, AllOf):
        return all(_holds(x, doc) for x in f.filters)
    if isinstance(f, AnyOf):
        return any(_holds(x, doc) for x in f.filters)
    if isinstance(f, Negated):
        return not _holds(f.filter, doc)
    raise AssertionError(f"the vector index does not evaluate {f!r}")


def _window(body: Json) -> tuple[int, int]:
    if "hitsPerPage" in body or "page" in body:
        per_page = body.get("hitsPerPage", 20)
        return (body.get("page", 1) - 1) * per_page, per_page
    return body.get("offset", 0), body.get("limit", 20)


def _page_answer(body: Json, hits: list[Json], total: int, offset: int, limit: int) -> Json:
    if "hitsPerPage" in body or "page" in body:
        return ma.search(hits, total=total, page=body.get("page", 1), hits_per_page=limit)
    return ma.estimated(hits, estimated_total=total, offset=offset, limit=limit)


def _distribution(documents: list[Json], name: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for doc in documents:
        value = doc.get(name)
        for v in value if isinstance(value, list) else [] if value is None else [value]:
            counts[str(v)] = counts.get(str(v), 0) + 1
    return counts


def _json(status: int, body: Any) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(body).encode(),
                          headers={"Content-Type": "application/json"})
