"""``running_loop()`` is always the loop asyncio says is running in this thread."""

from __future__ import annotations

import asyncio
import threading

import pytest
import uvloop

from searchport.domain.running_loop import running_loop


async def both() -> tuple[asyncio.AbstractEventLoop, asyncio.AbstractEventLoop]:
    return running_loop(), asyncio.get_running_loop()


def test_it_is_the_running_loop_of_each_loop_in_turn() -> None:
    seen = []
    for run in (asyncio.run, uvloop.run, asyncio.run):
        kept, actual = run(both())
        assert kept is actual
        seen.append(actual)
    assert len({id(loop) for loop in seen}) == 3


def test_outside_a_loop_it_raises_as_asyncio_does() -> None:
    asyncio.run(both())  # a loop was kept in this thread, and has stopped
    with pytest.raises(RuntimeError):
        running_loop()


def test_each_thread_gets_its_own_loop() -> None:
    results: dict[str, bool] = {}
    started = threading.Barrier(2)

    def in_thread(name: str) -> None:
        async def main() -> bool:
            started.wait()  # both loops are running at once
            kept = running_loop()
            await asyncio.sleep(0.01)
            return kept is asyncio.get_running_loop() and running_loop() is kept

        results[name] = asyncio.run(main())

    threads = [threading.Thread(target=in_thread, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"a": True, "b": True}
