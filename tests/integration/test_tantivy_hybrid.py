"""Hybrid search on the embedded engine, with real tantivy and the real builtin model over a
handful of places: vectors built beside the index (and reused on rebuild), meaning winning
where words cannot, words winning where they match, filters narrowing both halves, facets
describing the fused hits. Expected rankings are the model's own similarities, computed
here from the vectors it gives, fused by the paper's formula written out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchport.domain.config import FieldConfig, IndexConfig, SemanticConfig
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import SearchQuery, TermFilter
from searchport.entrypoints.cli.main import main
from tests.semantic_model import fused, nearest, require_model

pytestmark = pytest.mark.anyio

PLACES = [
    ("1", "Brighton", "Europe", "A seaside resort town with a pebble beach and a pier."),
    ("2", "Zermatt", "Europe", "An alpine village at the foot of the Matterhorn, famous for "
                               "skiing in winter."),
    ("3", "Venice", "Europe", "A historic city built on a lagoon, crossed by canals and "
                              "bridges."),
    ("4", "Las Vegas", "Americas", "A desert city known for its casinos, gambling and shows."),
    ("5", "Oxford", "Europe", "An old university town with colleges and libraries."),
    ("6", "Reykjavik", "Europe", "The northernmost capital, with geothermal pools and "
                                 "volcanoes nearby."),
    ("7", "Detroit", "Americas", "A city of car factories, the home of the automobile "
                                 "industry."),
    ("8", "Mumbai", "Asia", "A huge coastal metropolis and the centre of India's film "
                            "industry."),
    ("9", "Aspen", "Americas", "A mountain town in Colorado with ski slopes and luxury "
                               "chalets."),
    ("10", "Kyoto", "Asia", "The old imperial capital, full of temples, shrines and gardens."),
]
FIELDS = {"name": FieldConfig(type="text", weight=3),
          "description": FieldConfig(type="text", searchable=True),
          "region": FieldConfig(type="keyword")}


@pytest.fixture(scope="module")
def model() -> object:
    require_model()
    from searchport.adapters.semantic.minilm import MiniLM

    return MiniLM()


def _rows(places: list[tuple[str, str, str, str]]) -> list[dict[str, str]]:
    return [{"id": i, "name": n, "region": r, "description": d} for i, n, r, d in places]


def _config(tmp_path: Path, places: list[tuple[str, str, str, str]] = PLACES) -> IndexConfig:
    source = tmp_path / "places.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in _rows(places)), "utf-8")
    return IndexConfig(engine="tantivy", path=str(tmp_path / "index"), source=str(source),
                       fields=FIELDS, semantic=SemanticConfig(fields=["name", "description"]))


async def _engine(config: IndexConfig, tmp_path: Path) -> object:
    from searchport.adapters.tantivy import TantivyEngine

    engine = TantivyEngine("places", config, tmp_path)
    await engine.start()
    return engine


def _by_meaning(model: object, text: str, places: list[tuple[str, str, str, str]] = PLACES
                ) -> list[str]:
    """The places' ids, nearest in meaning to ``text`` first: the model's cosines."""
    return [doc_id for doc_id, _ in nearest(model, places, text)]


def _fused(keyword: list[str], meaning: list[tuple[str, float]], share: float) -> list[str]:
    return [doc_id for doc_id, _ in fused(keyword, meaning, share)]


async def _ids(engine: object, query: SearchQuery, model: object) -> list[str]:
    vector = tuple(model.embed([query.text])[0].tolist())  # type: ignore[attr-defined]
    import msgspec

    query = msgspec.structs.replace(query, vector=vector)
    result = await engine.search(query)  # type: ignore[attr-defined]
    return [hit.id for hit in result.hits]


async def test_meaning_finds_what_words_cannot(tmp_path: Path, model: object) -> None:
    engine = await _engine(_config(tmp_path), tmp_path)
    text = "where are movies made"
    words = await engine.search(SearchQuery(text=text, limit=10))  # type: ignore[attr-defined]
    assert words.total == 0  # no place says any of these words
    found = await _ids(engine, SearchQuery(text=text, limit=10, semantic=1.0), model)
    assert found == _by_meaning(model, text)
    assert found[0] == "8"  # Mumbai, the centre of India's film industry


async def test_hybrid_is_the_fusion_of_both_rankings(tmp_path: Path, model: object) -> None:
    engine = await _engine(_config(tmp_path), tmp_path)
    text = "ski resort in the mountains"
    words = await engine.search(SearchQuery(text=text, limit=10))  # type: ignore[attr-defined]
    keyword = [hit.id for hit in words.hits]
    assert len(keyword) >= 3  # Aspen, Zermatt, Brighton...: each has one of the words
    for share in (0.3, 0.5, 0.8):
        found = await _ids(engine, SearchQuery(text=text, limit=10, semantic=share), model)
        assert found == _fused(keyword, nearest(model, PLACES, text), share)


async def test_words_win_on_a_name(tmp_path: Path, model: object) -> None:
    engine = await _engine(_config(tmp_path), tmp_path)
    found = await _ids(engine, SearchQuery(text="oxford", limit=3, semantic=0.5), model)
    assert found[0] == "5"


async def test_filters_narrow_both_halves_and_facets_count_the_fused_hits(
        tmp_path: Path, model: object) -> None:
    engine = await _engine(_config(tmp_path), tmp_path)
    text = "ski resort in the mountains"
    query = SearchQuery(text=text, limit=10, semantic=0.5, facets=("region",),
                        filters=(TermFilter(field="region", values=("Americas",)),))
    vector = tuple(model.embed([text])[0].tolist())  # type: ignore[attr-defined]
    import msgspec

    words = await engine.search(msgspec.structs.replace(  # type: ignore[attr-defined]
        query, semantic=0.0))
    result = await engine.search(msgspec.structs.replace(  # type: ignore[attr-defined]
        query, vector=vector))
    americas = [p for p in PLACES if p[2] == "Americas"]
    keyword = [hit.id for hit in words.hits]
    assert keyword and {p[0] for p in americas} >= set(keyword)
    expected = _fused(keyword, nearest(model, americas, text), 0.5)
    assert [h.id for h in result.hits] == expected
    assert result.total == len(expected)
    assert [(v.value, v.count) for v in result.facets["region"]] == [("Americas", len(expected))]


async def test_a_page_past_the_first(tmp_path: Path, model: object) -> None:
    engine = await _engine(_config(tmp_path), tmp_path)
    text = "old town"
    everything = await _ids(engine, SearchQuery(text=text, limit=10, semantic=0.5), model)
    second = await _ids(engine, SearchQuery(text=text, offset=4, limit=4, semantic=0.5), model)
    assert second == everything[4:8]


async def test_a_sorted_search_is_not_ranked_by_meaning(tmp_path: Path, model: object) -> None:
    from searchport.domain.query import SortClause

    engine = await _engine(_config(tmp_path), tmp_path)
    with pytest.raises(InvalidRequest, match="sort"):
        await _ids(engine, SearchQuery(text="town", semantic=0.5, sort=(
            SortClause(field="region", order="asc"),)), model)


def test_a_rebuild_embeds_only_the_records_that_changed(tmp_path: Path, model: object) -> None:
    from searchport.adapters.tantivy import build_index

    config = _config(tmp_path)
    first = build_index("places", config, tmp_path)
    assert first.embedded == len(PLACES)
    assert build_index("places", config, tmp_path).embedded == 0  # up to date
    changed = [*PLACES[:-1], ("10", "Kyoto", "Asia", "A city of geishas and tea houses."),
               ("11", "Cusco", "Americas", "An Inca city high in the Andes.")]
    second = build_index("places", _config(tmp_path, changed), tmp_path)
    assert second.rebuilt and second.embedded == 2
    forced = build_index("places", _config(tmp_path), tmp_path, force=True)
    assert forced.embedded == 1  # Kyoto's first text again (only the last build's are kept)


async def test_semantic_fields_changed_recompute_the_vectors_only(
        tmp_path: Path, model: object) -> None:
    import msgspec

    from searchport.adapters.tantivy import build_index

    config = _config(tmp_path)
    build_index("places", config, tmp_path)
    names_only = msgspec.structs.replace(config, semantic=SemanticConfig(fields=["name"]))
    report = build_index("places", names_only, tmp_path)
    assert not report.rebuilt and report.embedded == len(PLACES)


def test_check_says_whether_the_vectors_are_built(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_model()
    (tmp_path / "rows.jsonl").write_text('{"id": 1, "title": "x"}\n', "utf-8")
    config = tmp_path / "config.yaml"
    docs = {"engine": "tantivy", "path": "idx", "source": "rows.jsonl",
            "fields": {"title": {"type": "text"}}, "semantic": {"fields": ["title"]}}
    config.write_text(json.dumps({"analytics": {"backend": "none"},
                                  "indexes": {"docs": docs}}), "utf-8")
    assert main(["index", "build", "--config", str(config)]) == 0
    assert main(["check", "--config", str(config)]) == 0
    assert "1 documents, up to date; vectors up to date (384 dimensions, " \
           "all-MiniLM-L6-v2-int8)" in capsys.readouterr().out
    config.write_text(json.dumps({"analytics": {"backend": "none"}, "indexes": {"docs": {
        **docs, "semantic": {"fields": ["title", "body"]}}}}), "utf-8")
    assert main(["check", "--config", str(config)]) == 0
    assert "vectors outdated or missing: `serve` computes them" in capsys.readouterr().out
