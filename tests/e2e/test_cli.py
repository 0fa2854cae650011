"""The command line: check, index build, serve on the shipped example config."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import SEARCHPORT, sample_config, start_server
from tests.redis_server import RedisServer


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SEARCHPORT), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        check=False,
    )


def test_check_reports_each_handle(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(sample_config(), encoding="utf-8")
    result = run("check", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok      cities (tantivy)" in result.stdout


def test_check_pings_the_redis_cache(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, password="check-secret-5Tg")
    server.start()
    try:
        (tmp_path / "config.yaml").write_text(sample_config(
            extra_top=f"cache: {{backend: redis, url: '{server.url}'}}"), encoding="utf-8")
        up = run("check", cwd=tmp_path)
    finally:
        server.stop()
    down = run("check", cwd=tmp_path)
    assert up.returncode == 0, up.stdout + up.stderr
    assert f"ok      cache (redis at redis://127.0.0.1:{server.port})" in up.stdout
    assert down.returncode == 1
    assert f"FAILED  cache (redis at redis://127.0.0.1:{server.port})" in down.stdout
    assert "check-secret-5Tg" not in up.stdout + up.stderr + down.stdout + down.stderr


def test_check_names_the_bad_key(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "indexes:\n  cities:\n    engine: tantivy\n    path: x\n    typo: 1\n", encoding="utf-8"
    )
    result = run("check", cwd=tmp_path)
    assert result.returncode == 2
    assert "indexes.cities" in result.stderr and "typo" in result.stderr
    (tmp_path / "config.yaml").write_text("indexes:\n  a:\n    engine: solr\n", encoding="utf-8")
    result = run("check", "--config", str(tmp_path / "config.yaml"), cwd=tmp_path)
    assert result.returncode == 2 and "indexes.a.engine" in result.stderr


def test_missing_variable_stops_startup_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "# apiKey: ${COMMENTED_OUT}\napiKey: ${SEARCHPORT_TEST_UNSET_VAR}\n", encoding="utf-8"
    )
    result = run("serve", cwd=tmp_path)
    assert result.returncode == 2
    assert "SEARCHPORT_TEST_UNSET_VAR" in result.stderr and "apiKey" in result.stderr
    assert "COMMENTED_OUT" not in result.stderr


def test_index_build_shows_progress_and_is_idempotent(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(sample_config(), encoding="utf-8")
    first = run("index", "build", "cities", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "indexed" in first.stdout and "docs" in first.stderr
    second = run("index", "build", "cities", cwd=tmp_path)
    assert second.returncode == 0 and "up to date" in second.stdout


def test_example_config_serves_the_demo(copy_example: Path, tmp_path_factory: Any) -> None:
    text = (copy_example / "config.example.yaml").read_text(encoding="utf-8")
    server = start_server(text, copy_example)
    try:
        body = server.client.get("/cities/search", params={"q": "paris"}).json()
        assert body["hits"][0]["name"] == "Paris"
        assert body["hits"][0]["country"] == "France"
        assert set(body["facets"]) == {"region", "country", "capital"}
        assert body["totalHits"] >= 1
    finally:
        server.stop()


def test_reload_mode_picks_up_config_changes(tmp_path: Path) -> None:
    import time

    server = start_server(sample_config(), tmp_path, args=("--reload",))
    try:
        assert server.client.get("/indexes").status_code == 200
        config = tmp_path / "config.yaml"
        config.write_text("apiKey: changed\n" + sample_config(), encoding="utf-8")
        deadline = time.monotonic() + 60
        status = 200
        while time.monotonic() < deadline and status != 401:
            time.sleep(0.3)
            try:
                status = server.client.get("/indexes").status_code
            except httpx.TransportError:  # the worker is restarting
                status = 0
        assert status == 401
    finally:
        server.stop()
