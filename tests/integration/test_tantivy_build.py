"""Building, rebuilding and reading sources, with real tantivy in temporary folders."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from searchport.adapters.tantivy import IndexBuildReport, TantivyEngine, build_index
from searchport.adapters.tantivy.documents import DocumentFactory
from searchport.domain.config import IndexConfig
from searchport.domain.errors import EngineUnavailable
from searchport.domain.query import RangeFilter, SearchQuery, TermFilter

pytestmark = pytest.mark.anyio


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def generations(index: Path) -> list[str]:
    return sorted(p.name for p in index.iterdir() if p.name.startswith("gen-"))


async def started(config: IndexConfig, base: Path) -> TantivyEngine:
    engine = TantivyEngine("books", config, base)
    await engine.start()
    return engine


def test_build_reports_and_skips_when_fresh(tmp_path: Path, ref: SimpleNamespace) -> None:
    rows = ref.load_rows()
    config = ref.config("index", ref.books)  # relative: resolved against base_dir
    first = build_index("books", config, tmp_path)
    assert isinstance(first, IndexBuildReport)
    assert (first.docs, first.rebuilt, first.skipped_rows, first.skipped_values) == (
        len(rows), True, 0, 0)
    assert first.path == str(tmp_path / "index") and first.seconds >= 0
    again = build_index("books", config, tmp_path)
    assert (again.docs, again.rebuilt) == (len(rows), False)
    forced = build_index("books", config, tmp_path, force=True)
    assert forced.rebuilt
    assert len(generations(tmp_path / "index")) == 1  # the old generation is gone


async def test_start_rebuilds_when_the_source_changes(tmp_path: Path,
                                                      ref: SimpleNamespace) -> None:
    source = write_jsonl(tmp_path / "books.jsonl", ref.load_rows()[:10])
    config = ref.config(tmp_path / "index", source)
    engine = await started(config, tmp_path)
    assert (await engine.search(SearchQuery(limit=0))).total == 10

    write_jsonl(source, ref.load_rows()[:12])
    engine = await started(config, tmp_path)
    assert (await engine.search(SearchQuery(limit=0))).total == 12

    # Same bytes, new mtime: no rebuild, and the new mtime is remembered.
    os.utime(source, ns=(1_000_000_000, 1_000_000_000))
    assert not build_index("books", config, tmp_path).rebuilt
    meta = json.loads((tmp_path / "index" / "searchport-index.json").read_text())
    assert meta["source"]["mtime_ns"] == 1_000_000_000


async def test_start_rebuilds_when_the_fields_change(tmp_path: Path,
                                                     ref: SimpleNamespace) -> None:
    config = ref.config(tmp_path / "index")
    await started(config, tmp_path)
    fewer = ref.config(tmp_path / "index", ref.books, title={"type": "text"},
                       year={"type": "keyword"})
    assert build_index("books", fewer, tmp_path).rebuilt
    engine = await started(fewer, tmp_path)
    result = await engine.search(SearchQuery(facets=("year",), limit=0))
    assert all(isinstance(v.value, str) for v in result.facets["year"])
    mapping = await engine.get_mapping()
    assert set(mapping["fields"]) == {"title", "year"}
    # an alias without a type changes nothing that is indexed
    aliased = ref.config(tmp_path / "index", ref.books, title={"type": "text"},
                         year={"type": "keyword"}, heading={"field": "title"})
    assert not build_index("books", aliased, tmp_path).rebuilt


async def test_bad_rows_and_values_are_skipped_and_counted(tmp_path: Path,
                                                           ref: SimpleNamespace) -> None:
    lines = [
        '{"id": "ok1", "title": "Fine", "year": 1999, "tags": ["a", 2]}',
        '{"id": "bad-json", "title": ',  # unreadable: a skipped row
        "[1, 2, 3]",  # not an object: a skipped row
        "null",  # not an object: a skipped row
        '{"title": "no id"}',  # no id: a skipped row
        '{"id": true, "title": "a boolean id"}',  # no usable id: a skipped row
        "",  # blank lines are not rows
        '{"id": "ok2", "title": 5, "year": "unknown", "price": "cheap", "available": "yes",'
        ' "published": "not a date", "location": "north", "genre": {"a": 1},'
        ' "tags": ["x", {"y": 1}, null], "pages": 12.5}',
        '{"id": "ok3", "year": 99999999999999999999, "location": {"lat": 91, "lon": 0},'
        ' "published": "1600-01-01", "price": 7}',
    ]
    source = tmp_path / "books.jsonl"
    source.write_text("\n".join(lines) + "\n", "utf-8")
    config = ref.config(tmp_path / "index", source)
    report = build_index("books", config, tmp_path)
    # ok2: title, year, price, available, published, location, genre, tags[1], pages;
    # ok3: year, location, published.
    assert (report.docs, report.skipped_rows, report.skipped_values) == (3, 5, 12)

    engine = await started(config, tmp_path)
    ok2 = await engine.get_document("ok2")
    assert ok2 is not None and ok2.source["year"] == "unknown"  # stored as written
    tags = await engine.search(SearchQuery(facets=("tags",), limit=0))
    assert {v.value for v in tags.facets["tags"]} == {"a", "2", "x"}
    cheap = await engine.search(SearchQuery(filters=(RangeFilter(field="price", min=0),)))
    assert [h.id for h in cheap.hits] == ["ok3"]


async def test_later_rows_replace_earlier_ones_with_the_same_id(
        tmp_path: Path, ref: SimpleNamespace) -> None:
    source = write_jsonl(tmp_path / "b.jsonl", [
        {"id": "a", "title": "first"}, {"id": "b", "title": "other"}, {"id": 7, "title": "x"},
        {"id": "a", "title": "second"}, {"id": "7", "title": "seven"}])
    config = ref.config(tmp_path / "index", source)
    report = build_index("books", config, tmp_path)
    assert (report.docs, report.duplicate_ids) == (3, 2)
    engine = await started(config, tmp_path)
    hit = await engine.get_document("a")
    assert hit is not None and hit.source["title"] == "second"
    assert (await engine.search(SearchQuery(text="first"))).total == 0
    seven = await engine.get_document("7")
    assert seven is not None and seven.source == {"id": "7", "title": "seven"}


async def test_json_array_gzip_and_csv_sources(tmp_path: Path, ref: SimpleNamespace) -> None:
    rows = ref.load_rows()
    array = tmp_path / "books.json"
    array.write_text(json.dumps([*rows, "not an object"]), "utf-8")
    gzipped = tmp_path / "books.jsonl.gz"
    gzipped.write_bytes(gzip.compress(ref.books.read_bytes()))
    for i, source in enumerate((array, gzipped)):
        config = ref.config(tmp_path / f"index{i}", source)
        report = build_index("books", config, tmp_path)
        assert (report.docs, report.skipped_rows) == (len(rows), 1 if i == 0 else 0)
        engine = await started(config, tmp_path)
        first = await engine.get_document(ref.doc_id(rows[0]))
        assert first is not None and first.source == rows[0]

    csv_source = tmp_path / "books.csv"
    csv_source.write_text(
        "id,title,year,price,available,published,location,tags,isbn\n"
        'c1,"Castle, the Sequel",1999,9.5,true,2001-02-03,"48.85,2.35","[""a"", ""b""]",007\n'
        "c2,Second,,x,false,,,plain,\n", "utf-8")
    config = ref.config(tmp_path / "csv-index", csv_source)
    report = build_index("books", config, tmp_path)
    assert (report.docs, report.skipped_values) == (2, 1)
    engine = await started(config, tmp_path)
    c1 = await engine.get_document("c1")
    assert c1 is not None and c1.source == {
        "id": "c1", "title": "Castle, the Sequel", "year": 1999, "price": 9.5,
        "available": True, "published": "2001-02-03",
        "location": {"lat": 48.85, "lon": 2.35}, "tags": ["a", "b"], "isbn": "007"}
    c2 = await engine.get_document("c2")
    assert c2 is not None and c2.source == {"id": "c2", "title": "Second", "price": "x",
                                            "available": False, "tags": "plain"}
    found = await engine.search(SearchQuery(filters=(TermFilter(field="tags", values=("b",)),)))
    assert [h.id for h in found.hits] == ["c1"]


def test_progress_is_reported(tmp_path: Path, ref: SimpleNamespace) -> None:
    rows = [{"id": str(i), "title": f"book {i}"} for i in range(2500)]
    source = write_jsonl(tmp_path / "many.jsonl", rows)
    calls: list[tuple[int, int | None]] = []
    build_index("books", ref.config(tmp_path / "i1", source), tmp_path,
                progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 2500), (1000, 2500), (2000, 2500), (2500, 2500)]

    gzipped = tmp_path / "many.jsonl.gz"
    gzipped.write_bytes(gzip.compress(source.read_bytes()))
    calls.clear()
    build_index("books", ref.config(tmp_path / "i2", gzipped), tmp_path,
                progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, None), (1000, None), (2000, None), (2500, 2500)]


async def test_a_failed_build_leaves_the_previous_index_live(
        tmp_path: Path, ref: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    config = ref.config(tmp_path / "index")
    build_index("books", config, tmp_path)
    before = generations(tmp_path / "index")

    def explode(self: DocumentFactory, source: Any, seq: int) -> Any:
        if seq == 20:
            raise RuntimeError("disk on fire")
        return original(self, source, seq)

    original = DocumentFactory.make
    monkeypatch.setattr(DocumentFactory, "make", explode)
    with pytest.raises(RuntimeError):
        build_index("books", config, tmp_path, force=True)
    monkeypatch.undo()
    assert generations(tmp_path / "index") == before
    engine = await started(config, tmp_path)
    assert (await engine.search(SearchQuery(limit=0))).total == len(ref.load_rows())


async def test_a_running_engine_survives_a_rebuild(tmp_path: Path, ref: SimpleNamespace) -> None:
    config = ref.config(tmp_path / "index")
    engine = await started(config, tmp_path)
    build_index("books", config, tmp_path, force=True)  # e.g. `searchport index build`
    result = await engine.search(SearchQuery(text="castle", highlight=True, limit=100))
    assert result.total > 0 and result.hits[0].source


async def test_an_index_without_its_source_still_opens(tmp_path: Path,
                                                       ref: SimpleNamespace) -> None:
    source = tmp_path / "books.jsonl"
    shutil.copy(ref.books, source)
    config = ref.config(tmp_path / "index", source)
    build_index("books", config, tmp_path)
    source.unlink()
    engine = await started(config, tmp_path)
    assert (await engine.search(SearchQuery(limit=0))).total == len(ref.load_rows())


async def test_missing_source_or_path_is_unavailable(tmp_path: Path,
                                                     ref: SimpleNamespace) -> None:
    with pytest.raises(EngineUnavailable, match="not found"):
        await started(ref.config(tmp_path / "index", tmp_path / "missing.jsonl"), tmp_path)
    no_path = IndexConfig(engine="tantivy", source=str(ref.books))
    with pytest.raises(EngineUnavailable, match="path"):
        await started(no_path, tmp_path)
    untyped = ref.config(tmp_path / "i2", ref.books, title={"weight": 2})
    with pytest.raises(EngineUnavailable, match=r"fields\.title\.type"):
        await started(untyped, tmp_path)
    # a weighted alias of a typed field is fine
    aliased = ref.config(tmp_path / "i3", ref.books, title={"type": "text"},
                         heading={"field": "title", "weight": 2})
    await started(aliased, tmp_path)
