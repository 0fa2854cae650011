"""The rule search and retrieval behind the read-only rule routes."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from searchport.domain.access import Access, filters_by_handle
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import IndexConfig
from searchport.domain.errors import Forbidden, IndexNotFound
from searchport.domain.rules.format import decode_rule
from searchport.domain.rules.listing import RuleSearch, get_rule, search_rules
from searchport.domain.usecases.get_rule import GetRule
from searchport.domain.usecases.search_rules import SearchRules
from tests.fakes import FakeEngine

RAW: list[dict[str, Any]] = [
    {"objectID": "summer-sale", "description": "Banner for the Summer sale",
     "conditions": [{"pattern": "sale", "anchoring": "contains", "context": "web"}],
     "consequence": {"userData": {"banner": "summer.png"}}},
    {"objectID": "pin-dune", "conditions": [{"pattern": "dune", "anchoring": "is"}],
     "consequence": {"promote": [{"objectID": "b1", "position": 0}]}, "enabled": False},
    {"objectID": "always", "consequence": {"hide": [{"objectID": "b9"}]}},
]
RULES = [decode_rule(r) for r in RAW]


def ids(**request: Any) -> list[str]:
    return [r.object_id for r in search_rules(RULES, RuleSearch(**request)).hits]


def test_every_rule_in_objectid_order_by_default() -> None:
    found = search_rules(RULES, RuleSearch())
    assert [r.object_id for r in found.hits] == ["always", "pin-dune", "summer-sale"]
    assert (found.nb_hits, found.page, found.nb_pages) == (3, 0, 1)


def test_query_anchoring_context_and_enabled_narrow_the_list() -> None:
    assert ids(query="SUMM") == ["summer-sale"]
    assert ids(query="banner sum") == ["summer-sale"]
    assert ids(query="dun") == ["pin-dune"]
    assert ids(query="web") == ["summer-sale"]
    assert ids(query="nothing") == []
    assert ids(anchoring="is") == ["pin-dune"]
    assert ids(context="web") == ["summer-sale"]
    assert ids(enabled=False) == ["pin-dune"]
    assert ids(enabled=True) == ["always", "summer-sale"]


def test_pages_of_rules() -> None:
    found = search_rules(RULES, RuleSearch(page=1, hits_per_page=2))
    assert [r.object_id for r in found.hits] == ["summer-sale"]
    assert (found.nb_hits, found.nb_pages) == (3, 2)
    encoded = msgspec.json.decode(msgspec.json.encode(found))
    assert set(encoded) == {"hits", "nbHits", "page", "nbPages"}
    assert encoded["hits"] == [RAW[0]]


def test_a_rule_by_objectid() -> None:
    assert get_rule(RULES, "always") == RULES[2]
    assert get_rule(RULES, "missing") is None
    request = msgspec.json.decode(b'{"query":"x","hitsPerPage":5,"enabled":null}',
                                  type=RuleSearch)
    assert request.hits_per_page == 5 and request.enabled is None


def test_the_rule_use_cases_need_a_key_reading_every_record() -> None:
    index = msgspec.convert({"engine": "tantivy", "path": "x", "rules": RAW}, IndexConfig)
    catalog = Catalog({"books": IndexEntry("books", index, FakeEngine())})
    listed = asyncio.run(SearchRules(catalog=catalog)("books", RuleSearch(query="dune")))
    assert [r.object_id for r in listed.hits] == ["pin-dune"]
    assert asyncio.run(GetRule(catalog=catalog)("books", "always")) == RULES[2]
    assert asyncio.run(GetRule(catalog=catalog)("books", "nope")) is None
    limited = Access(forced=filters_by_handle({"books": {"genre": "a"}}), filtered=True)
    with pytest.raises(Forbidden, match="may not list rules"):
        asyncio.run(GetRule(catalog=catalog)("books", "always", limited))
    with pytest.raises(IndexNotFound):
        asyncio.run(SearchRules(catalog=catalog)("books", RuleSearch(),
                                                 Access(handles=("other",))))
