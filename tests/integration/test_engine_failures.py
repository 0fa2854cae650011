"""Engine failures through the real application against a real misbehaving server on
loopback (``tests/misbehaving_upstream.py``): the right status (502 or 504), a body that
says what happened and names no address or credential, a bounded latency, no socket left
open, retries only where they are safe, and a circuit breaker per engine host."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.adapters.network.breaker import CircuitBreaker
from searchport.adapters.network.client import EngineClient
from searchport.adapters.network.exchange import CircuitOpen, Dropped
from searchport.adapters.network.resilience import ResilientExchange
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.fakes import in_memory_analytics
from tests.misbehaving_upstream import (
    MisbehavingUpstream,
    misbehaving_upstream,
    open_fds,
    refused_port,
)

SECRET = "s3cret-engine-key-42"
TIMEOUT = 0.5
BOUND = 3.0  # seconds: generous, the machine is shared; a lost timeout would take far longer


def config_yaml(host: str, *, engine: str = "elasticsearch", timeout: float = TIMEOUT,
                failures: int = 1000, cool_down: float = 10.0, retries: int = 2,
                backoff: float = 0.01) -> str:
    return f"""
resilience:
  retries: {retries}
  retryBackoff: {backoff}
  circuitBreaker: {{failures: {failures}, coolDown: {cool_down}}}
  healthInterval: 0.2
indexes:
  cities:
    engine: {engine}
    host: "{host}"
    indexName: cities
    apiKey: {SECRET}
    timeout: {timeout}
"""


@contextmanager
def app_over(host: str, clock: Callable[[], float] | None = None,
             **settings: Any) -> Iterator[TestClient[Any]]:
    container = in_memory_analytics(create_container(
        parse_config(config_yaml(host, **settings), {}), Path("."), clock=clock))
    with TestClient(create_app(container, access_log="off"), timeout=30) as client:
        yield client


@pytest.fixture
def upstream() -> Iterator[MisbehavingUpstream]:
    with misbehaving_upstream() as server:
        yield server


def search(client: TestClient[Any], q: str = "paris") -> tuple[httpx.Response, float]:
    """Different ``q``s are different engine calls (identical ones in flight share one)."""
    started = time.monotonic()
    response = client.get("/cities/search", params={"q": q})
    return response, time.monotonic() - started


def assert_error(response: httpx.Response, status: int, port: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) <= {"error", "requestId"} and isinstance(body["error"], str)
    for leak in (SECRET, "127.0.0.1", str(port), "http://", "Traceback"):
        assert leak not in response.text
    return str(body["error"])


def settle_fds(baseline: int, slack: int = 4, wait: float = 5.0) -> int:
    """The open file count once it is back within ``slack`` of ``baseline`` (or after
    ``wait`` seconds): closing sockets takes the other side a moment."""
    deadline = time.monotonic() + wait
    while (count := open_fds()) > baseline + slack and time.monotonic() < deadline:
        time.sleep(0.05)
    return count


# ---------------------------------------------------------------- each failure, one request


CASES: list[tuple[str, dict[str, Any], int, str, int]] = [
    # mode (and settings), status, words of the message, data requests the server saw
    ("hang", {}, 504, "did not answer within 0.5 s", 1),
    ("slow", {"delay": 3.0}, 504, "did not answer within 0.5 s", 1),
    ("drip", {}, 504, "did not answer within 0.5 s", 1),  # the timeout bounds the whole call
    ("status", {"status": 500}, 502, "failed (HTTP 500)", 1),
    ("html", {}, 502, "cannot read", 1),
    ("truncated", {}, 502, "cannot read", 1),
    ("reset_mid_body", {}, 502, "cannot be reached", 1),
    ("status", {"status": 503}, 502, "failed (HTTP 503)", 3),  # retried twice, then given up
    ("status", {"status": 502}, 502, "failed (HTTP 502)", 3),
    ("status", {"status": 404}, 502, "does not exist", 1),  # never retried
    ("status", {"status": 400}, 400, "rejected the query", 1),  # never retried
]


@pytest.mark.parametrize(("mode", "settings", "status", "words", "seen"), CASES,
                         ids=[f"{c[0]}-{c[1].get('status', '')}" for c in CASES])
def test_each_failure_has_its_status_a_clear_body_and_a_bounded_latency(
    upstream: MisbehavingUpstream, mode: str, settings: dict[str, Any], status: int,
    words: str, seen: int,
) -> None:
    with app_over(upstream.url) as client:
        upstream.mode = mode
        for name, value in settings.items():
            setattr(upstream, name, value)
        response, took = search(client)
        message = assert_error(response, status, upstream.port)
        assert words in message
        assert took < BOUND
        assert len(upstream.data_requests()) == seen


def test_a_refused_connection_is_a_502(upstream: MisbehavingUpstream) -> None:
    port = refused_port()
    with app_over(f"http://127.0.0.1:{port}") as client:
        response, took = search(client)
        assert "cannot be reached" in assert_error(response, 502, port)
        assert took < BOUND


def test_503_then_an_answer_is_retried_into_a_200(upstream: MisbehavingUpstream) -> None:
    with app_over(upstream.url) as client:
        upstream.script = ["503", "503"]
        response, took = search(client)
        assert response.status_code == 200, response.text
        assert response.json()["totalHits"] == 0
        assert len(upstream.data_requests()) == 3
        assert took < BOUND


def test_a_connection_dropped_before_any_byte_is_retried(upstream: MisbehavingUpstream) -> None:
    with app_over(upstream.url) as client:
        upstream.script = ["drop"]
        response, _ = search(client)
        assert response.status_code == 200, response.text
        assert len(upstream.data_requests()) == 2


def test_no_retry_past_the_budget(upstream: MisbehavingUpstream) -> None:
    """Five retries with back-offs of 0.2-0.4, 0.4-0.8, 0.8-1.6... s cannot fit in 1 s:
    searchport stops retrying while there is time left and returns the engine's last
    answer (a 502), instead of running into its own timeout (a 504)."""
    with app_over(upstream.url, retries=5, timeout=1.0, backoff=0.4) as client:
        upstream.mode, upstream.status = "status", 503
        response, took = search(client)
        assert "HTTP 503" in assert_error(response, 502, upstream.port)
        assert took < 1.0 + 0.5
        assert 2 <= len(upstream.data_requests()) <= 3


@pytest.mark.parametrize("engine", ["typesense", "meilisearch"])
@pytest.mark.parametrize(("mode", "status"), [("status", 502), ("hang", 504), ("html", 502)])
def test_other_engines_fail_alike(upstream: MisbehavingUpstream, engine: str, mode: str,
                                  status: int) -> None:
    with app_over(upstream.url, engine=engine) as client:
        upstream.mode = mode
        response, took = search(client)
        assert_error(response, status, upstream.port)
        assert took < BOUND


# ---------------------------------------------------------------- no leaked sockets


@pytest.mark.parametrize("mode", ["hang", "drip", "reset_mid_body", "drop", "refused", "status",
                                  "truncated", "html"])
def test_a_burst_of_failures_leaves_no_socket_open(upstream: MisbehavingUpstream,
                                                   mode: str) -> None:
    host = f"http://127.0.0.1:{refused_port()}" if mode == "refused" else upstream.url
    # the timeout is the subject only for hang and drip; elsewhere a loaded machine must not
    # turn a failure into a timeout before the request reached the engine
    timeout = TIMEOUT if mode in ("hang", "drip") else 2.0
    with app_over(host, timeout=timeout) as client:
        search(client)  # the pool and the app warmed up
        baseline = settle_fds(open_fds(), slack=0, wait=0.5)
        upstream.mode = mode
        # answered failures keep their connection in the pool: send those one at a time
        workers = 1 if mode in ("status", "truncated", "html") else 8
        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(lambda i: search(client, f"q{i}"), range(24)))
        assert all(r.status_code in (502, 504) for r, _ in results)
        if mode not in ("refused", "drop"):
            assert len(upstream.data_requests()) == 1 + 24  # each one reached the engine
        assert max(took for _, took in results) < BOUND * 2
        assert settle_fds(baseline) <= baseline + 4


# ---------------------------------------------------------------- circuit breaker


def circuit_gauge(client: TestClient[Any], port: int) -> str | None:
    line = f'searchport_circuit_open{{host="http://127.0.0.1:{port}"}}'
    for row in client.get("/metrics").text.splitlines():
        if row.startswith(line):
            return row.split()[-1]
    return None


def test_the_circuit_opens_answers_at_once_probes_and_closes(
    upstream: MisbehavingUpstream,
) -> None:
    now = [0.0]  # the breakers' clock, moved past each cool-down instead of waiting
    with app_over(upstream.url, clock=lambda: now[0], failures=3, cool_down=1.0,
                  timeout=2.0) as client:
        assert circuit_gauge(client, upstream.port) == "0.0"
        upstream.mode, upstream.status = "status", 500
        for _ in range(3):
            assert "HTTP 500" in assert_error(search(client)[0], 502, upstream.port)
        assert len(upstream.data_requests()) == 3
        assert circuit_gauge(client, upstream.port) == "1.0"

        # open: answered at once, nothing reaches the engine (even one that would hang)
        upstream.mode = "hang"
        connections = upstream.connections
        response, took = search(client)
        assert "unavailable" in assert_error(response, 502, upstream.port)
        assert took < 1.0  # the engine would have held it for the 2 s timeout
        assert upstream.connections == connections
        assert len(upstream.data_requests()) == 3
        health = client.get("/health").json()
        assert (health["status"], health["engines"]) == ("degraded", {"cities": "unreachable"})

        # half-open after the cool-down: one probe; it fails, so the circuit opens again
        upstream.mode = "status"
        assert "unavailable" in assert_error(search(client)[0], 502, upstream.port)
        now[0] += 1.1
        assert "HTTP 500" in assert_error(search(client)[0], 502, upstream.port)
        assert len(upstream.data_requests()) == 4
        assert "unavailable" in assert_error(search(client)[0], 502, upstream.port)
        assert len(upstream.data_requests()) == 4

        # the engine recovers: the next probe succeeds and the circuit closes
        upstream.mode = "ok"
        now[0] += 1.1
        assert search(client)[0].status_code == 200
        assert circuit_gauge(client, upstream.port) == "0.0"
        assert search(client)[0].status_code == 200
        assert len(upstream.data_requests()) == 6


def test_half_open_lets_exactly_one_probe_through(upstream: MisbehavingUpstream) -> None:
    clock = [0.0]
    breaker = CircuitBreaker("test", threshold=1, cool_down=5.0, clock=lambda: clock[0])

    async def run() -> list[int | str]:
        network = EngineClient(upstream.url, max_connections=8,
                                keepalive_seconds=30)
        resilient = ResilientExchange(network, breaker=breaker)
        url = f"{upstream.url}/cities/_search"
        try:
            upstream.mode = "drop"
            with pytest.raises(Dropped):
                await resilient.exchange("POST", url, {}, b"{}", 5.0)
            assert breaker.is_open
            clock[0] = 6.0
            upstream.mode, upstream.delay = "slow", 0.3

            async def call() -> int | str:
                try:
                    return (await resilient.exchange("POST", url, {}, b"{}", 5.0)).status_code
                except CircuitOpen:
                    return "refused"

            return list(await asyncio.gather(*(call() for _ in range(5))))
        finally:
            await resilient.aclose()

    outcomes = asyncio.run(run())
    assert sorted(outcomes, key=str) == [200, "refused", "refused", "refused", "refused"]
    assert len(upstream.data_requests()) == 2
    assert not breaker.is_open


# ---------------------------------------------------------------- health per handle


def timed_health(client: TestClient[Any]) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    body = client.get("/health").json()
    return body, time.monotonic() - started


def until(client: TestClient[Any], check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        body, took = timed_health(client)
        assert took < 0.5  # never waits on an engine
        if check(body) or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def test_health_reports_each_engine_from_a_cached_view(upstream: MisbehavingUpstream) -> None:
    with app_over(upstream.url, timeout=2.0) as client:
        body = until(client, lambda b: b["engines"] == {"cities": "ok"})
        assert (body["status"], body["engines"]) == ("ok", {"cities": "ok"})

        # an engine that hangs: /health stays fast while its ping waits out the timeout
        upstream.mode = "hang"
        body = until(client, lambda b: b["engines"] == {"cities": "unreachable"})
        assert (body["status"], body["engines"]) == ("degraded", {"cities": "unreachable"})

        upstream.mode = "ok"
        body = until(client, lambda b: b["engines"] == {"cities": "ok"})
        assert body["status"] == "ok"
        assert set(body) == {"status", "cache", "version", "engines"}


def test_health_of_a_refused_engine(upstream: MisbehavingUpstream) -> None:
    with app_over(f"http://127.0.0.1:{refused_port()}") as client:
        first, took = timed_health(client)
        assert first["engines"]["cities"] in ("unknown", "unreachable") and took < 0.5
        body = until(client, lambda b: b["engines"] == {"cities": "unreachable"})
        assert body["status"] == "degraded"
