"""Graceful shutdown of a real ``searchport serve`` process: on SIGTERM the requests under
way finish, new connections are refused, the pools close, and ``shutdownTimeout`` bounds it."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, start_server
from tests.misbehaving_upstream import MisbehavingUpstream, misbehaving_upstream


@pytest.fixture
def upstream() -> Iterator[MisbehavingUpstream]:
    with misbehaving_upstream() as server:
        yield server


def es_config(url: str, shutdown_timeout: int) -> str:
    return (
        f"shutdownTimeout: {shutdown_timeout}\n"
        "indexes:\n  es:\n    engine: elasticsearch\n"
        f"    host: {url}\n    indexName: cities\n    timeout: 20\n"
    )


def search_in_background(server: Server) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def call() -> None:
        started = time.monotonic()
        try:
            response = httpx.get(f"{server.url}/es/search", timeout=30)
            outcome["status"] = response.status_code
            outcome["body"] = response.json()
        except httpx.HTTPError as exc:
            outcome["error"] = repr(exc)
        outcome["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=call)
    thread.start()
    return thread, outcome


def searches(upstream: MisbehavingUpstream) -> int:
    return sum(path.endswith("/_search") for _, path in upstream.data_requests())


def start_slow(upstream: MisbehavingUpstream, mode: str, tmp_path: Path,
               shutdown_timeout: int) -> tuple[Server, int]:
    """The server (started against a healthy engine, so /health's pings are answered) and
    how many searches the engine had seen before the engine turned ``mode``."""
    server = start_server(es_config(upstream.url, shutdown_timeout), tmp_path)
    time.sleep(0.3)  # the pings of the first /health: answered at once
    seen = searches(upstream)
    upstream.mode = mode
    return server, seen


def wait_for_search(upstream: MisbehavingUpstream, seen: int, timeout: float = 10.0) -> None:
    """Until the engine has the search in hand (no /health call is made meanwhile, so no
    ping either)."""
    deadline = time.monotonic() + timeout
    while searches(upstream) <= seen:
        assert time.monotonic() < deadline, "the search never reached the engine"
        time.sleep(0.02)


def test_requests_under_way_finish_and_new_ones_are_refused(
    upstream: MisbehavingUpstream, tmp_path: Path
) -> None:
    upstream.delay = 2.0
    server, seen = start_slow(upstream, "slow", tmp_path, shutdown_timeout=30)
    try:
        thread, outcome = search_in_background(server)
        wait_for_search(upstream, seen)
        stopped_at = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{server.url}/health", timeout=5)
        thread.join(timeout=30)
        server.process.wait(timeout=30)
        took = time.monotonic() - stopped_at
    finally:
        server.stop()
    assert outcome.get("status") == 200, outcome
    assert outcome["body"]["totalHits"] == 0
    assert server.process.returncode == 0
    assert took < 15
    assert "searchport stopped: engine, cache and rate-limit connections closed" in (
        server.output())


def test_shutdown_timeout_bounds_a_request_that_never_ends(
    upstream: MisbehavingUpstream, tmp_path: Path
) -> None:
    server, seen = start_slow(upstream, "hang", tmp_path, shutdown_timeout=2)
    try:
        thread, outcome = search_in_background(server)
        wait_for_search(upstream, seen)
        stopped_at = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=20)
        took = time.monotonic() - stopped_at
        thread.join(timeout=30)
    finally:
        server.stop()
    assert 1.5 < took < 10  # the deadline, not the engine's 20 s timeout
    assert "status" not in outcome  # the connection went away with the worker
