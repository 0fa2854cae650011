"""``WriterProcess``: a child process that does one kind of work for its parent, one
message at a time, over a pipe: the SQLite query log's writer (``sqlite.write_log``).

The parent sends a message (bytes) and waits for the child's answer (bytes) in a thread of
its own, never on the event loop. An exchange that takes longer than its deadline, or that
its caller gives up on, kills the child: what it was doing is then not done (SQLite rolls
back a transaction that a killed process left open), so that what the caller counts as
lost really is. A child that died or was killed is started anew by the next exchange.

Children are forked from multiprocessing's fork server, started once per process with
only the modules the work needs: a child starts in milliseconds, and none is forked from a
process that has threads. A child ignores SIGINT and SIGTERM, which a terminal or a
service manager sends the whole process group: its parent decides when it stops (after
the last batch at shutdown), by closing the pipe, and it stops too when the parent dies.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any


class WriterGone(Exception):
    """The child did not answer: it died, was killed, or passed the deadline
    (``timed_out``)."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


_CONTEXT: Any = None
_CONTEXT_LOCK = threading.Lock()
STOP_WAIT = 5.0  # seconds a child is given to finish once its pipe is closed


def _context(preload: list[str]) -> Any:
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(preload)
            _CONTEXT = context
        return _CONTEXT


def run_child(work: Callable[[bytes], bytes], conn: Connection) -> None:
    """The child's loop: each message answered with ``work(message)``, until the pipe
    closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            return
        conn.send_bytes(work(message))


class WriterProcess:
    """One child running ``target(conn, *args)`` (a module-level function that calls
    ``run_child``), started on the first exchange; ``preload``: the modules the fork
    server imports once for all children. Every method but ``kill`` runs in one thread
    at a time (the caller's writer thread)."""

    def __init__(self, target: Callable[..., None], args: tuple[Any, ...],
                 preload: list[str], name: str) -> None:
        self._target = target
        self._args = args
        self._preload = preload
        self._name = name
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    @property
    def pid(self) -> int | None:
        process = self._process
        return None if process is None else process.pid

    def exchange(self, message: bytes, deadline: float) -> bytes:
        """The child's answer to ``message``; ``WriterGone`` when it did not come within
        ``deadline`` seconds (the child is killed) or the child died meanwhile."""
        process, conn = self._process, self._conn
        if process is None or conn is None or not process.is_alive():  # never, or it died
            self._reap()
            conn = self._start()
        try:
            conn.send_bytes(message)
            if not conn.poll(deadline):
                self.kill()
                self._reap()
                raise WriterGone(f"no answer within {deadline:g} s", timed_out=True)
            return conn.recv_bytes()
        except (EOFError, OSError) as exc:  # it died, or was killed meanwhile
            self.kill()
            self._reap()
            raise WriterGone("the writer process stopped") from exc

    def _start(self) -> Connection:
        context = _context(self._preload)
        pipe: tuple[Connection, Connection] = context.Pipe()
        parent, child = pipe
        process = context.Process(target=self._target, args=(child, *self._args),
                                  name=self._name, daemon=True)
        try:
            process.start()
        finally:
            child.close()  # the child's end is the child's: its death closes the pipe
        self._process, self._conn = process, parent
        return parent

    def kill(self) -> None:
        """Kill the child now (from any thread): what it was doing is not done."""
        process = self._process
        if process is not None:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                process.kill()

    def stop(self) -> None:
        """Close the pipe: the child finishes and leaves (killed past ``STOP_WAIT``)."""
        conn, process = self._conn, self._process
        if conn is not None:
            conn.close()
            self._conn = None
        if process is not None:
            process.join(STOP_WAIT)
            if process.is_alive():
                process.kill()
                process.join(STOP_WAIT)
            self._reap()

    def _reap(self) -> None:
        process, self._process = self._process, None
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        if process is not None:
            process.join(STOP_WAIT)
            with contextlib.suppress(ValueError):
                process.close()
