"""The ``semantic`` section of a handle: what each engine takes, and ``searchport check``
on a handle that searches by meaning without the ``semantic`` extra."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchport.adapters.config_loader import parse_config
from searchport.adapters.semantic import settings
from searchport.domain.config import ConfigError
from searchport.entrypoints.cli.main import main

TANTIVY = {"engine": "tantivy", "path": "idx", "source": "rows.jsonl",
           "fields": {"title": {"type": "text"}, "body": {"field": "text", "type": "text"}}}
ELASTIC = {"engine": "elasticsearch", "host": "http://127.0.0.1:9200", "indexName": "books"}
OPENSEARCH = {**ELASTIC, "engine": "opensearch"}
TYPESENSE = {"engine": "typesense", "host": "http://127.0.0.1:8108", "indexName": "books",
             "apiKey": "k"}
MEILISEARCH = {"engine": "meilisearch", "host": "http://127.0.0.1:7700", "indexName": "books"}


def parsed(index: dict[str, object]) -> object:
    return parse_config(json.dumps({"indexes": {"docs": index}}), {})


@pytest.mark.parametrize("index", [ELASTIC, OPENSEARCH])
def test_the_elastic_engines_take_a_vector_field_and_an_embedder(
        index: dict[str, object]) -> None:
    config = parsed({**index, "semantic": {"field": "embedding", "ratio": 0.5}})
    semantic = config.indexes["docs"].semantic  # type: ignore[attr-defined]
    assert (semantic.embedder, semantic.field, semantic.ratio) == ("builtin", "embedding", 0.5)
    config = parsed({**index, "semantic": {"field": "embedding", "embedder": "openai",
                                           "url": "https://api.example/v1", "model": "m"}})
    assert config.indexes["docs"].semantic.embedder == "openai"  # type: ignore[attr-defined]
    # embedder engine: the model deployed in the engine that embeds the query
    config = parsed({**index, "semantic": {"field": "embedding", "embedder": "engine",
                                           "model": "minilm-deployed"}})
    semantic = config.indexes["docs"].semantic  # type: ignore[attr-defined]
    assert (semantic.embedder, semantic.model, semantic.floor) == (
        "engine", "minilm-deployed", 0.0)


def test_the_embedded_engine_takes_fields_and_the_builtin_embedder() -> None:
    config = parsed({**TANTIVY, "semantic": {"fields": ["title", "body"], "ratio": 0.3}})
    semantic = config.indexes["docs"].semantic  # type: ignore[attr-defined]
    assert (semantic.embedder, semantic.fields, semantic.ratio, semantic.timeout) == (
        "builtin", ["title", "body"], 0.3, 1.0)


@pytest.mark.parametrize(("index", "message"), [
    ({**TANTIVY, "semantic": {}}, "indexes.docs.semantic.fields: name the text fields"),
    ({**TANTIVY, "semantic": {"fields": [""]}}, "semantic.fields: name the text fields"),
    ({**TANTIVY, "semantic": {"fields": ["title"], "field": "vec"}},
     "semantic.field: only for a server engine"),
    ({**TANTIVY, "semantic": {"fields": ["title"], "embedder": "engine"}},
     "semantic.embedder: engine tantivy takes builtin or openai"),
    ({**TANTIVY, "semantic": {"fields": ["title"], "embedder": "openai", "model": "m"}},
     "semantic.url: required for embedder openai"),
    ({**TANTIVY, "semantic": {"fields": ["title"], "embedder": "openai", "model": "m",
                              "url": "ftp://x"}},
     "semantic.url: not an http:// or https:// URL"),
    ({**TANTIVY, "semantic": {"fields": ["title"], "model": "m"}},
     "semantic.model: only for embedder openai"),
    ({**TANTIVY, "semantic": {"fields": ["title"], "ratio": 1.5}},
     "semantic.ratio"),
    ({**TANTIVY, "semantic": {"fields": ["title"], "embeder": "builtin"}},
     "semantic: Object contains unknown field `embeder`"),
    ({**TYPESENSE, "semantic": {}},
     "indexes.docs.semantic.field: required"),
    ({**MEILISEARCH, "semantic": {"embedder": "engine"}},
     "indexes.docs.semantic.field: required"),
    ({**TYPESENSE, "semantic": {"field": "embedding", "fields": ["title"]}},
     "semantic.fields: only for the embedded engine"),
    ({**MEILISEARCH, "semantic": {"field": "docs", "embedder": "engine", "model": "m"}},
     "semantic.model: only for embedder openai"),
    ({**ELASTIC, "semantic": {}},
     "indexes.docs.semantic.field: required"),
    ({**OPENSEARCH, "semantic": {"embedder": "openai", "url": "http://e", "model": "m"}},
     "indexes.docs.semantic.field: required"),
    ({**ELASTIC, "semantic": {"field": "vec", "fields": ["title"]}},
     "semantic.fields: only for the embedded engine"),
    ({**ELASTIC, "semantic": {"field": "vec", "embedder": "engine"}},
     "indexes.docs.semantic.model: required for embedder engine on elasticsearch"),
    ({**OPENSEARCH, "semantic": {"field": "vec", "embedder": "engine"}},
     "indexes.docs.semantic.model: required for embedder engine on opensearch"),
    ({**OPENSEARCH, "semantic": {"field": "vec", "embedder": "engine", "model": "m",
                                 "url": "http://e"}},
     "semantic.url: only for embedder openai"),
    ({**ELASTIC, "semantic": {"field": "vec", "embedder": "engine", "model": "m",
                              "apiKey": "k"}},
     "semantic.apiKey: only for embedder openai"),
])
def test_a_semantic_section_an_engine_cannot_use_stops_startup(
        index: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        parsed(index)


@pytest.mark.parametrize("index", [TYPESENSE, MEILISEARCH])
@pytest.mark.parametrize("embedder", ["builtin", "openai", "engine"])
def test_the_server_engines_take_a_field_and_every_embedder(
        index: dict[str, object], embedder: str) -> None:
    extra = {"url": "https://api.openai.com/v1", "model": "m"} if embedder == "openai" else {}
    config = parsed({**index, "semantic": {"field": "embedding", "embedder": embedder,
                                           "ratio": 0.4, **extra}})
    semantic = config.indexes["docs"].semantic  # type: ignore[attr-defined]
    assert (semantic.embedder, semantic.field, semantic.ratio) == (embedder, "embedding", 0.4)


def test_check_names_the_extra_when_it_is_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(settings, "REQUIRED", ("searchport_no_such_package",))
    (tmp_path / "rows.jsonl").write_text('{"id": 1, "title": "x"}\n', "utf-8")
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"analytics": {"backend": "none"}, "indexes": {
        "docs": {**TANTIVY, "semantic": {"fields": ["title"]}},
        "plain": {k: v for k, v in TANTIVY.items()}}}), "utf-8")
    assert main(["check", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    assert "FAILED  docs (tantivy): semantic search needs packages that are not" in out
    assert "pip install 'searchport[semantic]'" in out
    assert "ok      plain (tantivy)" in out


def test_the_missing_extra_stops_a_build_with_the_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from searchport.adapters.tantivy import build_index
    from searchport.domain.errors import EngineUnavailable

    monkeypatch.setattr(settings, "REQUIRED", ("searchport_no_such_package",))
    (tmp_path / "rows.jsonl").write_text('{"id": 1, "title": "x"}\n', "utf-8")
    config = parsed({**TANTIVY, "semantic": {"fields": ["title"]}})
    with pytest.raises(EngineUnavailable, match=r"pip install 'searchport\[semantic\]'"):
        build_index("docs", config.indexes["docs"], tmp_path)  # type: ignore[attr-defined]



def test_the_similarity_floor_defaults_by_embedder_and_is_bounded() -> None:
    def floor(semantic: dict[str, object]) -> float:
        config = parsed({**TYPESENSE, "semantic": {"field": "embedding", **semantic}})
        return config.indexes["docs"].semantic.floor  # type: ignore[attr-defined,no-any-return]

    assert floor({}) == 0.5  # the builtin model's, measured
    assert floor({"embedder": "engine"}) == 0.0
    assert floor({"embedder": "openai", "url": "https://api.example/v1", "model": "m"}) == 0
    assert floor({"minSimilarity": 0.3}) == 0.3
    assert floor({"embedder": "engine", "minSimilarity": 0.7}) == 0.7
    for wrong in (-0.1, 1, 2):
        with pytest.raises(ConfigError, match="minSimilarity"):
            parsed({**TYPESENSE, "semantic": {"field": "embedding", "minSimilarity": wrong}})
