"""``EngineApi``: a server engine's HTTP API as an adapter calls it, failures as domain
errors.

It opens the handle's pooled exchange (``pools.py``) from its config (``host``, TLS,
``proxy``, ``timeout``) and is the one place where an engine exchange's failures become
domain errors: the exchange errors (``exchange.py``: refused, dropped, timed out, bad
answer, circuit open) in ``exchange_failure`` and the failure statuses in ``status_error``.

Shared by the Elasticsearch/OpenSearch, Typesense and Meilisearch adapters; each brings
its authentication headers and ``ReadError``, its way of reading an error body. Responses
and messages never carry the engine's URL or a credential: the log gets the handle, the
method, the path, the status and the engine's own reason; the client gets one actionable
sentence (``status_error``): a query the engine refused is the caller's 400, a failing
or unreachable engine a 502, a slow one a 504.

The handle's ``timeout`` bounds each adapter call as a whole: inside ``deadline()`` every
exchange gets what is left of it, so a mapping or schema read before a search, or a second
search after a first, never makes the caller wait longer than ``timeout``.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar
from urllib.parse import urlencode

import msgspec

from searchport.adapters.network.address import EngineAddress
from searchport.adapters.network.exchange import (
    Answer,
    CircuitOpen,
    Exchange,
    ExchangeError,
    TimedOut,
)
from searchport.domain.config import ConfigError, IndexConfig
from searchport.domain.errors import (
    EngineTimeout,
    EngineUnavailable,
    InvalidQuery,
    SearchportError,
)

if TYPE_CHECKING:
    from searchport.adapters.resources import EngineResources

MAX_REASON = 300
# Statuses by which an engine refuses the query itself, whatever it holds: a 400, a body or
# URL too large for it (413, 414: a raw query's size is the caller's), or a request it read
# but will not run (422: Typesense's `per_page` over 250, `page` 0). Each is the caller's
# query, so a 400 with the engine's reason; 401/403/404/408/429 and the rest are not.
QUERY_REFUSED = frozenset({400, 413, 414, 422})
# When the adapter call under way must be over (time.monotonic()); None outside ``deadline``.
_DEADLINE: ContextVar[float | None] = ContextVar("engine_call_deadline", default=None)


def engine_address(handle: str, config: IndexConfig) -> EngineAddress:
    """The handle's ``host`` checked; a ``ConfigError`` names ``indexes.<handle>``."""
    assert config.host  # checked by the config loader
    try:
        return EngineAddress(config.host)
    except ConfigError as exc:
        raise ConfigError(f"indexes.{handle}.{exc}") from None


def open_exchange(handle: str, config: IndexConfig,
                  resources: EngineResources) -> tuple[EngineAddress, Exchange]:
    """The handle's ``host``, TLS and proxy settings checked and its pooled exchange
    opened now, so that a bad CA bundle stops startup; a ``ConfigError`` names
    ``indexes.<handle>``."""
    where = f"indexes.{handle}"
    address = engine_address(handle, config)
    ca_bundle = config.ca_bundle
    if ca_bundle is not None:
        ca_bundle = str(resources.base_dir / Path(ca_bundle).expanduser())
    try:
        exchange = resources.pools.exchange(address, verify=config.verify_tls,
                                            ca_bundle=ca_bundle, proxy=config.proxy)
    except ConfigError as exc:
        raise ConfigError(f"{where}.{exc}") from None
    return address, exchange


@dataclass(frozen=True)
class EngineError:
    """What an engine's error body says."""

    reason: str = ""  # its own words, white space folded and cut to MAX_REASON
    code: str | None = None  # its error type or code, for the log; None: it has none
    bad_query: bool = False  # the query is at fault whatever the status
    missing_target: bool = True  # a 404 means the index or collection does not exist


# An engine's error body (decoded JSON, or None when it is not JSON) and the status.
ReadError = Callable[[int, Any], EngineError]


def folded(text: str) -> str:
    """An engine's message as one line of at most ``MAX_REASON`` characters."""
    return " ".join(text.split())[:MAX_REASON]


def status_error(status: int, said: EngineError, *, engine: str, missing: str,
                 overloaded: tuple[int, ...] = (429,)) -> SearchportError:
    """The domain error for an engine's failure status; ``missing`` names what the handle
    points at (index, collection)."""
    if status in QUERY_REFUSED or said.bad_query:
        fallback = (f"{status} {HTTPStatus(status).phrase}"
                    if status in QUERY_REFUSED and status != 400 else "no reason given")
        return InvalidQuery(f"The {engine} engine rejected the query: {said.reason or fallback}")
    if status in (401, 403):
        return EngineUnavailable(f"The {engine} engine rejected searchport's credentials")
    if status == 404 and said.missing_target:
        return EngineUnavailable(
            f"The {missing} configured for this handle does not exist in the {engine} engine"
        )
    if status in (408, 504):
        return EngineTimeout(f"The {engine} engine timed out")
    if status in overloaded:
        return EngineUnavailable(
            f"The {engine} engine is overloaded (it answered {status} "
            f"{HTTPStatus(status).phrase})"
        )
    return EngineUnavailable(f"The {engine} engine failed (HTTP {status})")


def exchange_failure(exc: ExchangeError, *, engine: str, timeout: float) -> SearchportError:
    """The domain error for an exchange that gave no answer."""
    if isinstance(exc, TimedOut):
        return EngineTimeout(f"The {engine} engine did not answer within {timeout:g} s")
    if isinstance(exc, CircuitOpen):
        return EngineUnavailable("The engine is unavailable after repeated failures; "
                                 f"searchport will try it again in {exc.retry_in} s")
    return EngineUnavailable(f"The {engine} engine cannot be reached")


class _WithApi(Protocol):
    _api: EngineApi


S = TypeVar("S", bound=_WithApi)
P = ParamSpec("P")
R = TypeVar("R")


def within_timeout(
    method: Callable[Concatenate[S, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """An adapter method whose exchanges share its handle's ``timeout`` (the adapter keeps
    its ``EngineApi`` as ``_api``)."""

    @functools.wraps(method)
    async def bounded(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._api.deadline():
            return await method(self, *args, **kwargs)

    return bounded


class EngineApi:
    def __init__(
        self,
        *,
        handle: str,
        engine: str,
        missing: str,
        config: IndexConfig,
        resources: EngineResources,
        headers: Mapping[str, str],
        read_error: ReadError,
        logger: logging.Logger,
        overloaded: tuple[int, ...] = (429,),
        on_response: Callable[[Answer], None] | None = None,
    ) -> None:
        self.handle = handle
        self.engine = engine
        self.logger = logger
        self._missing = missing
        self.address, self._exchange = open_exchange(handle, config, resources)
        self._timeout = config.timeout
        self._headers = {"Accept": "application/json", **headers}
        self._json_headers = {**self._headers, "Content-Type": "application/json"}
        self._read_error = read_error
        self._overloaded = overloaded
        self._on_response = on_response

    @contextmanager
    def deadline(self) -> Iterator[None]:
        """The exchanges made inside share the handle's ``timeout`` (an enclosing deadline
        stays in force)."""
        if _DEADLINE.get() is not None:
            yield
            return
        token = _DEADLINE.set(time.monotonic() + self._timeout)
        try:
            yield
        finally:
            _DEADLINE.reset(token)

    async def send(self, method: str, path: str, body: Any = None, *,
                   params: Mapping[str, str] | None = None) -> Answer:
        """The engine's answer, whatever its status; an exchange that gave none raises
        ``EngineUnavailable`` or ``EngineTimeout``."""
        headers = self._headers
        content = None
        if body is not None:
            content = msgspec.json.encode(body)
            headers = self._json_headers
        url = self.address.url(path)
        if params:
            url = f"{url}?{urlencode(params)}"
        deadline = _DEADLINE.get()
        timeout = self._timeout if deadline is None else deadline - time.monotonic()
        try:
            if timeout <= 0:
                raise TimedOut()
            answer = await self._exchange.exchange(method, url, headers, content, timeout)
        except ExchangeError as exc:
            if isinstance(exc, TimedOut):
                self.logger.warning("%s: %s %s timed out: the handle's timeout of %s s was "
                                    "spent", self.handle, method, path, self._timeout)
            elif not isinstance(exc, CircuitOpen):
                self.logger.warning("%s: %s %s failed: %s", self.handle, method, path,
                                    type(exc).__name__)
            raise exchange_failure(exc, engine=self.engine, timeout=self._timeout) from None
        if self._on_response is not None and answer.is_success:
            self._on_response(answer)
        return answer

    async def json(self, method: str, path: str, body: Any = None, *,
                   params: Mapping[str, str] | None = None) -> Any:
        """The decoded body of a 2xx answer; any other status raises its domain error."""
        return self.decode(await self.success(method, path, body, params=params))

    async def success(self, method: str, path: str, body: Any = None, *,
                      params: Mapping[str, str] | None = None) -> Answer:
        """A 2xx answer, its body left to the adapter to decode into its own types; any
        other status raises its domain error."""
        response = await self.send(method, path, body, params=params)
        if not response.is_success:
            raise self.failure(method, path, response)
        return response

    def decode(self, response: Answer) -> Any:
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            self.logger.warning("%s: the engine answered %s with a body that is not JSON",
                                self.handle, response.status_code)
            raise self.unreadable() from None

    def unreadable(self) -> EngineUnavailable:
        return EngineUnavailable(f"The {self.engine} engine sent an answer searchport cannot read")

    @staticmethod
    def error_body(response: Answer) -> Any:
        """The decoded body of an error answer; ``None`` when it is not JSON."""
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            return None

    def failure(self, method: str, path: str, response: Answer) -> SearchportError:
        """The domain error for a non-2xx answer, logged with the engine's reason."""
        status = response.status_code
        said = self._read_error(status, self.error_body(response))
        if said.code is None:
            self.logger.warning("%s: %s %s answered %s %s", self.handle, method, path, status,
                                said.reason)
        else:
            self.logger.warning("%s: %s %s answered %s %s %s", self.handle, method, path,
                                status, said.code, said.reason)
        return self.error_for(status, said)

    def error_for(self, status: int, said: EngineError) -> SearchportError:
        return status_error(status, said, engine=self.engine, missing=self._missing,
                            overloaded=self._overloaded)
