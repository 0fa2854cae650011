"""One HTTP exchange with a Typesense server, failures as domain errors.

Typesense answers errors as ``{"message": "..."}`` with the HTTP status; inside a
``multi_search`` answer each failed search is ``{"code": 400, "error": "..."}`` in a 200.
Both go through ``error_for``. Responses and messages never carry the engine's URL or the
API key: the log gets the handle, the method, the path and the status; the client gets one
actionable sentence.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import httpx
import msgspec

from searchport.adapters.http_clients import EngineAddress, HttpClients
from searchport.domain.errors import (
    EngineTimeout,
    EngineUnavailable,
    InvalidQuery,
    SearchportError,
)

logger = logging.getLogger("searchport.typesense")

ENGINE = "typesense"
MAX_REASON = 300
API_KEY_HEADER = "X-TYPESENSE-API-KEY"
# A 404 about a field (facet, sort, filter, query_by) is a bad query, not a missing collection.
FIELD_NOT_FOUND = "could not find a"


def error_for(status: int, message: str) -> SearchportError:
    """The domain error for a Typesense failure (DECISIONS.md, Errors)."""
    reason = " ".join(message.split())[:MAX_REASON]
    if status == 400 or (status == 404 and reason.lower().startswith(FIELD_NOT_FOUND)):
        return InvalidQuery(
            f"The {ENGINE} engine rejected the query: {reason or 'no reason given'}"
        )
    if status in (401, 403):
        return EngineUnavailable(f"The {ENGINE} engine rejected searchport's credentials")
    if status == 404:
        return EngineUnavailable(
            f"The collection configured for this handle does not exist in the {ENGINE} engine"
        )
    if status in (408, 504):
        return EngineTimeout(f"The {ENGINE} engine timed out")
    if status in (429, 503):
        return EngineUnavailable(f"The {ENGINE} engine is overloaded (it answered {status})")
    return EngineUnavailable(f"The {ENGINE} engine failed (HTTP {status})")


def unreadable() -> EngineUnavailable:
    return EngineUnavailable(f"The {ENGINE} engine sent an answer searchport cannot read")


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
        self._headers = {"Accept": "application/json"}
        if api_key:
            self._headers[API_KEY_HEADER] = api_key
        self._timeout = httpx.Timeout(timeout)
        self._seconds = timeout
        self._verify = verify
        self._ca_bundle = ca_bundle

    async def send(self, method: str, path: str, *, body: Any = None,
                   params: Mapping[str, str] | None = None) -> httpx.Response:
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
                                        params=params, headers=headers, timeout=self._timeout)
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

    async def json(self, method: str, path: str, *, body: Any = None,
                   params: Mapping[str, str] | None = None) -> Any:
        """The decoded body of a 2xx answer; any other status raises its domain error."""
        response = await self.send(method, path, body=body, params=params)
        if not response.is_success:
            raise self.failure(method, path, response)
        return self.decode(response)

    def decode(self, response: httpx.Response) -> Any:
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            logger.warning("%s: the engine answered %s with a body that is not JSON",
                           self._handle, response.status_code)
            raise unreadable() from None

    def failure(self, method: str, path: str, response: httpx.Response) -> SearchportError:
        status = response.status_code
        try:
            answer = msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            answer = None
        message = answer.get("message") if isinstance(answer, Mapping) else None
        message = message if isinstance(message, str) else ""
        logger.warning("%s: %s %s answered %s %s", self._handle, method, path, status,
                       " ".join(message.split())[:MAX_REASON])
        return error_for(status, message)

    def search_failure(self, code: Any, message: Any) -> SearchportError:
        """One failed search of a ``multi_search`` answer."""
        status = code if isinstance(code, int) and not isinstance(code, bool) else 500
        text = message if isinstance(message, str) else ""
        logger.warning("%s: a search of multi_search answered %s %s", self._handle, status,
                       " ".join(text.split())[:MAX_REASON])
        return error_for(status, text)
