"""Pooled HTTP exchanges for the server engines: one per engine origin and TLS setting.

Handles that point at the same engine host share one connection pool (keep-alive, bounded);
credentials and timeouts are per request, so each handle keeps its own. The composition root
owns the pool and closes it after the engines.

The network under every engine is ``Http1Exchange`` (``http1/``: searchport's own HTTP/1.1
client, one keep-alive pool per origin; a general client library cost several times its
CPU per exchange), or, in tests, any httpx transport (``HttpxExchange``). Every engine
sends through ``ResilientExchange`` (``resilience.py``): the call's timeout is the budget
of the whole call, and with a ``CallPolicy`` failed reads are retried and each origin gets
a circuit breaker (``circuit_open(origin)``, ``on_circuit`` callbacks).
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from searchport.adapters.circuit_breaker import CircuitBreaker, StateListener
from searchport.adapters.engine_address import EngineAddress
from searchport.adapters.exchange import Exchange
from searchport.adapters.resilience import CallPolicy, ResilientExchange
from searchport.domain.config import ConfigError

if TYPE_CHECKING:
    import httpx

# httpx logs every request URL at INFO; searchport logs its own, credential-free lines.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)

MAX_CONNECTIONS = 64
KEEPALIVE_SECONDS = 30.0


class HttpClients:
    """Lazily created exchanges keyed by origin and TLS settings."""

    def __init__(
        self,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        policy: CallPolicy | None = None,
        on_circuit: StateListener | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``transport`` (an httpx transport) replaces the network for every engine
        (contract tests);
        ``policy``: retries and circuit breakers (none: one attempt, no breaker);
        ``on_circuit(origin, open)`` hears every breaker's state, starting closed;
        ``clock``: the breakers' (tests move it instead of waiting for a cool-down)."""
        self._transport = transport
        self._policy = policy
        self._on_circuit = on_circuit
        self._clock = clock
        self._exchanges: dict[tuple[str, bool, str | None], ResilientExchange] = {}
        self._breakers: dict[str, CircuitBreaker] = {}

    def circuit_open(self, origin: str) -> bool:
        breaker = self._breakers.get(origin)
        return breaker is not None and breaker.is_open

    def exchange(
        self, address: EngineAddress, *, verify: bool = True, ca_bundle: str | None = None
    ) -> Exchange:
        key = (address.origin, verify, ca_bundle)
        exchange = self._exchanges.get(key)
        if exchange is None:
            tls = _tls(verify, ca_bundle)  # a bad CA bundle is a config error, test or not
            network = (_network(address.origin, tls) if self._transport is None
                       else _over(self._transport))
            exchange = self._resilient(address.origin, network)
            self._exchanges[key] = exchange
        return exchange

    def _resilient(self, origin: str, inner: Exchange) -> ResilientExchange:
        policy = self._policy
        if policy is None:
            return ResilientExchange(inner)
        breaker = self._breakers.get(origin)
        if breaker is None:
            breaker = CircuitBreaker(origin, threshold=policy.failures,
                                     cool_down=policy.cool_down, on_change=self._on_circuit,
                                     clock=self._clock)
            self._breakers[origin] = breaker
        return ResilientExchange(inner, retries=policy.retries, backoff=policy.backoff,
                                  breaker=breaker)

    async def aclose(self) -> None:
        exchanges, self._exchanges = list(self._exchanges.values()), {}
        for exchange in exchanges:
            await exchange.aclose()


def _network(origin: str, tls: ssl.SSLContext | bool) -> Exchange:
    # imported on first use: a config with only embedded indexes never loads the client
    from searchport.adapters.http1 import Http1Exchange

    return Http1Exchange(origin, tls=tls, max_connections=MAX_CONNECTIONS,
                         keepalive_seconds=KEEPALIVE_SECONDS)


def _over(transport: httpx.AsyncBaseTransport) -> Exchange:
    # imported only when a transport is given (tests): production never loads httpx
    from searchport.adapters.httpx_exchange import HttpxExchange

    return HttpxExchange(transport)


def _tls(verify: bool, ca_bundle: str | None) -> ssl.SSLContext | bool:
    if not verify:
        return False
    if ca_bundle is None:
        return True
    try:
        return ssl.create_default_context(cafile=ca_bundle)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"caBundle: cannot read the CA bundle {ca_bundle!r} ({exc})") from None
