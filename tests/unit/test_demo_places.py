"""The demo's ``places``: a thousand described cities, searched by meaning when the
``semantic`` extra is installed and by words alone when it is not (README's first command
installs no extra, and must still serve the demo)."""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from searchport import demo
from searchport.adapters.config_loader import parse_config
from searchport.adapters.semantic import settings
from searchport.entrypoints.cli.main import _demo_note, _demo_text, main


def rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def test_places_search_by_meaning_only_with_the_extra() -> None:
    with_extra = parse_config(demo.config_text(semantic=True), os.environ).indexes
    without = parse_config(demo.config_text(semantic=False), os.environ).indexes
    semantic = with_extra["places"].semantic
    assert semantic is not None and list(semantic.fields) == ["description"]
    assert without["places"].semantic is None
    assert with_extra["cities"] == without["cities"]
    for text in (demo.config_text(semantic=True), demo.config_text(semantic=False)):
        assert demo.SOURCE_MARKER not in text and demo.PLACES_MARKER not in text
    assert Path(str(with_extra["places"].source)) == demo.PLACES


def test_without_the_extra_the_demo_says_so_and_check_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(settings, "REQUIRED", ("searchport_no_such_package",))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SEARCHPORT_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert "semantic:" not in _demo_text().split("places:")[1].split("analytics:")[0]
    assert "searched by words only" in _demo_note(tmp_path)
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "note    places: searched by words only" in out
    assert "ok      places (tantivy)" in out


def test_with_the_extra_check_says_places_is_searched_by_meaning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SEARCHPORT_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert "by words and by meaning" in _demo_note(tmp_path)
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "note    places" not in out
    assert "searched by words and by meaning" in out.split("places (tantivy)")[1]


def test_the_places_are_demo_cities_each_with_its_own_description() -> None:
    places, cities = rows(demo.PLACES), {row["id"]: row for row in rows(demo.SOURCE)}
    assert 500 <= len(places) <= 2_000
    assert len({place["id"] for place in places}) == len(places)
    descriptions = [place["description"] for place in places]
    assert len(set(descriptions)) == len(places)
    for place in places:
        city = cities[place["id"]]
        assert (place["name"], place["country"], place["capital"]) == (
            city["name"], city["country"], city["capital"])
        assert place["name"] in place["description"]
        assert place["country"] in place["description"]
    # every capital, and sentences that do not all open alike
    assert sum(place["capital"] for place in places) == sum(
        city["capital"] for city in cities.values())
    openings = Counter(" ".join(d.split()[:2]) for d in descriptions)
    assert openings.most_common(1)[0][1] < len(places) / 3


def test_the_judged_paraphrases_name_places_of_the_demo() -> None:
    """bench/paraphrase_queries.json (bench/relevance.py --meaning): every judged id is a
    place, under the name the file gives it, graded 1 or 2, a query's best grade 2."""
    judged = json.loads((Path(__file__).resolve().parents[2] / "bench"
                         / "paraphrase_queries.json").read_text(encoding="utf-8"))["queries"]
    places = {place["id"]: place["name"] for place in rows(demo.PLACES)}
    assert 30 <= len(judged) <= 60
    assert len({query["q"] for query in judged}) == len(judged)
    for query in judged:
        grades = {place_id: grade for place_id, _name, grade in query["judged"]}
        assert max(grades.values()) == 2 and set(grades.values()) <= {1, 2}
        for place_id, name, _grade in query["judged"]:
            assert places[place_id] == name
