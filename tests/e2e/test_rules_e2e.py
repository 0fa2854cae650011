"""Query rules and replicas through a real ``searchport serve``, with the stock Python
``algoliasearch`` client: a JSON export beside the config, searches changed by the rules
(promote, hide, userData, appliedRules, ruleContexts), the read-only rule calls
``search_rules`` and ``get_rule``, a standard and a virtual replica searched and listed by
``get_settings``, and a rule searchport cannot honour stopping startup."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from algoliasearch.http.hosts import Host, HostsCollection
from algoliasearch.search.client import SearchClientSync
from algoliasearch.search.config import SearchConfig

from tests.e2e.conftest import FIELDS_YAML, ROWS_FILE, SEARCHPORT, Server, start_server

Rows = list[dict[str, Any]]


def config_text() -> str:
    fields = FIELDS_YAML.replace("    fields:\n", "    fields:\n      id: { type: keyword }\n")
    return (f"indexes:\n  cities:\n    engine: tantivy\n    path: index/cities\n"
            f"    source: {ROWS_FILE}\n{fields}    rules: rules/export.json\n"
            "  cities-smallest:\n    replicaOf: cities\n"
            "    sort: [{field: population, order: asc}]\n"
            "  cities-relevant:\n    replicaOf: cities\n    relevantSort: {strictness: 100}\n"
            "    customRanking: [{field: population, order: asc}]\n")


def export(rows: Rows) -> list[dict[str, Any]]:
    europe = [r for r in rows if r["continent"] == "Europe"]
    return [
        {"objectID": "pin-capital", "description": "A capital first",
         "conditions": [{"pattern": "", "anchoring": "is", "context": "home"}],
         "consequence": {"promote": [{"objectID": europe[-1]["id"], "position": 0}],
                         "hide": [{"objectID": europe[0]["id"]}],
                         "userData": {"banner": "home.png"}},
         "_metadata": {"lastUpdate": 1_700_000_000}},
        {"objectID": "europe-word", "conditions": [{"pattern": "europe",
                                                    "anchoring": "contains"}],
         "consequence": {"params": {"query": {"remove": ["europe"]},
                                    "filters": "region:Europe"},
                         "userData": {"banner": "europe.png"}}},
    ]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, rows: Rows) -> Iterator[Server]:
    workdir = tmp_path_factory.mktemp("rules-serve")
    (workdir / "rules").mkdir()
    (workdir / "rules" / "export.json").write_text(json.dumps(export(rows)), encoding="utf-8")
    server = start_server(config_text(), workdir)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def client(served: Server) -> SearchClientSync:
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    config = SearchConfig("any-app-id", "any-key")
    config.hosts = HostsCollection([Host(url=host, port=int(port), scheme="http")])
    return SearchClientSync.create_with_config(config)


def test_the_stock_client_lists_and_gets_rules(client: SearchClientSync, rows: Rows) -> None:
    found = client.search_rules("cities", {"query": "capital"})
    assert [r.object_id for r in found.hits] == ["pin-capital"]
    assert found.nb_hits == 1 and found.nb_pages == 1
    every = client.search_rules("cities", {"hitsPerPage": 1, "page": 1})
    assert [r.object_id for r in every.hits] == ["pin-capital"]  # objectID order
    rule = client.get_rule("cities", "europe-word")
    assert rule.object_id == "europe-word"
    assert rule.to_dict() == export(rows)[1]


def test_searches_follow_the_rules(client: SearchClientSync, rows: Rows) -> None:
    europe = [r for r in rows if r["continent"] == "Europe"]
    ids: list[str] = []
    for page in range(4):  # 100 hits a page at most: every page, and one past the end
        home = client.search_single_index("cities", {"query": "", "ruleContexts": ["home"],
                                                     "hitsPerPage": 100, "page": page})
        ids += [h.object_id for h in home.hits]
    assert ids[0] == europe[-1]["id"]
    assert europe[0]["id"] not in ids
    assert len(ids) == len(set(ids)) == home.nb_hits == len(rows) - 1
    assert home.user_data == [{"banner": "home.png"}]
    assert home.applied_rules == [{"objectID": "pin-capital"}]
    plain = client.search_single_index("cities", {"query": "", "hitsPerPage": 0})
    assert plain.nb_hits == len(rows) and plain.user_data is None
    worded = client.search_single_index("cities", {"query": "europe", "hitsPerPage": 100})
    assert worded.nb_hits == len(europe) <= 100
    assert {h.object_id for h in worded.hits} == {r["id"] for r in europe}
    assert worded.user_data == [{"banner": "europe.png"}]


def test_a_rule_searchport_cannot_honour_stops_startup(tmp_path: Path, rows: Rows) -> None:
    (tmp_path / "rules").mkdir()
    bad = [*export(rows), {"objectID": "synonyms", "conditions": [
        {"pattern": "nyc", "anchoring": "is", "alternatives": True}], "consequence": {}}]
    (tmp_path / "rules" / "export.json").write_text(json.dumps(bad), encoding="utf-8")
    (tmp_path / "config.yaml").write_text(config_text(), encoding="utf-8")
    done = subprocess.run([str(SEARCHPORT), "serve", "--config", str(tmp_path / "config.yaml"),
                           "--port", "0"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, check=False)
    assert done.returncode == 2
    assert ("indexes.cities.rules: rule 'synonyms': conditions[0].alternatives"
            in done.stderr)


def test_the_stock_client_reads_replicas(client: SearchClientSync, rows: Rows) -> None:
    settings = client.get_settings("cities")
    assert settings.replicas == ["cities-smallest", "virtual(cities-relevant)"]
    assert client.get_settings("cities-smallest").primary == "cities"
    smallest = client.search_single_index("cities-smallest", {"query": "",
                                                              "hitsPerPage": 5})
    by_population = sorted(rows, key=lambda r: r["population"])
    assert [h.object_id for h in smallest.hits] == [r["id"] for r in by_population[:5]]
    everything = client.search_single_index("cities-relevant", {
        "query": "", "hitsPerPage": 5, "relevancyStrictness": 0})
    assert everything.nb_sorted_hits == everything.nb_hits == len(rows)
    # not declared by the client's model (nor by the specification): read as an extra key,
    # as InstantSearch's relevantSort widget reads it from the JSON
    assert everything.to_dict()["appliedRelevancyStrictness"] == 0
    assert [h.object_id for h in everything.hits] == [r["id"] for r in by_population[:5]]
    ruled = client.search_single_index("cities-smallest", {
        "query": "", "ruleContexts": ["home"], "hitsPerPage": 3, "getRankingInfo": True})
    europe = [r for r in rows if r["continent"] == "Europe"]
    assert ruled.hits[0].object_id == europe[-1]["id"]
    assert ruled.hits[0].ranking_info is not None and ruled.hits[0].ranking_info.promoted
