"""The tests' OpenSearch node started by hand (``python -m tests.servers.opensearch``): it
says when it is ready, answers, and leaves nothing running after SIGTERM, nor when its
starter is killed outright."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.servers import opensearch

ROOT = Path(__file__).resolve().parents[2]


def _started_by_hand(port: int) -> subprocess.Popen[str]:
    try:
        opensearch.tools()
    except opensearch.Unavailable as exc:
        opensearch.missing(str(exc))
    starter = subprocess.Popen(
        [sys.executable, "-m", "tests.servers.opensearch", "--port", str(port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert starter.stdout is not None
    said = []
    for line in starter.stdout:
        said.append(line)
        if "is ready" in line:
            return starter
    starter.kill()
    pytest.fail("the node never said it was ready:\n" + "".join(said[-40:]))


def _node_pids(starter: subprocess.Popen[str]) -> list[int]:
    tasks = Path(f"/proc/{starter.pid}/task")
    return [int(child) for task in tasks.iterdir()
            for child in (task / "children").read_text().split()]


def _gone(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() for pid in pids):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL])
def test_the_node_started_by_hand_answers_and_leaves_nothing(stop: signal.Signals) -> None:
    port = opensearch.free_port()
    starter = _started_by_hand(port)
    try:
        answer = httpx.get(f"http://127.0.0.1:{port}/", timeout=10).json()
        assert answer["version"]["distribution"] == "opensearch"
        nodes = _node_pids(starter)
        assert len(nodes) == 1  # the JVM
        starter.send_signal(stop)
        starter.wait(timeout=40)
        assert _gone(nodes, 30)
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait(timeout=10)
