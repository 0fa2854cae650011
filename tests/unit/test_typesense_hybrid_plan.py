"""The two searches of a hybrid search on Typesense (``adapters/typesense/hybrid.py``), as
pure functions of the query and the collection schema: the window each half brings, the
``vector_query`` written in plain decimals, and what is refused."""

from __future__ import annotations

import pytest

from searchport.adapters.typesense import hybrid
from searchport.adapters.typesense.schema import read_schema
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import SearchQuery, SortClause

SCHEMA = read_schema({"fields": [
    {"name": "title", "type": "string"},
    {"name": "vec", "type": "float[]", "num_dim": 3},
    {"name": "auto", "type": "float[]", "num_dim": 3,
     "embed": {"from": ["title"], "model_config": {"model_name": "ts/e5-small"}}},
    {"name": "prices", "type": "float[]"},
]})
KEYWORD = {"collection": "c", "q": "old town", "query_by": "title", "filter_by": "x:=1",
           "hidden_hits": "7", "exclude_fields": "vec", "num_typos": "0", "page": 1,
           "per_page": 100}


def test_each_half_brings_100_records_or_the_page() -> None:
    assert hybrid.halves(SearchQuery(text="a", semantic=0.5)).window == 100
    far = hybrid.halves(SearchQuery(text="a", semantic=0.5, offset=180, limit=30))
    assert far.window == 210 and far.keyword is not None and far.keyword.limit == 210
    assert hybrid.halves(SearchQuery(text="a", semantic=1)).keyword is None


@pytest.mark.parametrize("query", [
    SearchQuery(text="a", semantic=0.5, sort=(SortClause(field="year", order="asc"),)),
    SearchQuery(text="a", semantic=0.5, offset=240, limit=20),
])
def test_what_a_hybrid_search_refuses(query: SearchQuery) -> None:
    with pytest.raises(InvalidRequest):
        hybrid.halves(query)


def test_the_query_vector_is_written_in_plain_decimals() -> None:
    query = SearchQuery(text="old town", semantic=0.5, vector=(0.5, -1e-07, 0.25))
    found = hybrid.meaning_search(query, SCHEMA, KEYWORD, "vec", False, 100)
    assert found == {"collection": "c", "filter_by": "x:=1", "hidden_hits": "7",
                     "exclude_fields": "vec", "page": 1, "per_page": 100, "q": "*",
                     "vector_query": "vec:([0.5,-0.0000001,0.25], k: 100)"}


def test_an_auto_embedding_field_gets_the_text() -> None:
    query = SearchQuery(text="old town", semantic=0.5)
    found = hybrid.meaning_search(query, SCHEMA, KEYWORD, "auto", True, 120)
    assert (found["q"], found["query_by"], found["vector_query"], found["per_page"]) == (
        "old town", "auto", "auto:([], k: 120)", 120)


@pytest.mark.parametrize(("field", "engine_embeds", "said"), [
    ("title", False, "not a vector field"),
    ("prices", False, "not a vector field"),  # a float[] without num_dim holds numbers
    ("missing", False, "not a vector field"),
    ("vec", True, "does not embed it"),
])
def test_the_vector_field_is_checked(field: str, engine_embeds: bool, said: str) -> None:
    query = SearchQuery(text="a", semantic=0.5, vector=(1.0, 0.0, 0.0))
    with pytest.raises(InvalidRequest, match=said):
        hybrid.meaning_search(query, SCHEMA, KEYWORD, field, engine_embeds, 100)
