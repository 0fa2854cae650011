"""``HttpxExchange``: any httpx transport as an ``Exchange`` (an ``httpx.MockTransport``
in the unit tests of ``ResilientExchange``), its failures told in searchport's exchange
vocabulary. Tests only: production's exchange is ``EngineClient`` (libcurl)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import httpx

from searchport.adapters.network.exchange import (
    Answer,
    BadAnswer,
    Dropped,
    ExchangeError,
    Refused,
    TimedOut,
)

# first match wins: ConnectTimeout is a TimeoutException, ConnectError a NetworkError
FAILURES: tuple[tuple[type[httpx.TransportError], type[ExchangeError]], ...] = (
    (httpx.TimeoutException, TimedOut),
    (httpx.ConnectError, Refused),
    (httpx.NetworkError, Dropped),  # read, write, close
    (httpx.RemoteProtocolError, Dropped),  # closed before the head, not HTTP
)


def exchange_error(exc: httpx.TransportError) -> ExchangeError:
    kind = next((mine for theirs, mine in FAILURES if isinstance(exc, theirs)), ExchangeError)
    return kind(f"{type(exc).__name__}: {exc}")


class HttpxExchange:
    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        """Keeps ``timeout`` over the whole exchange, as every ``Exchange`` does (httpx's
        own timeouts bound each read, not the whole answer)."""
        try:
            async with asyncio.timeout(timeout):
                return await self._exchange(method, url, headers, body, timeout)
        except TimeoutError:
            raise TimedOut(f"no complete answer within {timeout:g} s") from None

    async def _exchange(self, method: str, url: str, headers: Mapping[str, str],
                        body: bytes | None, timeout: float) -> Answer:
        request = httpx.Request(method, url, headers=headers, content=body,
                                extensions={"timeout": httpx.Timeout(timeout).as_dict()})
        try:
            response = await self._transport.handle_async_request(request)
        except httpx.TransportError as exc:
            raise exchange_error(exc) from exc
        try:
            content = await response.aread()
        except httpx.TimeoutException as exc:
            raise TimedOut(f"{type(exc).__name__}: {exc}") from exc
        except httpx.TransportError as exc:
            raise BadAnswer(f"{type(exc).__name__}: {exc}") from exc
        finally:
            await response.aclose()
        return Answer(response.status_code, response.headers, content)

    async def aclose(self) -> None:
        await self._transport.aclose()
