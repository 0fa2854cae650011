"""``searchport init``: the example configuration, its demo handle on the package's demo
data, written once and never over an existing file."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from searchport import demo
from searchport.adapters.config_loader import load_config
from searchport.entrypoints.cli.init_config import cmd_init, starting_config, write_starting_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config.example.yaml"


def test_the_package_ships_the_repositorys_example() -> None:
    """A link in the package to the repository's file: one file to edit, copied into the
    wheel (the installed-service test reads what init writes from the wheel)."""
    assert demo.EXAMPLE_CONFIG.resolve() == EXAMPLE.resolve()


def test_only_the_demo_source_line_differs_from_the_example() -> None:
    example = EXAMPLE.read_text(encoding="utf-8").splitlines()
    written = starting_config().splitlines()
    changed = [(old, new) for old, new in zip(example, written, strict=True) if old != new]
    assert len(changed) == 1
    old, new = changed[0]
    assert old.split("#")[0].strip() == "source: src/demo/cities.jsonl.gz"
    assert new.split("#")[0].strip() == f'source: "{demo.SOURCE}"'
    assert old.split("#", 1)[1] == new.split("#", 1)[1]  # its comment stays


def test_the_written_config_loads_as_the_example_does_with_the_packages_data(
    tmp_path: Path,
) -> None:
    target = write_starting_config(tmp_path / "new" / "folder")
    assert target == (tmp_path / "new" / "folder" / "config.yaml").resolve()
    written = load_config(target, {})
    example = load_config(EXAMPLE, {})
    source = written.indexes["cities"].source
    assert source is not None and Path(source) == demo.SOURCE and demo.SOURCE.is_file()
    assert (ROOT / str(example.indexes["cities"].source)).resolve() == demo.SOURCE
    assert written.indexes.keys() == example.indexes.keys()
    assert written.port == example.port == 3000
    cities = written.indexes["cities"]
    assert {k: getattr(cities, k) for k in cities.__struct_fields__ if k != "source"} == {
        k: getattr(example.indexes["cities"], k) for k in cities.__struct_fields__
        if k != "source"}


def test_an_existing_config_is_never_replaced(tmp_path: Path) -> None:
    existing = tmp_path / "config.yaml"
    existing.write_text("port: 4000\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        write_starting_config(tmp_path)
    assert existing.read_text(encoding="utf-8") == "port: 4000\n"


def test_the_command_says_what_it_wrote_and_what_to_run_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert cmd_init(argparse.Namespace(folder=str(tmp_path))) == 0
    said = capsys.readouterr().out
    target = tmp_path.resolve() / "config.yaml"
    assert f"check --config {target}" in said and f"serve --config {target}" in said
    assert cmd_init(argparse.Namespace(folder=str(tmp_path))) == 1
    refused = capsys.readouterr()
    assert f"{target} already exists" in refused.err and refused.out == ""
