"""One HTTP exchange with an engine, as the server engines see it: ``Exchange`` sends a
request and returns the whole ``Answer``, read and decompressed.

The stack under every engine (``http_clients.py``): ``ResilientExchange`` (time budget,
retries, circuit breaker) over ``AiohttpExchange`` (the network). Failures are raised as
httpx's exception types (``ConnectError``, ``ReadTimeout``, ``RemoteProtocolError``...),
the vocabulary the retry rules and the engine adapters read. ``HttpxExchange`` puts any
httpx transport under the same interface: the contract tests' ``httpx.MockTransport``.

Why not ``httpx.AsyncClient`` and its ``Request``/``Response`` models: building the two
models cost about 35 µs per exchange, a client's cookie, auth and redirect machinery more,
where aiohttp's whole exchange costs about 100 µs (bench/RESULTS.md, "Performance").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import httpx


class Answer:
    """An engine's answer, in full: ``headers`` are looked up case-insensitively and
    ``content`` is the decompressed body."""

    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status_code: int, headers: Mapping[str, str], content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300


class Exchange(Protocol):
    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        """``timeout``: seconds for connecting and for each read (``ResilientExchange``
        makes it the budget of the whole call)."""
        ...

    async def aclose(self) -> None: ...


class PartialAnswer(httpx.ProtocolError):
    """The answer's head arrived, then its body failed (reset, cut short). Not one of the
    failures ``ResilientExchange`` retries (those happen before any byte of an answer):
    the engine may have done the work."""


class HttpxExchange:
    """Any httpx transport as an ``Exchange``."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        request = httpx.Request(method, url, headers=headers, content=body,
                                extensions={"timeout": httpx.Timeout(timeout).as_dict()})
        response = await self._transport.handle_async_request(request)
        try:
            content = await response.aread()
        except httpx.TransportError as exc:
            raise PartialAnswer(f"{type(exc).__name__}: {exc}") from exc
        finally:
            await response.aclose()
        return Answer(response.status_code, response.headers, content)

    async def aclose(self) -> None:
        await self._transport.aclose()
