"""The app as ``searchport serve`` builds it, started and stopped in process through ASGI's
lifespan messages, for the benchmarks that call it directly (no HTTP server), and the
scope of a request as an HTTP server on loopback hands it over."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

HEADERS = [(b"host", b"127.0.0.1"), (b"user-agent", b"wrk"), (b"accept", b"*/*")]


def http_scope(path: str, query: bytes = b"", method: str = "GET") -> dict[str, Any]:
    """The ASGI scope of one request from wrk on loopback (its headers)."""
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": query, "root_path": "", "headers": list(HEADERS),
            "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000), "state": {}}


@contextlib.asynccontextmanager
async def started_app(create: Callable[[], Any] | None = None) -> AsyncIterator[Any]:
    """The ASGI app of ``searchport.entrypoints.asgi:create`` (or of ``create``; its
    config from the environment, as the server's), its startup complete; shut down on
    leaving."""
    if create is None:
        from searchport.entrypoints.asgi import create

    app: Any = create()
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    lifespan = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"},
                                        "state": {}}, inbox.get, outbox.put))
    assert (await outbox.get())["type"] == "lifespan.startup.complete"
    try:
        yield app
    finally:
        await inbox.put({"type": "lifespan.shutdown"})
        await lifespan
