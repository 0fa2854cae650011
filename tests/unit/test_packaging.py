"""The built wheel holds every module and asset of the source tree.

A deployment installs the wheel, not the checkout: a subpackage or asset left out of it
passes every test run from an editable install and fails only in production (a worker
dying on ModuleNotFoundError). This builds the wheel the way a deployment does and
compares its file list with ``src/``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def source_files() -> set[str]:
    return {
        "searchport/" + path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_the_wheel_ships_every_module_and_asset(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path),
         str(ROOT)],
        check=True, capture_output=True, timeout=600,
    )
    (wheel,) = tmp_path.glob("searchport-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (entry_points,) = (n for n in names if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    shipped = {name for name in names if name.startswith("searchport/")}
    expected = source_files()
    assert {"searchport/demo/cities.jsonl.gz", "searchport/entrypoints/ui/index.html",
            "searchport/entrypoints/algolia/__init__.py"} <= expected
    assert sorted(expected - shipped) == []
    assert "searchport = searchport.entrypoints.cli.main:console" in scripts


def test_the_builtin_demo_is_the_example_configs_demo() -> None:
    """``serve`` with no config serves the same cities handle (rules included) and replicas
    as config.example.yaml."""
    import yaml

    example = yaml.safe_load((ROOT / "config.example.yaml").read_text(encoding="utf-8"))
    builtin = yaml.safe_load((SRC / "demo" / "config.yaml").read_text(encoding="utf-8"))
    moved = ("path", "source")  # the built-in demo lives in the per-user cache folder
    assert {k: v for k, v in builtin["indexes"]["cities"].items() if k not in moved} == {
        k: v for k, v in example["indexes"]["cities"].items() if k not in moved
    }
    # and the same replicas of it
    replicas = {h: i for h, i in example["indexes"].items() if i.get("replicaOf") == "cities"}
    assert replicas and replicas == {
        h: i for h, i in builtin["indexes"].items() if i.get("replicaOf") == "cities"}
    assert (ROOT / example["indexes"]["cities"]["source"]).is_file()


def test_no_file_the_wheel_ships_is_ignored_by_git() -> None:
    """The wheel is built from the working tree, a deployment from a clone: a file under
    ``src/`` that git ignores (the demo's ``config.yaml`` once matched a ``config.yaml``
    pattern) ships from the author's tree and is missing from everyone else's."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(
        [git, "ls-files", "--others", "--ignored", "--exclude-standard", "--", "src"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.split()
    shipped = [name for name in ignored
               if "__pycache__" not in name and not name.endswith(".pyc")]
    assert shipped == []


def test_the_demo_lives_in_the_xdg_cache_or_in_home_dot_cache() -> None:
    from searchport.entrypoints.cli.main import demo_home

    home = Path.home()
    assert demo_home({"XDG_CACHE_HOME": "/var/cache/me"}) == Path(
        "/var/cache/me/searchport/demo")
    assert demo_home({}) == home / ".cache" / "searchport" / "demo"
    assert demo_home({"XDG_CACHE_HOME": ""}) == home / ".cache" / "searchport" / "demo"
    # the XDG spec: a relative path is invalid and ignored (else it would follow the cwd)
    assert demo_home({"XDG_CACHE_HOME": "rel"}) == home / ".cache" / "searchport" / "demo"
