"""The hybrid search of the Elasticsearch/OpenSearch adapter (``adapters/elastic/hybrid.py``):
the bodies of its three requests, held against each engine's published specification
(``tests/specs``), and the fusion of the answers, over a scripted ``send``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from searchport.adapters.elastic import hybrid
from searchport.adapters.elastic.fields import FieldCatalog, FieldInfo
from searchport.domain.errors import EngineUnavailable, InvalidRequest
from searchport.domain.fusion import reciprocal_rank_fusion
from searchport.domain.query import (
    GeoGridSpec,
    HistogramSpec,
    SearchQuery,
    SortClause,
    TermFilter,
)
from tests.specs.checker import problems

CATALOG = FieldCatalog(mapped={"genre": FieldInfo(type="keyword"),
                               "title": FieldInfo(type="text", keyword="title.keyword"),
                               "year": FieldInfo(type="integer")})
VECTOR = tuple(float(i) / 10 for i in range(4))
GENRE = TermFilter(field="genre", values=("fantasy",))
DIALECTS = {"elasticsearch": hybrid.elasticsearch_knn, "opensearch": hybrid.opensearch_knn}
# embedder: engine, each engine embedding the text with the model deployed in it
EMBEDS = {"elasticsearch": hybrid.EngineEmbeds(hybrid.elasticsearch_text_knn, "minilm"),
          "opensearch": hybrid.EngineEmbeds(hybrid.opensearch_neural, "minilm")}


def hybrid_query(**changes: Any) -> SearchQuery:
    settings: dict[str, Any] = {"text": "dragon tales", "semantic": 0.5, "vector": VECTOR,
                                "limit": 3, **changes}
    return SearchQuery(**settings)


@pytest.mark.parametrize("engine", sorted(DIALECTS))
def test_the_vector_search_is_the_engines_own(engine: str) -> None:
    body = hybrid.meaning_body(hybrid_query(filters=(GENRE,), facets=("genre",)), CATALOG,
                               DIALECTS[engine], "embedding", 100)
    genre = {"bool": {"filter": [{"term": {"genre": "fantasy"}}]}}
    if engine == "elasticsearch":
        assert body == {"size": 100, "_source": False, "track_total_hits": False,
                        "knn": {"field": "embedding", "query_vector": list(VECTOR), "k": 100,
                                "num_candidates": 200, "filter": genre}}
    else:
        assert body == {"size": 100, "_source": False, "track_total_hits": False,
                        "query": {"knn": {"embedding": {"vector": list(VECTOR), "k": 100,
                                                        "filter": genre}}}}
    assert problems(engine, "search.request", body) == []


@pytest.mark.parametrize("engine", sorted(DIALECTS))
def test_an_engine_that_embeds_gets_the_text_and_its_model(engine: str) -> None:
    """``embedder: engine``: no vector, the query's text as typed and ``semantic.model``,
    Elasticsearch's ``query_vector_builder`` or OpenSearch's ``neural`` query."""
    query = hybrid_query(text="dragon ta", vector=None, filters=(GENRE,), facets=("genre",))
    body = hybrid.meaning_body(query, CATALOG, DIALECTS[engine], "embedding", 100,
                               EMBEDS[engine])
    genre = {"bool": {"filter": [{"term": {"genre": "fantasy"}}]}}
    if engine == "elasticsearch":
        assert body == {"size": 100, "_source": False, "track_total_hits": False,
                        "knn": {"field": "embedding", "query_vector_builder": {
                            "text_embedding": {"model_id": "minilm",
                                               "model_text": "dragon ta"}},
                                "k": 100, "num_candidates": 200, "filter": genre}}
    else:
        assert body == {"size": 100, "_source": False, "track_total_hits": False,
                        "query": {"neural": {"embedding": {
                            "query_text": "dragon ta", "model_id": "minilm", "k": 100,
                            "filter": genre}}}}
    assert problems(engine, "search.request", body) == []
    unfiltered = hybrid.meaning_body(hybrid_query(vector=None), CATALOG, DIALECTS[engine],
                                     "embedding", 9, EMBEDS[engine])
    assert "filter" not in json.dumps(unfiltered)
    assert problems(engine, "search.request", unfiltered) == []


@pytest.mark.parametrize("engine", sorted(DIALECTS))
def test_a_query_with_its_own_vector_is_searched_by_it_when_the_engine_embeds(
        engine: str) -> None:
    """A record's vector (similar documents) is sent as any vector, whatever the embedder."""
    with_vector = hybrid.meaning_body(hybrid_query(), CATALOG, DIALECTS[engine], "embedding",
                                      100, EMBEDS[engine])
    assert with_vector == hybrid.meaning_body(hybrid_query(), CATALOG, DIALECTS[engine],
                                              "embedding", 100)


def test_the_text_searches_refuse_what_their_specification_refuses() -> None:
    """The specifications do hold the shapes: a ``text_embedding`` without its text, or a
    ``neural`` query with an unknown key, is refused (the checks above are not vacuous)."""
    body = hybrid.elasticsearch_text_knn("embedding", "m", "x", 10, [])
    del body["knn"]["query_vector_builder"]["text_embedding"]["model_text"]
    assert problems("elasticsearch", "search.request", body) != []
    body = hybrid.opensearch_neural("embedding", "m", "x", 10, [])
    body["query"]["neural"]["embedding"]["query_vector"] = [0.1]
    assert problems("opensearch", "search.request", body) != []


@pytest.mark.parametrize("engine", sorted(DIALECTS))
def test_every_body_satisfies_the_engines_specification(engine: str) -> None:
    query = hybrid_query(filters=(GENRE,), facets=("genre",), stats=("year",),
                         histograms=(HistogramSpec(field="year", interval=10),),
                         geo_grid=GeoGridSpec(field="where", precision=3), highlight=True,
                         suggest_field="title")
    bodies = [hybrid.keyword_body(query, CATALOG, (), 100),
              hybrid.meaning_body(query, CATALOG, DIALECTS[engine], "embedding", 100),
              hybrid.meaning_body(hybrid_query(), CATALOG, DIALECTS[engine], "embedding", 9),
              hybrid.page_body(query, CATALOG, [("i", "1"), ("i", "2")], [("i", "2")],
                               "embedding"),
              hybrid.page_body(query, CATALOG, [("a", "1"), ("b", "1")], [], "embedding")]
    for body in bodies:
        assert problems(engine, "search.request", body) == [], json.dumps(body)


def test_the_keyword_half_is_the_keyword_search_without_counts() -> None:
    query = hybrid_query(filters=(GENRE,), facets=("genre",), suggest_field="title",
                         highlight=True, offset=150)
    body = hybrid.keyword_body(query, CATALOG, (), hybrid.window(query))
    assert (body["from"], body["size"], body["_source"]) == (0, 153, False)
    assert "aggs" not in body and "highlight" not in body and "suggest" in body
    # the facet's own filter, a post_filter, still restricts the ranking
    assert body["post_filter"] == {"bool": {"filter": [{"term": {"genre": "fantasy"}}]}}


def test_the_page_is_picked_from_the_fused_records_and_counted_over_them() -> None:
    query = hybrid_query(facets=("genre",), fields=("title",), highlight=True)
    body = hybrid.page_body(query, CATALOG, [("i", "1"), ("i", "2"), ("i", "3")],
                            [("i", "2")], "embedding")
    assert body["query"] == {"bool": {"filter": [{"ids": {"values": ["1", "2", "3"]}}]}}
    assert body["post_filter"] == {"ids": {"values": ["2"]}}
    assert (body["size"], body["_source"]) == (1, ["title"])
    assert body["aggs"]["facet_0"]["terms"]["field"] == "genre"  # no disjunctive wrapper
    assert "multi_match" in json.dumps(body["highlight"]["highlight_query"])
    # without fields, the vector stays out of the hits
    assert hybrid.page_body(hybrid_query(), CATALOG, [("i", "1")], [("i", "1")],
                            "embedding")["_source"] == {"excludes": ["embedding"]}


def test_records_of_several_indices_are_told_apart_by_index() -> None:
    assert hybrid.ids_clause([("a", "1"), ("b", "1"), ("a", "2")]) == {"bool": {"should": [
        {"bool": {"filter": [{"term": {"_index": "a"}}, {"ids": {"values": ["1", "2"]}}]}},
        {"bool": {"filter": [{"term": {"_index": "b"}}, {"ids": {"values": ["1"]}}]}}],
        "minimum_should_match": 1}}


# ---------------------------------------------------------------- the fusion, scripted


def _answer(ids: list[str], *, aggs: dict[str, Any] | None = None,
            sources: bool = False) -> bytes:
    hits = [{"_index": "i", "_id": i, "_score": 1.0,
             **({"_source": {"title": f"t{i}"}} if sources else {})} for i in ids]
    answer: dict[str, Any] = {"hits": {"hits": hits}}
    if aggs:
        answer["aggregations"] = aggs
    return json.dumps(answer).encode()


class Scripted:
    """``send`` answering the keyword half, the knn half and the page in turn."""

    def __init__(self, by_words: list[str], by_meaning: list[str]) -> None:
        self.by_words, self.by_meaning = by_words, by_meaning
        self.sent: list[dict[str, Any]] = []

    async def __call__(self, body: dict[str, Any]) -> bytes:
        self.sent.append(body)
        if "knn" in body or "knn" in body.get("query", {}):
            return _answer(self.by_meaning)
        if "post_filter" in body and "ids" in body["post_filter"]:
            page = body["post_filter"]["ids"]["values"]
            return _answer(list(reversed(page)), sources=True,
                           aggs={"facet_0": {"buckets": [{"key": "x", "doc_count": 4}]}})
        return _answer(self.by_words)


def run(query: SearchQuery, send: Scripted) -> Any:
    return asyncio.run(hybrid.run_hybrid(query, CATALOG, send=send,
                                         dialect=hybrid.elasticsearch_knn, field="embedding"))


def test_the_hits_are_the_fused_ranking_paged() -> None:
    send = Scripted(["1", "2", "3"], ["3", "4", "1"])
    result = run(hybrid_query(offset=1, limit=2, facets=("genre",)), send)
    # the scripted knn hits score 1: a cosine of 1, a full vote whatever the floor
    fused = reciprocal_rank_fusion(["1", "2", "3"], [(i, 1.0) for i in ("3", "4", "1")], 0.5)
    assert [h.id for h in result.hits] == [key for key, _ in fused[1:3]]
    assert [h.score for h in result.hits] == [score for _, score in fused[1:3]]
    assert result.total == 4 and result.hits[0].source == {"title": f"t{result.hits[0].id}"}
    assert result.facets["genre"][0].value == "x"
    page = send.sent[-1]
    assert page["query"]["bool"]["filter"] == [{"ids": {"values": [k for k, _ in fused]}}]


def test_all_meaning_sends_no_keyword_search() -> None:
    send = Scripted(["1"], ["4", "5"])
    result = run(hybrid_query(semantic=1.0), send)
    assert [h.id for h in result.hits] == ["4", "5"]
    assert len(send.sent) == 2 and "knn" in send.sent[0]


def test_nothing_found_sends_no_page() -> None:
    send = Scripted([], [])
    result = run(hybrid_query(facets=("genre",)), send)
    assert (result.hits, result.total, result.facets) == ([], 0, {"genre": []})
    assert len(send.sent) == 2


def test_the_total_is_complete_unless_a_half_came_back_full() -> None:
    """The keyword half is not counted (``track_total_hits: false``): a full window may
    leave records that match the words out, a shorter one cannot. The scripted knn scores
    are 1 (a cosine of 1, above any floor): a full window of them may leave similar records
    out too, and with meaning alone every record ranks."""
    full = [str(i) for i in range(100)]
    assert run(hybrid_query(), Scripted(full, ["a"])).complete_total is False
    assert run(hybrid_query(), Scripted(full[:99], ["a"])).complete_total is True
    assert run(hybrid_query(), Scripted(["a"], full)).complete_total is False
    assert run(hybrid_query(), Scripted(["a"], full[:99])).complete_total is True
    assert run(hybrid_query(semantic=1.0), Scripted(full, full)).complete_total is False
    assert run(hybrid_query(semantic=1.0), Scripted(full, full[:99])).complete_total is True


@pytest.mark.parametrize("engine", sorted(DIALECTS))
def test_the_text_the_engine_embeds_is_fused_by_its_knn_score(engine: str) -> None:
    """With ``embedder: engine`` the meaning half's ``_score`` is read as a knn score,
    ``(1 + cosine) / 2``: a record below the floor brings no vote."""

    class Scored(Scripted):
        async def __call__(self, body: dict[str, Any]) -> bytes:
            if "knn" in body or "neural" in body.get("query", {}):
                self.sent.append(body)
                hits = [{"_index": "i", "_id": i, "_score": score}
                        for i, score in (("4", 0.9), ("5", 0.6))]
                return json.dumps({"hits": {"hits": hits}}).encode()
            return await super().__call__(body)

    send = Scored(["1"], [])
    result = asyncio.run(hybrid.run_hybrid(
        hybrid_query(vector=None), CATALOG, send=send, dialect=DIALECTS[engine],
        field="embedding", floor=0.5, embeds=EMBEDS[engine]))
    fused = reciprocal_rank_fusion(["1"], [("4", 0.8), ("5", 0.2)], 0.5, 0.5)
    assert [h.id for h in result.hits] == [k for k, _ in fused] == ["1", "4"]
    assert not any('"query_vector"' in json.dumps(b) or '"vector"' in json.dumps(b)
                   for b in send.sent)


def test_a_query_without_a_vector_and_no_engine_embedding_is_refused() -> None:
    with pytest.raises(EngineUnavailable):
        run(hybrid_query(vector=None), Scripted([], []))


def test_a_sorted_hybrid_search_is_refused() -> None:
    with pytest.raises(InvalidRequest, match="sorted search"):
        run(hybrid_query(sort=(SortClause(field="year", order="asc"),)), Scripted([], []))
