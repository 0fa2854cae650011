"""The tests' real Elasticsearch node (``tests/servers/elasticsearch``): it starts as an
unprivileged user, answers, and leaves nothing behind, whether stopped or orphaned."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.servers import elasticsearch
from tests.servers.elasticsearch import ElasticsearchServer, Unavailable

ROOT = Path(__file__).resolve().parents[2]


def test_missing_tools_skip_a_developer_and_fail_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Java"):
        elasticsearch.missing("no Java")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no Java"):
        elasticsearch.missing("no Java")


@pytest.mark.parametrize(("printed", "major"), [
    ('openjdk version "25.0.3" 2026-04-21 LTS', 25),
    ('openjdk version "17.0.15" 2025-04-15', 17),
    ('java version "1.8.0_412"', 8),
    ("no version here", None),
])
def test_the_java_version_is_read_from_its_banner(tmp_path: Path, printed: str,
                                                  major: int | None) -> None:
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text(f"#!/bin/sh\necho '{printed}' >&2\n")
    java.chmod(0o755)
    assert elasticsearch.java_major(tmp_path) == major


def _tools_or_skip() -> None:
    try:
        elasticsearch.tools()
    except Unavailable as exc:
        elasticsearch.missing(str(exc))


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="searchport-elasticsearch-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(_alive(pid) for pid in pids):
            return True
        time.sleep(0.2)
    return False


def test_a_node_starts_unprivileged_answers_and_stops_without_a_trace(workdir: Path) -> None:
    _tools_or_skip()
    server = ElasticsearchServer(workdir)
    server.start()
    try:
        assert server.process is not None
        pids = elasticsearch._group(server.process.pid)
        assert len(pids) == 2  # the launcher and the server JVM
        if os.geteuid() == 0:
            assert all(os.stat(f"/proc/{pid}").st_uid != 0 for pid in pids)
        nodes = httpx.get(f"{server.url}/_nodes", params={"filter_path": "nodes.*.version"})
        assert [n["version"] for n in nodes.json()["nodes"].values()] == [server.version]
        assert 0 < server.resident_bytes() < 1536 * 2**20
    finally:
        server.stop()
    assert _gone_within(pids, 5)
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url, timeout=2)


def test_the_node_started_by_hand_leaves_when_its_starter_is_killed(workdir: Path) -> None:
    """``python -m tests.servers.elasticsearch`` killed with SIGKILL (no cleanup of its own):
    the launcher gets SIGTERM from the kernel and takes the server JVM with it."""
    _tools_or_skip()
    port = elasticsearch.free_port()
    starter = subprocess.Popen(
        [sys.executable, "-m", "tests.servers.elasticsearch", "--port", str(port),
         "--home", str(workdir)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert starter.stdout is not None
        said = []
        for line in starter.stdout:
            said.append(line)
            if "is ready" in line:
                break
        else:
            pytest.fail("the node never said it was ready:\n" + "".join(said[-40:]))
        assert httpx.get(f"http://127.0.0.1:{port}/_cluster/health").status_code == 200
        launcher = next(pid for pid in _children(starter.pid))
        pids = elasticsearch._group(launcher)
        assert len(pids) == 2
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=10)
        assert _gone_within(pids, 30)
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait(timeout=10)


def _children(pid: int) -> list[int]:
    tasks = Path(f"/proc/{pid}/task")
    return [int(child) for task in tasks.iterdir()
            for child in (task / "children").read_text().split()]
