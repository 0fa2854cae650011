"""Engine failures through a real ``searchport serve`` process, against a real misbehaving
server on loopback: retries that work, timeouts that hold, sockets that close, and a
circuit breaker that answers at once while the engine is down."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.e2e.conftest import Server
from tests.misbehaving_upstream import MisbehavingUpstream, misbehaving_upstream

SECRET = "e2e-engine-secret-77"


def config(host: str, failures: int, timeout: float = 0.5) -> str:
    return f"""
accessLog: "off"
resilience:
  retryBackoff: 0.01
  circuitBreaker: {{failures: {failures}, coolDown: 60}}
indexes:
  cities:
    engine: elasticsearch
    host: "{host}"
    indexName: cities
    apiKey: {SECRET}
    timeout: {timeout}
"""


@pytest.fixture
def upstream() -> Iterator[MisbehavingUpstream]:
    with misbehaving_upstream() as server:
        yield server


def started(server: Server, upstream: MisbehavingUpstream) -> int:
    """Wait for the ping that the readiness poll of ``/health`` started; the engine's count
    of data requests after it."""
    deadline = time.monotonic() + 10
    while server.client.get("/health").json()["engines"] != {"cities": "ok"}:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return len(upstream.data_requests())


def process_fds(server: Server) -> int:
    return len(os.listdir(f"/proc/{server.process.pid}/fd"))


def search(server: Server, q: str = "paris") -> tuple[httpx.Response, float]:
    """Different ``q``s are different engine calls (identical ones in flight share one)."""
    started = time.monotonic()
    response = server.client.get("/cities/search", params={"q": q})
    return response, time.monotonic() - started


def assert_clean_error(response: httpx.Response, status: int, port: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert isinstance(body["error"], str) and set(body) <= {"error", "requestId"}
    for leak in (SECRET, "127.0.0.1", str(port)):
        assert leak not in response.text
    return str(body["error"])


def test_retries_timeouts_and_no_leaked_sockets(
    server_factory: Callable[..., Server], upstream: MisbehavingUpstream
) -> None:
    server = server_factory(config(upstream.url, failures=1000))
    pings = started(server, upstream)
    upstream.script = ["503", "503"]
    response, _ = search(server)
    assert response.status_code == 200, response.text
    assert len(upstream.data_requests()) == pings + 3  # two retries, counted at the engine

    baseline = process_fds(server)
    upstream.mode = "hang"
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: search(server, f"q{i}"), range(16)))
    for response, took in results:
        assert "did not answer within 0.5 s" in assert_clean_error(response, 504, upstream.port)
        assert took < 5.0
    assert len(upstream.data_requests()) == pings + 3 + 16  # a timeout is never retried
    deadline = time.monotonic() + 5
    while process_fds(server) > baseline + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_fds(server) <= baseline + 2
    assert SECRET not in server.output()


def test_the_circuit_opens_and_answers_at_once(
    server_factory: Callable[..., Server], upstream: MisbehavingUpstream
) -> None:
    server = server_factory(config(upstream.url, failures=3, timeout=2.0))
    pings = started(server, upstream)
    upstream.mode, upstream.status = "status", 500
    for _ in range(3):
        assert "HTTP 500" in assert_clean_error(search(server)[0], 502, upstream.port)
    upstream.mode = "hang"
    connections = upstream.connections
    for _ in range(5):
        response, took = search(server)
        assert "unavailable" in assert_clean_error(response, 502, upstream.port)
        assert took < 1.0  # the engine would hold it for the 2 s timeout
    assert upstream.connections == connections
    assert len(upstream.data_requests()) == pings + 3
    gauge = f'searchport_circuit_open{{host="http://127.0.0.1:{upstream.port}"}} 1.0'
    assert gauge in server.client.get("/metrics").text
    health = server.client.get("/health").json()
    assert (health["status"], health["engines"]) == ("degraded", {"cities": "unreachable"})
