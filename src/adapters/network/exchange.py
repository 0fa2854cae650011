"""One HTTP exchange with an engine, as the server engines see it: ``Exchange`` sends a
request and returns the whole ``Answer``, read and decompressed, or raises one of
searchport's own exchange errors.

The vocabulary of a failed exchange (``ExchangeError``), the same whatever the network
library under it:

- ``Refused``: no connection was made (refused, unreachable, name unknown, TLS failed).
- ``Dropped``: the connection failed before the answer's head was read whole (closed,
  reset, not HTTP, a head too large).
- ``TimedOut``: no complete answer within the call's budget (waiting for a connection,
  connecting, reading).
- ``BadAnswer``: the answer's head arrived, then its body failed (reset, cut short, bad
  chunked framing or compression).
- ``CircuitOpen``: the host's circuit breaker refused the call without any network.

An engine's HTTP status is not an error here: every status arrives as an ``Answer``.
``api.py`` turns both, the errors and the failure statuses, into domain errors in one
place. ``Refused`` and ``Dropped`` (``RETRYABLE``) cannot have been half-answered, so
``ResilientExchange`` may ask again.

The stack under every engine (``pools.py``): ``EngineApi`` (``api.py``) calls a
``ResilientExchange`` (time budget, retries, circuit breaker) over an ``EngineClient``
(``client.py``: libcurl, through pycurl).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Tls:
    """How an https engine is checked: ``verify`` its certificate (against the system's
    roots and, when given, ``ca_pem``: the PEM certificates of a handle's ``caBundle``)."""

    verify: bool = True
    ca_pem: bytes | None = None


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


class ExchangeError(Exception):
    """An exchange that gave no answer; the message is for logs (never a URL)."""


class Refused(ExchangeError):
    """No connection was made."""


class Dropped(ExchangeError):
    """The connection failed before the answer's head."""


class TimedOut(ExchangeError):
    """No complete answer in time."""


class BadAnswer(ExchangeError):
    """The answer's head arrived, then its body failed: the engine may have done the work,
    so it is never retried."""


class CircuitOpen(ExchangeError):
    """The engine host failed too often; the next probe may go in ``retry_in`` seconds."""

    def __init__(self, retry_in: int) -> None:
        super().__init__(f"circuit open, next probe in {retry_in} s")
        self.retry_in = retry_in


RETRYABLE: tuple[type[ExchangeError], ...] = (Refused, Dropped)


class Exchange(Protocol):
    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        """``timeout``: seconds for the whole exchange, kept by every implementation
        (``EngineClient``: waiting for a connection, connecting and reading the whole
        answer); past it, ``TimedOut``. ``ResilientExchange`` makes it the budget of the
        whole call, retries included."""
        ...

    async def aclose(self) -> None: ...
