"""``Refreshed``: the engines' mapping, schema and primary key, kept and read again, on an
injected clock (no test waits for real time to pass)."""

from __future__ import annotations

import asyncio

import pytest

from searchport.adapters.network.refreshed import Refreshed
from searchport.domain.errors import EngineUnavailable, SearchportError


class Engine:
    """Answers ``read`` with the next of its outcomes (a value, None, or an error)."""

    def __init__(self, *outcomes: object) -> None:
        self.outcomes = list(outcomes)
        self.reads = 0

    async def read(self) -> str | None:
        self.reads += 1
        await asyncio.sleep(0)  # let concurrent callers pile up on the lock
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome  # type: ignore[return-value]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def kept(engine: Engine, clock: Clock, failures: list[str],
         default: str | None = None) -> Refreshed[str]:
    def failed(exc: SearchportError) -> None:
        failures.append(exc.message)

    return Refreshed(engine.read, ttl=300.0, retry=30.0, on_failure=failed, default=default,
                     clock=clock)


def test_one_read_for_many_callers_then_kept_for_the_ttl() -> None:
    engine, clock, failures = Engine("v1", "v2"), Clock(), []  # type: ignore[var-annotated]
    value = kept(engine, clock, failures)

    async def run() -> list[str]:
        first = await asyncio.gather(*(value.get() for _ in range(5)))
        clock.now = 299.0
        still = await value.get()
        clock.now = 300.0
        return [*first, still, await value.get()]

    assert asyncio.run(run()) == ["v1"] * 6 + ["v2"]
    assert engine.reads == 2 and failures == []


def test_a_failed_read_keeps_the_last_value_and_is_tried_again_after_retry() -> None:
    engine, clock, failures = Engine("v1", EngineUnavailable("down"), "v2"), Clock(), []
    value = kept(engine, clock, failures)  # type: ignore[arg-type]

    async def run() -> list[str]:
        got = [await value.get()]
        clock.now = 300.0
        got.append(await value.get())  # the read fails: v1 kept
        clock.now = 329.0
        got.append(await value.get())  # not yet tried again
        clock.now = 330.0
        got.append(await value.get())
        return got

    assert asyncio.run(run()) == ["v1", "v1", "v1", "v2"]
    assert failures == ["down"] and engine.reads == 3


def test_without_a_value_or_default_the_failure_reaches_the_caller() -> None:
    engine, clock, failures = Engine(EngineUnavailable("down"), "v1"), Clock(), []
    value = kept(engine, clock, failures)  # type: ignore[arg-type]
    with pytest.raises(EngineUnavailable):
        asyncio.run(value.get())
    assert asyncio.run(value.get()) == "v1"  # asked again at once: nothing was kept


def test_the_default_stands_in_and_none_means_nothing_yet() -> None:
    engine, clock, failures = Engine(None, EngineUnavailable("down"), "pk"), Clock(), []
    value = kept(engine, clock, failures, default="id")  # type: ignore[arg-type]

    async def run() -> list[str]:
        got = [await value.get()]  # nothing yet: the default, no failure logged
        clock.now = 30.0
        got.append(await value.get())  # failed: the default
        clock.now = 60.0
        got.append(await value.get())
        return got

    assert asyncio.run(run()) == ["id", "id", "pk"]
    assert failures == ["down"]


def test_expire_reads_again_and_keep_stores_a_value_read_elsewhere() -> None:
    engine, clock, failures = Engine("v1", "v2"), Clock(), []  # type: ignore[var-annotated]
    value = kept(engine, clock, failures)

    async def run() -> list[str]:
        got = [await value.get()]
        value.expire()
        got.append(await value.get())
        value.keep("v3")
        got.append(await value.get())
        return got

    assert asyncio.run(run()) == ["v1", "v2", "v3"]


def test_the_warm_up_reads_in_the_background_and_close_waits_for_it() -> None:
    engine, clock, failures = Engine(EngineUnavailable("down")), Clock(), []
    value = kept(engine, clock, failures)  # type: ignore[arg-type]

    async def run() -> None:
        value.start()
        await asyncio.sleep(0.01)
        await value.close()

    asyncio.run(run())
    assert engine.reads == 1 and failures == ["down"]  # said once, nothing raised


def test_close_lets_a_warm_up_read_in_flight_finish() -> None:
    """A read cancelled halfway would leave its request running in the engine client."""
    engine, released, finished = Engine("v1"), asyncio.Event(), []

    async def slow_read() -> str | None:
        await released.wait()
        got = await engine.read()
        finished.append(got)
        return got

    value = Refreshed(slow_read, ttl=300.0, retry=30.0, on_failure=lambda exc: None,
                      clock=Clock())

    async def run() -> None:
        value.start()
        await asyncio.sleep(0)  # the warm-up waits on its read
        closing = asyncio.ensure_future(value.close())
        await asyncio.sleep(0.01)
        assert not closing.done()  # close waits for the read...
        released.set()
        await closing
        assert await value.get() == "v1"  # ...which landed

    asyncio.run(run())
    assert finished == ["v1"] and engine.reads == 1
