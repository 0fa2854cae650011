"""Algolia's NeuralSearch through a real ``searchport serve``, with the stock Python
``algoliasearch`` client, over the embedded engine and the builtin model: ``get_settings``
says ``mode: neuralSearch``, a paraphrase that no record's words hold finds the record
nearest in meaning (computed here from the rows with the model, independently of the
server), in one search and in multi-queries, filters narrow it, a rule still promotes (its
hit's ``_rankingInfo`` as the client's model reads it), and browse exports by words.

Over the demo's most populous places (more records than each half of a hybrid search
brings), ``nbHits`` counts the fused records exactly and ``exhaustive.nbHits`` (and the
deprecated ``exhaustiveNbHits``) says whether they hold every record that matches the
words: not when the keyword half was cut at its window."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from algoliasearch.http.hosts import Host, HostsCollection
from algoliasearch.search.client import SearchClientSync
from algoliasearch.search.config import SearchConfig

from tests.e2e.conftest import Server, start_server
from tests.integration.test_tantivy_hybrid import PLACES
from tests.semantic_model import demo_places, ranking_by_meaning, require_model

PARAPHRASE = "where are movies made"
# ten short descriptions: a lower floor than the builtin default lets several weigh in
FLOOR = 0.2
CONFIG = """\
indexes:
  places:
    engine: tantivy
    path: index/places
    source: places.jsonl
    fields:
      name: { type: text, weight: 3 }
      description: { type: text, searchable: true }
      region: { type: keyword }
    semantic:
      fields: [name, description]
      ratio: 0.5
      minSimilarity: 0.2
    rules: rules.json
  words:
    engine: tantivy
    path: index/words
    source: places.jsonl
    fields:
      name: { type: text, weight: 3 }
      description: { type: text, searchable: true }
      region: { type: keyword }
"""
RULES = [{"objectID": "films", "conditions": [{"pattern": "films", "anchoring": "contains"}],
          "consequence": {"promote": [{"objectID": "5", "position": 0}]}}]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    require_model()
    workdir = tmp_path_factory.mktemp("neural-serve")
    (workdir / "places.jsonl").write_text("".join(
        json.dumps({"id": i, "name": n, "region": r, "description": d}) + "\n"
        for i, n, r, d in PLACES), "utf-8")
    (workdir / "rules.json").write_text(json.dumps(RULES), "utf-8")
    server = start_server(CONFIG, workdir, timeout=180)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def client(served: Server) -> SearchClientSync:
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    config = SearchConfig("any-app-id", "any-key")
    config.hosts = HostsCollection([Host(url=host, port=int(port), scheme="http")])
    return SearchClientSync.create_with_config(config)


@pytest.fixture(scope="module")
def by_meaning() -> Any:
    """The places' names, nearest in meaning to a text first (tests/semantic_model.py)."""
    return ranking_by_meaning(PLACES)


def names(found: Any) -> list[str]:
    return [hit.to_dict()["name"] for hit in found.hits]


def test_get_settings_reports_the_mode(client: SearchClientSync) -> None:
    assert client.get_settings("places").mode == "neuralSearch"
    assert client.get_settings("words").mode == "keywordSearch"


def test_a_paraphrase_finds_the_record_nearest_in_meaning(client: SearchClientSync,
                                                         by_meaning: Any) -> None:
    assert client.search_single_index("words", {"query": PARAPHRASE}).nb_hits == 0
    found = client.search_single_index("places", {"query": PARAPHRASE, "hitsPerPage": 3})
    weighing_in = by_meaning(PARAPHRASE, None, FLOOR)
    assert names(found) == weighing_in[:3]
    assert names(found)[0] == "Mumbai" and found.nb_hits == len(weighing_in) < len(PLACES)


def test_multi_queries_and_filters(client: SearchClientSync, by_meaning: Any) -> None:
    answer = client.search({"requests": [
        {"indexName": "places", "query": PARAPHRASE, "filters": "region:Americas"},
        {"indexName": "places", "query": PARAPHRASE, "facetFilters": [["region:Asia"]],
         "facets": ["region"]},
    ]})
    americas, asia = (r.actual_instance for r in answer.results)
    assert names(americas) == by_meaning(PARAPHRASE, "Americas", FLOOR)
    assert names(asia) == by_meaning(PARAPHRASE, "Asia", FLOOR)
    assert asia.facets == {"region": {"Asia": len(names(asia))}}


def test_a_rule_promotes_and_ranking_info_says_so(client: SearchClientSync,
                                                 by_meaning: Any) -> None:
    text = "where are films made"
    found = client.search_single_index("places", {"query": text, "hitsPerPage": 3,
                                                  "getRankingInfo": True})
    assert names(found)[0] == "Oxford"  # promoted by the rule, before the ranking
    assert found.hits[0].ranking_info is not None and found.hits[0].ranking_info.promoted
    assert all(hit.ranking_info is None for hit in found.hits[1:])
    assert names(found)[1:] == [n for n in by_meaning(text, None, FLOOR) if n != "Oxford"][:2]
    assert found.applied_rules == [{"objectID": "films"}]


def test_keyword_mode_and_browse_search_by_words(client: SearchClientSync) -> None:
    assert client.search_single_index("places", {"query": PARAPHRASE,
                                                 "mode": "keywordSearch"}).nb_hits == 0
    assert client.browse("places", {"query": PARAPHRASE}).nb_hits == 0
    every = client.browse("places", {"query": ""})
    assert every.nb_hits == len(PLACES)


# --- nbHits and its exhaustiveness, over more records than a half brings ---------------------

DEMO_PLACES = 150  # the demo's most populous places: their vectors take a few seconds
WINDOW = 100  # the records each half of a hybrid search brings (docs/semantic.md)


def demo_config(folder: Path, rows: list[dict[str, Any]], extra_top: str = "") -> str:
    """A NeuralSearch handle ``places`` over ``rows`` (the demo's places), written to
    ``folder``: its vectors made of each row's name and description."""
    source = folder / "places.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return f"""
analytics: {{ backend: none }}
{extra_top}
indexes:
  places:
    engine: tantivy
    path: {json.dumps(str(folder / "index"))}
    source: {json.dumps(str(source))}
    idField: id
    fields:
      name: {{ type: text, weight: 3 }}
      description: {{ type: text, weight: 1 }}
      country: {{ type: keyword }}
      region: {{ type: keyword }}
      population: {{ type: integer }}
    semantic: {{ fields: [name, description], ratio: 0.5 }}
"""


@pytest.fixture(scope="module")
def many() -> list[dict[str, Any]]:
    return demo_places(DEMO_PLACES)


@pytest.fixture(scope="module")
def many_client(many: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[SearchClientSync]:
    require_model()
    workdir = tmp_path_factory.mktemp("neural-many")
    server = start_server(demo_config(workdir, many), workdir, timeout=180)
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    config = SearchConfig("any-app-id", "any-key")
    config.hosts = HostsCollection([Host(url=host, port=int(port), scheme="http")])
    yield SearchClientSync.create_with_config(config)
    server.stop()


def ids(found: Any) -> list[str]:
    return [hit.object_id for hit in found.hits]


@pytest.mark.parametrize("text", [
    "people speak Thai",  # few records hold every word: all of them in the keyword half
    "capital",  # every description says "capital": more than a window of them
])
def test_nb_hits_counts_the_fused_records_and_says_whether_every_match_is_in(
    many_client: SearchClientSync, many: list[dict[str, Any]], text: str
) -> None:
    per_page = 50
    by_words = [many_client.search_single_index("places", {
        "query": text, "mode": "keywordSearch", "hitsPerPage": 100, "page": page})
        for page in (0, 1)]
    matching = by_words[0].nb_hits
    assert all(found.exhaustive_nb_hits and found.exhaustive.nb_hits for found in by_words)
    # the words' matches, from the rows' own text
    assert matching == sum(all(word.lower() in f"{row['name']} {row['description']}".lower()
                               for word in text.split()) for row in many)
    keyword = [i for found in by_words for i in ids(found)]
    rank = ranking_by_meaning([(r["id"], r["name"], r["region"], r["description"])
                               for r in many])
    by_name = {row["name"]: row["id"] for row in many}
    nearest = [by_name[name] for name in rank(text, None)]

    # each half brings its best WINDOW records, more when the page ends further
    for window in (WINDOW, WINDOW + per_page):
        fused = set(keyword[:window]) | set(nearest[:window])
        found = many_client.search_single_index("places", {
            "query": text, "hitsPerPage": per_page, "page": window // per_page - 1})
        assert found.nb_hits == len(fused) and set(ids(found)) <= fused
        complete = matching <= window
        assert found.exhaustive_nb_hits is complete and found.exhaustive.nb_hits is complete
        assert found.exhaustive.facets_count is True and found.exhaustive_facets_count is True
    assert matching > WINDOW if text == "capital" else matching <= WINDOW
