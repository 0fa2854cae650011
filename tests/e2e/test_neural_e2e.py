"""Algolia's NeuralSearch through a real ``searchport serve``, with the stock Python
``algoliasearch`` client, over the embedded engine and the builtin model: ``get_settings``
says ``mode: neuralSearch``, a paraphrase that no record's words hold finds the record
nearest in meaning (computed here from the rows with the model, independently of the
server), in one search and in multi-queries, filters narrow it, a rule still promotes (its
hit's ``_rankingInfo`` as the client's model reads it), and browse exports by words.

Over the demo's most populous places (more records than each half of a hybrid search
brings), ``nbHits`` counts the fused records exactly and ``exhaustive.nbHits`` (and the
deprecated ``exhaustiveNbHits``) says whether a wider window would add none: not when more
records match the words than the keyword half brought, nor, with meaning alone, when
records were left beyond its window."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from algoliasearch.http.hosts import Host, HostsCollection
from algoliasearch.search.client import SearchClientSync
from algoliasearch.search.config import SearchConfig

from searchport.domain.config import BUILTIN_FLOOR
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


def demo_config(folder: Path, rows: list[dict[str, Any]], extra_top: str = "",
                handles: tuple[tuple[str, float], ...] = (("places", 0.5),)) -> str:
    """NeuralSearch handles over ``rows`` (the demo's places), written to ``folder``: each
    ``(name, ratio)`` of ``handles``, its vectors made of each row's name and description."""
    source = folder / "places.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return f"analytics: {{ backend: none }}\n{extra_top}\nindexes:\n" + "".join(f"""
  {name}:
    engine: tantivy
    path: {json.dumps(str(folder / name))}
    source: {json.dumps(str(source))}
    idField: id
    fields:
      name: {{ type: text, weight: 3 }}
      description: {{ type: text, weight: 1 }}
      country: {{ type: keyword }}
      region: {{ type: keyword }}
      population: {{ type: integer }}
    semantic: {{ fields: [name, description], ratio: {ratio} }}
""" for name, ratio in handles)


@pytest.fixture(scope="module")
def many() -> list[dict[str, Any]]:
    return demo_places(DEMO_PLACES)


@pytest.fixture(scope="module")
def many_client(many: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[SearchClientSync]:
    """``places`` (half words, half meaning) and ``meaning`` (meaning alone: ratio 1)."""
    require_model()
    workdir = tmp_path_factory.mktemp("neural-many")
    config = demo_config(workdir, many, handles=(("places", 0.5), ("meaning", 1.0)))
    server = start_server(config, workdir, timeout=240)
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    config = SearchConfig("any-app-id", "any-key")
    config.hosts = HostsCollection([Host(url=host, port=int(port), scheme="http")])
    yield SearchClientSync.create_with_config(config)
    server.stop()


@pytest.fixture(scope="module")
def many_by_meaning(many: list[dict[str, Any]]) -> Any:
    """The demo places' ids nearest in meaning to a text first, only those whose cosine
    passes ``above`` if given."""
    rank = ranking_by_meaning([(r["id"], r["name"], r["region"], r["description"])
                               for r in many])
    by_name = {row["name"]: row["id"] for row in many}
    return lambda text, above=None: [by_name[name] for name in rank(text, None, above)]


def ids(found: Any) -> list[str]:
    return [hit.object_id for hit in found.hits]


def page_ending_at(client: SearchClientSync, handle: str, text: str, end: int) -> Any:
    """The page of 50 that ends at ``end``: each half of a hybrid search brings its best
    ``end`` records (``WINDOW`` at least)."""
    return client.search_single_index(handle, {"query": text, "hitsPerPage": 50,
                                               "page": end // 50 - 1})


@pytest.mark.parametrize("text", [
    "people speak Thai",  # few records hold every word, few are similar enough
    "capital",  # every description says "capital": more than a window of them
])
def test_nb_hits_counts_the_fused_records_and_says_whether_every_match_is_in(
    many_client: SearchClientSync, many: list[dict[str, Any]], many_by_meaning: Any,
    text: str
) -> None:
    by_words = [many_client.search_single_index("places", {
        "query": text, "mode": "keywordSearch", "hitsPerPage": 100, "page": page})
        for page in (0, 1)]
    matching = by_words[0].nb_hits
    assert all(found.exhaustive_nb_hits and found.exhaustive.nb_hits for found in by_words)
    # the words' matches, from the rows' own text
    assert matching == sum(all(word.lower() in f"{row['name']} {row['description']}".lower()
                               for word in text.split()) for row in many)
    keyword = [i for found in by_words for i in ids(found)]
    similar = many_by_meaning(text, BUILTIN_FLOOR)  # the records meaning brings
    assert len(similar) < WINDOW

    # each half brings its best WINDOW records, more when the page ends further
    for window in (WINDOW, WINDOW + 50):
        fused = set(keyword[:window]) | set(similar)
        found = page_ending_at(many_client, "places", text, window)
        assert found.nb_hits == len(fused) and set(ids(found)) <= fused
        complete = matching <= window
        assert found.exhaustive_nb_hits is complete and found.exhaustive.nb_hits is complete
        assert found.exhaustive.facets_count is True and found.exhaustive_facets_count is True
    assert matching > WINDOW if text == "capital" else matching <= WINDOW


def test_meaning_alone_is_exhaustive_once_its_window_holds_every_record(
    many_client: SearchClientSync, many: list[dict[str, Any]], many_by_meaning: Any
) -> None:
    """With meaning alone every record ranks, however little similar: the WINDOW nearest
    leave the others out; a page ending at the last record brings them all."""
    text = "where the Thai government sits"
    nearest = many_by_meaning(text)
    first = page_ending_at(many_client, "meaning", text, WINDOW)
    assert first.nb_hits == WINDOW and ids(first) == nearest[WINDOW - 50:WINDOW]
    assert first.exhaustive_nb_hits is False and first.exhaustive.nb_hits is False
    last = page_ending_at(many_client, "meaning", text, len(many))
    assert last.nb_hits == len(many) and ids(last) == nearest[len(many) - 50:]
    assert last.exhaustive_nb_hits is True and last.exhaustive.nb_hits is True
