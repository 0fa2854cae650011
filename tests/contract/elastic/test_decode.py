"""``parse.decode_search`` (answer bytes decoded into structs) reads every search answer as
``parse.search_result`` reads the decoded JSON: the same ``EngineResult``, or the same
``UnreadableAnswer``, for well-formed answers and for odd ones (numbers as ids, a null
score, highlights that are not lists, totals of every form)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.adapters.elastic import parse
from searchport.adapters.elastic.translate import facet_name
from searchport.domain.query import SearchQuery
from searchport.domain.results import EngineResult

QUERY = SearchQuery(text="castle", facets=("category",))

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=4))
sources = st.dictionaries(st.text(max_size=3), scalars, max_size=3)


def maybe(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(st.just({}), values.map(lambda v: {key: v}))


hits = st.builds(
    lambda *parts: {k: v for part in parts for k, v in part.items()},
    maybe("_id", st.one_of(st.text(max_size=4), st.integers(0, 9))),
    maybe("_index", st.one_of(st.just("books"), st.none())),
    maybe("_score", st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.none(),
                              st.booleans(), st.integers(0, 9))),
    maybe("_source", st.one_of(sources, st.none())),
    maybe("highlight", st.one_of(
        st.dictionaries(st.sampled_from(["title", "body"]),
                        st.one_of(st.lists(st.text(max_size=5), max_size=2), st.text(max_size=3),
                                  st.lists(st.integers(0, 3), max_size=2)), max_size=2),
        st.none())),
)
totals = st.one_of(st.integers(0, 99), st.none(), st.booleans(), st.just(2.0),
                   st.builds(lambda v: {"value": v, "relation": "eq"},
                             st.one_of(st.integers(0, 99), st.none())))
buckets = st.lists(st.builds(lambda k, n: {"key": k, "doc_count": n},
                             st.sampled_from(["a", "b", "c"]), st.integers(0, 9)), max_size=3)
answers = st.builds(
    lambda found, total, aggs: {"took": 1, "hits": {"hits": found, "total": total}, **aggs},
    st.lists(hits, max_size=4), totals,
    st.one_of(st.just({}), buckets.map(
        lambda b: {"aggregations": {facet_name(0): {"buckets": b}}})),
)


def outcome(read: Any) -> EngineResult | str:
    try:
        return read()
    except (parse.UnreadableAnswer, KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"unreadable: {type(exc).__name__}"


@settings(max_examples=300, deadline=None)
@given(answers)
def test_structs_read_what_the_dict_walk_reads(answer: dict[str, Any]) -> None:
    content = msgspec.json.encode(answer)
    typed = outcome(lambda: parse.decode_search(content, QUERY))
    walked = outcome(lambda: parse.search_result(msgspec.json.decode(content), QUERY))
    assert typed == walked
    if isinstance(typed, str):  # either way it is an answer searchport cannot read
        assert isinstance(walked, str)


def test_a_well_formed_answer() -> None:
    content = msgspec.json.encode({"hits": {"total": {"value": 7, "relation": "eq"}, "hits": [
        {"_id": "1", "_index": "books", "_score": 1.5, "_source": {"title": "Dune"},
         "highlight": {"title": ["<mark>Dune</mark>"]}}]},
        "aggregations": {facet_name(0): {"buckets": [{"key": "sf", "doc_count": 7}]}}})
    result = parse.decode_search(content, QUERY)
    assert result.total == 7
    assert [(h.id, h.index, h.score, h.source, h.highlights) for h in result.hits] == [
        ("1", "books", 1.5, {"title": "Dune"}, {"title": ["<mark>Dune</mark>"]})]
    assert [(v.value, v.count) for v in result.facets["category"]] == [("sf", 7)]


@pytest.mark.parametrize("content", [b"<html>", b"", b"[1, 2]", b'{"hits": 3}'])
def test_what_is_not_a_search_answer_is_unreadable(content: bytes) -> None:
    with pytest.raises((parse.UnreadableAnswer, AttributeError)):
        parse.decode_search(content, QUERY)
