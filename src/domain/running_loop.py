"""``running_loop()``: the event loop running in this thread, without a system call.

``asyncio.get_running_loop()`` asks the operating system for the process id on every call
(to notice a fork), and asyncio's own helpers (``create_task``, ``timeout``,
``current_task``...) call it again each time. A search asked for the loop about eight
times; under load those system calls showed as a visible share of each request's CPU in
profiles (py-spy, native frames). This keeps the loop per thread and trusts it while it is
running: a thread runs one loop at a time, a loop runs in one thread, and a forked child
starts with nothing kept.
"""

from __future__ import annotations

import asyncio
import os
import threading

_here = threading.local()


def running_loop() -> asyncio.AbstractEventLoop:
    """The running loop of this thread (``RuntimeError`` when none is running)."""
    loop: asyncio.AbstractEventLoop | None = getattr(_here, "loop", None)
    if loop is None or not loop.is_running():
        loop = asyncio.get_running_loop()
        _here.loop = loop
    return loop


def _forget() -> None:
    _here.__dict__.clear()


os.register_at_fork(after_in_child=_forget)
