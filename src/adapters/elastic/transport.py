"""One HTTP exchange with an Elasticsearch-compatible server, failures as domain errors.

Responses and messages never carry the engine's URL or a credential: the log gets the
handle, the method, the path and the status; the client gets one actionable sentence.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import msgspec

from searchport.adapters.elastic.parse import error_reason, error_type
from searchport.adapters.http_clients import EngineAddress, HttpClients
from searchport.domain.errors import (
    EngineTimeout,
    EngineUnavailable,
    InvalidQuery,
    SearchportError,
)

logger = logging.getLogger("searchport.elastic")

MAX_REASON = 300


class Transport:
    def __init__(
        self,
        *,
        handle: str,
        engine: str,
        address: EngineAddress,
        http: HttpClients,
        headers: Mapping[str, str],
        timeout: float,
        verify: bool = True,
        ca_bundle: str | None = None,
        on_response: Callable[[httpx.Response], None] | None = None,
    ) -> None:
        self._handle = handle
        self._engine = engine
        self._address = address
        self._http = http
        self._headers = {"Accept": "application/json", **headers}
        self._timeout = httpx.Timeout(timeout)
        self._seconds = timeout
        self._verify = verify
        self._ca_bundle = ca_bundle
        self._on_response = on_response

    async def send(self, method: str, path: str, body: Any = None) -> httpx.Response:
        """The engine's response, whatever its status; network failures raise
        ``EngineUnavailable`` or ``EngineTimeout``."""
        headers = self._headers
        content = None
        if body is not None:
            content = msgspec.json.encode(body)
            headers = {**headers, "Content-Type": "application/json"}
        client = self._http.client(self._address, verify=self._verify, ca_bundle=self._ca_bundle)
        try:
            response = await client.request(method, self._address.url(path), content=content,
                                            headers=headers, timeout=self._timeout)
        except httpx.TimeoutException:
            logger.warning("%s: %s %s timed out after %s s", self._handle, method, path,
                           self._seconds)
            raise EngineTimeout(
                f"The {self._engine} engine did not answer within {self._seconds:g} s"
            ) from None
        except httpx.HTTPError as exc:
            logger.warning("%s: %s %s failed: %s", self._handle, method, path,
                           type(exc).__name__)
            raise EngineUnavailable(f"The {self._engine} engine cannot be reached") from None
        if self._on_response is not None and response.is_success:
            self._on_response(response)
        return response

    async def json(self, method: str, path: str, body: Any = None) -> Any:
        """The decoded body of a 2xx answer; any other status raises its domain error."""
        response = await self.send(method, path, body)
        if not response.is_success:
            raise self.failure(method, path, response)
        return self.decode(response)

    def decode(self, response: httpx.Response) -> Any:
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            logger.warning("%s: the engine answered %s with a body that is not JSON",
                           self._handle, response.status_code)
            raise self.unreadable() from None

    def unreadable(self) -> EngineUnavailable:
        return EngineUnavailable(
            f"The {self._engine} engine sent an answer searchport cannot read"
        )

    def failure(self, method: str, path: str, response: httpx.Response) -> SearchportError:
        """The domain error for a non-2xx answer (DECISIONS.md, Errors)."""
        status = response.status_code
        try:
            answer = msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            answer = None
        reason = " ".join(error_reason(answer).split())[:MAX_REASON]
        logger.warning("%s: %s %s answered %s %s %s", self._handle, method, path, status,
                       error_type(answer), reason)
        engine = self._engine
        if status == 400:
            return InvalidQuery(
                f"The {engine} engine rejected the query: {reason or 'no reason given'}"
            )
        if status in (401, 403):
            return EngineUnavailable(f"The {engine} engine rejected searchport's credentials")
        if status == 404:
            return EngineUnavailable(
                f"The index configured for this handle does not exist in the {engine} engine"
            )
        if status in (408, 504):
            return EngineTimeout(f"The {engine} engine timed out")
        if status == 429:
            return EngineUnavailable(
                f"The {engine} engine is overloaded (it answered 429 Too Many Requests)"
            )
        return EngineUnavailable(f"The {engine} engine failed (HTTP {status})")
