"""The circuit breaker's states, the retry rules of ``ResilientExchange`` (over an
in-memory transport) and the cached engine view behind ``/health``."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from searchport.adapters.network.api import exchange_failure
from searchport.adapters.network.breaker import CircuitBreaker
from searchport.adapters.network.exchange import Answer, CircuitOpen, TimedOut
from searchport.adapters.network.resilience import ResilientExchange
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import IndexConfig
from searchport.domain.engine_health import EngineHealth
from searchport.domain.errors import EngineTimeout, EngineUnavailable
from searchport.domain.usecases.health import Health
from tests.fakes import FakeCache, FakeEngine
from tests.httpx_exchange import HttpxExchange

# ---------------------------------------------------------------- circuit breaker


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def breaker(clock: Clock, changes: list[tuple[str, bool]] | None = None) -> CircuitBreaker:
    listener = None if changes is None else (lambda o, s: changes.append((o, s)))
    return CircuitBreaker("http://es:9200", threshold=3, cool_down=10.0, clock=clock,
                          on_change=listener)


def test_the_circuit_opens_after_the_threshold_of_failures_in_a_row() -> None:
    clock, changes = Clock(), []  # type: ignore[var-annotated]
    b = breaker(clock, changes)
    assert changes == [("http://es:9200", False)]
    b.failure()
    b.failure()
    b.success()  # a success in between starts the count again
    b.failure()
    b.failure()
    assert b.allow() and not b.is_open
    b.failure()
    assert b.is_open and not b.allow()
    assert changes[-1] == ("http://es:9200", True)
    assert b.retry_in() == 10


def test_half_open_lets_one_probe_through_then_closes_or_opens_again() -> None:
    clock, changes = Clock(), []  # type: ignore[var-annotated]
    b = breaker(clock, changes)
    for _ in range(3):
        b.failure()
    clock.now = 9.9
    assert not b.allow()
    clock.now = 10.0
    assert b.allow()  # the probe
    assert not b.allow()  # only one
    b.failure()  # the probe failed: another full cool-down
    clock.now = 19.9
    assert not b.allow()
    clock.now = 20.0
    assert b.allow()
    b.release()  # the probe was cancelled: the next call may probe
    assert b.allow()
    b.success()
    assert not b.is_open and b.allow()
    assert [state for _, state in changes] == [False, True, False]


# ---------------------------------------------------------------- retries


def transport(replies: list[Any], *, retries: int = 2, b: CircuitBreaker | None = None
              ) -> tuple[ResilientExchange, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        reply = replies.pop(0) if len(replies) > 1 else replies[0]
        if isinstance(reply, Exception):
            raise reply
        return httpx.Response(reply, json={"status": reply})

    async def no_sleep(_: float) -> None:
        return None

    return ResilientExchange(HttpxExchange(httpx.MockTransport(handler)), retries=retries,
                             backoff=0.01, breaker=b, sleep=no_sleep), seen


def call(t: ResilientExchange, timeout: float = 5.0) -> Answer:
    return asyncio.run(t.exchange("POST", "http://es:9200/i/_search",
                                  {"Content-Type": "application/json"}, b'{"size":0}', timeout))


@pytest.mark.parametrize(("replies", "status", "attempts"), [
    ([503, 200], 200, 2),
    ([502, 503, 200], 200, 3),
    ([503], 503, 3),  # 1 + 2 retries, then the last answer
    ([httpx.ConnectError("refused"), 200], 200, 2),
    ([httpx.RemoteProtocolError("Server disconnected without sending a response."), 200],
     200, 2),
    ([400], 400, 1),
    ([404], 404, 1),
    ([500], 500, 1),
    ([504], 504, 1),
])
def test_what_is_retried(replies: list[Any], status: int, attempts: int) -> None:
    t, seen = transport(replies)
    assert call(t).status_code == status
    assert len(seen) == attempts
    assert all(r.content == b'{"size":0}' for r in seen)  # the same body every time


@pytest.mark.parametrize("error", [httpx.ReadTimeout("timed out"),
                                   httpx.ConnectTimeout("timed out")])
def test_a_timeout_is_never_retried(error: Exception) -> None:
    t, seen = transport([error, 200])
    with pytest.raises(TimedOut):
        call(t)
    assert len(seen) == 1


def test_no_retries_without_a_policy() -> None:
    t, seen = transport([503, 200], retries=0)
    assert call(t).status_code == 503
    assert len(seen) == 1


def test_the_breaker_counts_calls_not_attempts_and_refuses_while_open() -> None:
    clock = Clock()
    b = CircuitBreaker("o", threshold=2, cool_down=5.0, clock=clock)
    t, seen = transport([503], b=b)
    call(t)
    assert not b.is_open  # three attempts, one failed call
    call(t)
    assert b.is_open and len(seen) == 6
    with pytest.raises(CircuitOpen) as refused:
        call(t)
    assert len(seen) == 6  # refused without a request
    error = exchange_failure(refused.value, engine="elasticsearch", timeout=5.0)
    assert isinstance(error, EngineUnavailable)
    assert "unavailable" in error.message and "es:9200" not in error.message


# ---------------------------------------------------------------- the cached engine view


class PingEngine(FakeEngine):
    def __init__(self, outcome: Exception | float | None = None) -> None:
        super().__init__()
        self.outcome = outcome
        self.pings = 0

    async def ping(self) -> None:
        self.pings += 1
        if isinstance(self.outcome, Exception):
            raise self.outcome
        if isinstance(self.outcome, float):
            await asyncio.sleep(self.outcome)


def catalog(**engines: PingEngine) -> Catalog:
    config = IndexConfig(engine="elasticsearch", host="http://es:9200", index_name="i",
                         timeout=0.2)
    return Catalog({h: IndexEntry(h, config, e) for h, e in engines.items()})


def test_engine_statuses_come_from_background_pings_never_waited_for() -> None:
    engines = {"up": PingEngine(), "down": PingEngine(EngineUnavailable("x")),
               "slow": PingEngine(EngineTimeout("x")), "stuck": PingEngine(60.0),
               "buggy": PingEngine(RuntimeError("bug"))}
    clock = Clock()
    view = EngineHealth(catalog=catalog(**engines), interval=5.0, clock=clock)

    async def run() -> list[dict[str, str]]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        first = view.statuses()  # returns at once, the pings run behind it
        assert loop.time() - started < 0.1
        await asyncio.sleep(1.5)  # the stuck ping is cut at timeout + 1 s
        second = view.statuses()  # fresh: no new ping
        clock.now = 5.0
        third = view.statuses()  # stale: one more round starts
        await asyncio.sleep(0.05)
        await view.close()
        return [first, second, third]

    first, second, third = asyncio.run(run())
    assert set(first.values()) == {"unknown"}
    assert second == {"up": "ok", "down": "unreachable", "slow": "unreachable",
                      "stuck": "unreachable", "buggy": "unknown"}
    assert third == second
    assert [e.pings for e in engines.values()] == [2, 2, 2, 2, 2]


def test_an_open_circuit_is_unreachable_at_once() -> None:
    view = EngineHealth(catalog=catalog(a=PingEngine(), b=PingEngine()),
                        circuit_open=lambda handle: handle == "b")

    async def run() -> dict[str, str]:
        statuses = view.statuses()
        await view.close()
        return statuses

    assert asyncio.run(run()) == {"a": "unknown", "b": "unreachable"}


def test_health_is_degraded_while_an_engine_is_unreachable() -> None:
    view = EngineHealth(catalog=catalog(a=PingEngine(), b=PingEngine()),
                        circuit_open=lambda handle: handle == "b")
    health = Health(cache=FakeCache(status="memory"), version="1.2.3", engines=view)

    async def run() -> Any:
        response = await health()
        await view.close()
        return response

    response = asyncio.run(run())
    assert (response.status, response.cache, response.version) == ("degraded", "memory",
                                                                    "1.2.3")
    # "a" answers its first ping at once, so the first look already has it
    assert response.engines == {"a": "ok", "b": "unreachable"}


def test_the_first_look_waits_a_moment_for_engines_that_answer_at_once() -> None:
    engines = {"up": PingEngine(), "stuck": PingEngine(60.0)}
    view = EngineHealth(catalog=catalog(**engines), interval=5.0)

    async def run() -> tuple[dict[str, str], float, dict[str, str]]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        first = await view.current(first_wait=0.3)  # bounded: "stuck" never answers
        took = loop.time() - started
        again = await view.current(first_wait=0.3)
        await view.close()
        return first, took, again

    first, took, again = asyncio.run(run())
    assert first == {"up": "ok", "stuck": "unknown"}
    assert 0.25 <= took < 1.0
    assert again == first
    assert [e.pings for e in engines.values()] == [1, 1]  # no second round within interval
