"""``Pool``: the keep-alive connections to one origin on one event loop.

Idle connections are reused last-in first-out (the warmest first), at most
``max_connections`` are open, and requests beyond that wait their turn first-in
first-out: a connection given back goes straight to the oldest waiter, a closed one's
place lets it connect. An idle connection is closed after ``keepalive`` seconds (a check
when it is taken, and one timer per pool that sweeps the oldest ones); one the server
closed while idle leaves the pool as soon as the loop hears of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import deque

from searchport.adapters.exchange import Dropped, Refused, TimedOut
from searchport.adapters.http1.connection import Connection


class Pool:
    def __init__(self, loop: asyncio.AbstractEventLoop, *, host: str, port: int,
                 tls: ssl.SSLContext | None, max_connections: int, keepalive: float) -> None:
        self.loop = loop
        self.closed = False
        self._host = host
        self._port = port
        self._tls = tls
        self._max = max_connections
        self._keepalive = keepalive
        self._idle: list[Connection] = []  # oldest first
        self._waiters: deque[asyncio.Future[Connection | None]] = deque()
        self._open = 0  # connections open or connecting
        self._connections: set[Connection] = set()  # open ones, idle or in use
        self._sweep: asyncio.TimerHandle | None = None

    async def checkout(self, deadline: float) -> Connection:
        """A connection for one request, within ``deadline`` (the loop's clock): an idle
        one, a new one, or the next one given back. Raises ``Refused`` or ``TimedOut``."""
        idle = self._idle
        while idle:
            connection = idle.pop()
            connection.idle = False
            if connection.closed:  # aborted for bytes sent unasked; the loop has not said yet
                self._discard(connection)
            elif self.loop.time() - connection.idle_since < self._keepalive:
                return connection
            else:  # past the keep-alive: so are all the older ones
                self._discard(connection)
                for older in idle:
                    older.idle = False
                    self._discard(older)
                idle.clear()
        if self._open < self._max:
            self._open += 1
        else:
            given = await self._wait(deadline)
            if given is not None and not given.closed:
                return given
            if given is not None:  # lost on its way here: a new one takes its place
                self._connections.discard(given)
        return await self._connect(deadline)

    def checkin(self, connection: Connection) -> None:
        """A connection back from a request: kept for the next one only when its answer
        was read whole and both sides keep it alive."""
        if not connection.reusable or connection.closed or self.closed:
            self._discard(connection)
            return
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        connection.idle = True
        connection.idle_since = self.loop.time()
        self._idle.append(connection)
        if self._sweep is None:
            self._sweep = self.loop.call_at(connection.idle_since + self._keepalive,
                                            self._expire)

    def close(self) -> None:
        """Every connection closed, idle or in use (an answer being read fails)."""
        self.closed = True
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for connection in self._idle:
            connection.idle = False
        self._idle = []
        connections, self._connections = self._connections, set()
        for connection in connections:
            connection.abort()
        waiters, self._waiters = self._waiters, deque()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_exception(Dropped("the engine client was closed"))

    # ------------------------------------------------------------ places

    async def _wait(self, deadline: float) -> Connection | None:
        """The next connection given back, or None: a place freed, to connect in."""
        waiter: asyncio.Future[Connection | None] = self.loop.create_future()
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout_at(deadline):
                return await waiter
        except TimeoutError:
            self._forget(waiter)
            raise TimedOut("no connection to the engine came free in time") from None
        except BaseException:
            self._forget(waiter)
            raise

    def _forget(self, waiter: asyncio.Future[Connection | None]) -> None:
        """A waiter that gave up: what it was given (if anything) goes to the next."""
        if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
            given = waiter.result()
            if given is None:
                self._release()
            else:
                self.checkin(given)
            return
        waiter.cancel()
        with contextlib.suppress(ValueError):  # already taken off by a hand-over
            self._waiters.remove(waiter)

    async def _connect(self, deadline: float) -> Connection:
        """A new connection in a place already taken (given back on failure)."""
        connection = Connection(self._idle_lost)
        try:
            async with asyncio.timeout_at(deadline):
                await self.loop.create_connection(
                    lambda: connection, self._host, self._port, ssl=self._tls,
                    server_hostname=self._host if self._tls is not None else None)
        except TimeoutError:
            self._release()
            raise TimedOut("no connection to the engine in time") from None
        except OSError as exc:  # refused, unreachable, unknown name, TLS (ssl.SSLError)
            self._release()
            raise Refused(f"no connection to the engine: {type(exc).__name__}") from None
        except BaseException:
            self._release()
            raise
        self._connections.add(connection)
        return connection

    def _discard(self, connection: Connection) -> None:
        connection.abort()
        self._connections.discard(connection)
        self._release()

    def _release(self) -> None:
        """One place freed: the oldest waiter takes it, or it is left free."""
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._open -= 1

    def _idle_lost(self, connection: Connection) -> None:
        """The server closed an idle connection (or sent on it unasked)."""
        connection.idle = False
        try:
            self._idle.remove(connection)
        except ValueError:
            return
        self._connections.discard(connection)
        self._release()

    def _expire(self) -> None:
        self._sweep = None
        idle = self._idle
        limit = self.loop.time() - self._keepalive
        stale = 0
        while stale < len(idle) and idle[stale].idle_since <= limit:
            stale += 1
        for connection in idle[:stale]:
            connection.idle = False
            self._discard(connection)
        del idle[:stale]
        if idle:
            self._sweep = self.loop.call_at(idle[0].idle_since + self._keepalive, self._expire)
