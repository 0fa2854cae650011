"""``replicaOf`` in a handle's config: a replica takes its primary's settings and its own
order; what cannot be a replica stops startup with the key path."""

from __future__ import annotations

import pytest

from searchport.adapters.config_loader import parse_config
from searchport.domain.config import ConfigError
from searchport.domain.query import SortClause
from searchport.domain.replicas import replica_of

PRIMARY = """
indexes:
  books:
    engine: tantivy
    path: idx/books
    fields:
      cost: {field: price, type: float}
      year: {type: integer}
      title: {type: text}
    rules: [{"objectID": "pin", "consequence": {"promote": [{"objectID": "b1", "position": 0}]}}]
"""


def load(replica: str):  # type: ignore[no-untyped-def]
    return parse_config(PRIMARY + replica, {})


def refused(replica: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load(replica)
    return str(caught.value)


def test_a_standard_replica_takes_its_primary_settings_and_its_sort() -> None:
    config = load("  cheap:\n    replicaOf: books\n"
                  "    sort: [{field: cost, order: asc}, {field: year, order: desc}]\n")
    primary, cheap = config.indexes["books"], config.indexes["cheap"]
    assert (cheap.engine, cheap.path, cheap.fields) == (primary.engine, primary.path,
                                                         primary.fields)
    assert cheap.rule_list == primary.rule_list
    found = replica_of(cheap)
    assert found is not None and found.primary == "books" and not found.virtual
    assert found.sort == (SortClause(field="price", order="asc"),
                          SortClause(field="year", order="desc"))
    assert replica_of(primary) is None


def test_a_virtual_replica_has_its_own_ranking_and_strictness() -> None:
    config = load("  relevant:\n    replicaOf: books\n    relevantSort: {strictness: 80}\n"
                  "    customRanking: [{field: cost, order: asc}]\n")
    found = replica_of(config.indexes["relevant"])
    assert found is not None and found.relevant is not None
    assert found.relevant.strictness == 80 and found.relevant.max_hits == 1000
    assert found.relevant.ranking == (SortClause(field="price", order="asc"),)
    assert config.indexes["books"].custom_ranking == []  # the primary's is its own


@pytest.mark.parametrize(("replica", "message"), [
    ("  r:\n    replicaOf: nope\n    sort: [{field: year, order: asc}]\n",
     "indexes.r.replicaOf: 'nope' is not a configured handle"),
    ("  r:\n    replicaOf: books\n    sort: [{field: year, order: asc}]\n"
     "  s:\n    replicaOf: r\n    sort: [{field: year, order: asc}]\n",
     "indexes.s.replicaOf: 'r' is a replica itself; name its primary"),
    ("  r:\n    replicaOf: books\n    engine: typesense\n    sort: [{field: year, order: asc}]\n",
     "indexes.r.engine: a replica shares the engine, index, fields and rules of "
     "indexes.books; it sets only replicaOf, sort, relevantSort, customRanking, defaults, "
     "cache"),
    ("  r:\n    replicaOf: books\n",
     "indexes.r.sort: a replica needs sort (a standard replica: [{field, order}]) or "
     "relevantSort with customRanking (a virtual replica)"),
    ("  r:\n    replicaOf: books\n    sort: [{field: year, order: asc}]\n"
     "    relevantSort: {strictness: 50}\n",
     "indexes.r.relevantSort: a replica has sort (a standard replica) or relevantSort (a "
     "virtual replica), not both"),
    ("  r:\n    replicaOf: books\n    relevantSort: {strictness: 50}\n",
     "indexes.r.customRanking: a virtual replica (relevantSort) orders its relevant hits by "
     "customRanking; give at least one key"),
    ("  r:\n    replicaOf: books\n    relevantSort: {strictness: 101}\n"
     "    customRanking: [{field: year}]\n",
     "indexes.r.relevantSort.strictness: Expected `int` <= 100"),
    ("  r:\n    replicaOf: books\n    sort: [{field: year, order: up}]\n",
     "indexes.r.sort[0].order: Invalid enum value 'up'"),
    ("  r:\n    replicaOf: books\n    sort: [{field: title, order: asc}]\n",
     "indexes.r.sort[0].field: 'title' is a text field; sort by a keyword, number, boolean "
     "or date field"),
    ("  r:\n    replicaOf: books\n    sort: [{field: pages, order: asc}]\n",
     "indexes.r.sort[0].field: give 'pages' a type in indexes.books.fields"),
    ("  r:\n    replicaOf: books\n    sort: [{field: year, order: asc}]\n"
     "    customRanking: [{field: year}]\n",
     "indexes.r.customRanking: a standard replica orders by sort alone"),
    ("  r:\n    replicaOf: books\n    relevantSort: {}\n    customRanking: [{field: title}]\n",
     "indexes.r.customRanking[0].field: 'title' is a text field"),
])
def test_what_cannot_be_a_replica_stops_startup_with_the_key_path(replica: str,
                                                                  message: str) -> None:
    assert refused(replica).startswith(message)


def test_only_a_replica_sorts_this_way() -> None:
    text = PRIMARY.replace("    path: idx/books\n",
                           "    path: idx/books\n    sort: [{field: year, order: asc}]\n")
    with pytest.raises(ConfigError, match=r"^indexes.books.sort: only a replica orders its "
                                          r"hits this way; add replicaOf"):
        parse_config(text, {})
