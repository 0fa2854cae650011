"""``rules:`` on a handle: a list, or a JSON export file (array or one rule per line),
loaded at startup; what cannot be honoured stops it with the rule's objectID and key path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchport.adapters.config_loader import load_config, parse_config
from searchport.domain.config import ConfigError
from searchport.domain.rules.rule_sets import rule_sets
from searchport.domain.rules.ruleset import RuleQuery
from searchport.entrypoints.cli.main import main

HANDLE = """
indexes:
  books:
    engine: tantivy
    path: idx/books
    fields:
      kind: {field: genre}
      id: {type: keyword}
"""
RULES = [
    {"objectID": "cheap", "conditions": [{"pattern": "cheap", "anchoring": "contains"}],
     "consequence": {"params": {"filters": "kind:sale", "query": {"remove": ["cheap"]}}}},
    {"objectID": "pin", "consequence": {"promote": [{"objectID": "b1", "position": 0}]}},
]


def write(tmp_path: Path, rules: object) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(HANDLE + f"    rules: {json.dumps(rules)}\n", encoding="utf-8")
    return path


def test_rules_given_as_a_list_load_and_apply_with_aliases(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, RULES), {})
    assert [r.object_id for r in config.indexes["books"].rule_list] == ["cheap", "pin"]
    plan = rule_sets(config)["books"].apply(RuleQuery(text="cheap dune"))
    assert plan.query == "dune"
    assert plan.applied == ("cheap", "pin")
    assert [f.field for f in plan.filters] == ["genre"]  # the alias's real field


@pytest.mark.parametrize("form", ["array", "lines"])
def test_rules_given_as_a_file_relative_to_the_config(tmp_path: Path, form: str) -> None:
    (tmp_path / "rules").mkdir()
    exported = [{**r, "_metadata": {"lastUpdate": 1700000000}} for r in RULES]  # Algolia's
    text = json.dumps(exported) if form == "array" else "\n".join(json.dumps(r)
                                                                  for r in exported)
    (tmp_path / "rules" / "export.json").write_text(text, encoding="utf-8")
    config = load_config(write(tmp_path, "rules/export.json"), {})
    assert [r.object_id for r in config.indexes["books"].rule_list] == ["cheap", "pin"]


def test_a_missing_or_broken_rules_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"indexes.books.rules: cannot read the rules file"):
        load_config(write(tmp_path, "nowhere.json"), {})
    (tmp_path / "bad.json").write_text("[{", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"indexes.books.rules: the rules file .* not JSON"):
        load_config(write(tmp_path, "bad.json"), {})


def test_a_rule_searchport_cannot_honour_names_its_objectid_and_key_path() -> None:
    bad = [*RULES, {"objectID": "wide", "consequence": {"params": {"hitsPerPage": 50}}}]
    with pytest.raises(ConfigError) as caught:
        parse_config(HANDLE + f"    rules: {json.dumps(bad)}\n", {})
    assert str(caught.value) == ("indexes.books.rules[2].consequence.params: Object contains "
                                 "unknown field `hitsPerPage` (rule 'wide')")


def test_a_rule_with_a_bad_filter_stops_startup_with_its_objectid() -> None:
    bad = [{"objectID": "oops", "consequence": {"params": {"filters": "kind:a OR ("}}}]
    config = parse_config(HANDLE + f"    rules: {json.dumps(bad)}\n", {})
    with pytest.raises(ConfigError, match=r"^indexes.books.rules: rule 'oops': "
                                          r"consequence.params.filters: "):
        rule_sets(config)


def test_promote_and_hide_load_on_every_engine_without_a_typed_id_field() -> None:
    text = HANDLE.replace("      id: {type: keyword}\n", "") + f"    rules: {json.dumps(RULES)}\n"
    found = rule_sets(parse_config(text, {}))["books"]
    assert [r.object_id for r in found.rules] == [r["objectID"] for r in RULES]
    for engine in ("elasticsearch", "opensearch", "meilisearch", "typesense"):
        other = text.replace("engine: tantivy", f"engine: {engine}\n    host: "
                             "http://127.0.0.1:9200\n    indexName: books")
        found = rule_sets(parse_config(other, {}))["books"]
        assert [r.object_id for r in found.rules] == [r["objectID"] for r in RULES]


def test_searchport_check_refuses_such_a_config(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    bad = [{"objectID": "oops", "conditions": [{"pattern": "x", "anchoring": "contains",
                                                "alternatives": True}], "consequence": {}}]
    assert main(["check", "--config", str(write(tmp_path, bad))]) == 2
    assert "rule 'oops': conditions[0].alternatives" in capsys.readouterr().err


def test_serve_checks_the_rules_apart_and_keeps_none(tmp_path: Path) -> None:
    """``serve``'s parent reads its config without rules and checks them in a child."""
    from searchport.entrypoints.cli.main import _assemble_apart

    good = write(tmp_path, RULES)
    _assemble_apart(good)
    assert load_config(good, {}, rules=False).indexes["books"].rule_list == []
    bad = [{"objectID": "oops", "consequence": {"params": {"filters": "kind:a OR ("}}}]
    with pytest.raises(ConfigError, match=r"^indexes.books.rules: rule 'oops': "
                                          r"consequence.params.filters: "):
        _assemble_apart(write(tmp_path, bad))
