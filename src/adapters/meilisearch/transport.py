"""One HTTP exchange with a Meilisearch server, failures as domain errors.

Responses and messages never carry the engine's URL or its key: the log gets the handle,
the method, the path, the status and Meilisearch's error code; the client gets one
actionable sentence (with Meilisearch's own message when it rejected the query).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import httpx
import msgspec

from searchport.adapters.http_clients import EngineAddress, HttpClients
from searchport.adapters.meilisearch.parse import error_code, error_message
from searchport.domain.errors import (
    EngineTimeout,
    EngineUnavailable,
    InvalidQuery,
    SearchportError,
)

logger = logging.getLogger("searchport.meilisearch")

ENGINE = "meilisearch"
MAX_REASON = 300


class Transport:
    def __init__(
        self,
        *,
        handle: str,
        address: EngineAddress,
        http: HttpClients,
        api_key: str | None,
        timeout: float,
        verify: bool = True,
        ca_bundle: str | None = None,
    ) -> None:
        self._handle = handle
        self._address = address
        self._http = http
        self._headers: Mapping[str, str] = {
            "Accept": "application/json",
            **({"Authorization": f"Bearer {api_key}"} if api_key else {}),
        }
        self._timeout = httpx.Timeout(timeout)
        self._seconds = timeout
        self._verify = verify
        self._ca_bundle = ca_bundle

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
            return await client.request(method, self._address.url(path), content=content,
                                        headers=headers, timeout=self._timeout)
        except httpx.TimeoutException:
            logger.warning("%s: %s %s timed out after %s s", self._handle, method, path,
                           self._seconds)
            raise EngineTimeout(
                f"The {ENGINE} engine did not answer within {self._seconds:g} s"
            ) from None
        except httpx.HTTPError as exc:
            logger.warning("%s: %s %s failed: %s", self._handle, method, path,
                           type(exc).__name__)
            raise EngineUnavailable(f"The {ENGINE} engine cannot be reached") from None

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

    @staticmethod
    def unreadable() -> EngineUnavailable:
        return EngineUnavailable(f"The {ENGINE} engine sent an answer searchport cannot read")

    @staticmethod
    def error_body(response: httpx.Response) -> Any:
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            return None

    def failure(self, method: str, path: str, response: httpx.Response) -> SearchportError:
        """The domain error for a non-2xx answer (DECISIONS.md, Errors)."""
        status = response.status_code
        answer = self.error_body(response)
        code = error_code(answer)
        reason = " ".join(error_message(answer).split())[:MAX_REASON]
        logger.warning("%s: %s %s answered %s %s %s", self._handle, method, path, status,
                       code, reason)
        if status == 400:
            return InvalidQuery(
                f"The {ENGINE} engine rejected the query: {reason or 'no reason given'}"
            )
        if status in (401, 403):
            return EngineUnavailable(f"The {ENGINE} engine rejected searchport's credentials")
        if status == 404 and code == "index_not_found":
            return EngineUnavailable(
                f"The index configured for this handle does not exist in the {ENGINE} engine"
            )
        if status in (408, 504):
            return EngineTimeout(f"The {ENGINE} engine timed out")
        if status == 429:
            return EngineUnavailable(
                f"The {ENGINE} engine is overloaded (it answered 429 Too Many Requests)"
            )
        return EngineUnavailable(f"The {ENGINE} engine failed (HTTP {status})")
