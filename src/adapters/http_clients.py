"""Pooled HTTP transports for the server engines: one per engine origin and TLS setting.

Handles that point at the same engine host share one connection pool (keep-alive, bounded);
credentials and timeouts are per request, so each handle keeps its own. The composition root
owns the pool and closes it after the engines.

Engines send ``httpx.Request``s straight to the transport (``engine_http.py``): searchport
needs none of ``httpx.AsyncClient``'s per-request work (cookie jar, auth and redirect
flows, event hooks), which cost about a third of an engine exchange's CPU under load.

The network under every client is ``AiohttpTransport`` (``aiohttp_transport.py``: httpx's
API over aiohttp's pool, several times cheaper per exchange than httpcore's under load).
Every client sends through ``ResilientTransport`` (``resilience.py``): the request's timeout
is the budget of the whole call, and with a ``CallPolicy`` failed reads are retried and
each origin gets a circuit breaker (``circuit_open(origin)``, ``on_circuit`` callbacks).
"""

from __future__ import annotations

import logging
import ssl

import httpx

from searchport.adapters.circuit_breaker import CircuitBreaker, StateListener
from searchport.adapters.engine_address import EngineAddress
from searchport.adapters.resilience import CallPolicy, ResilientTransport
from searchport.domain.config import ConfigError

# httpx logs every request URL at INFO; searchport logs its own, credential-free lines.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)

MAX_CONNECTIONS = 64
KEEPALIVE_SECONDS = 30.0


class HttpClients:
    """Lazily created transports keyed by origin and TLS settings."""

    def __init__(
        self,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        policy: CallPolicy | None = None,
        on_circuit: StateListener | None = None,
    ) -> None:
        """``transport`` replaces the network for every client (contract tests);
        ``policy``: retries and circuit breakers (none: one attempt, no breaker);
        ``on_circuit(origin, open)`` hears every breaker's state, starting closed."""
        self._transport = transport
        self._policy = policy
        self._on_circuit = on_circuit
        self._transports: dict[tuple[str, bool, str | None], ResilientTransport] = {}
        self._breakers: dict[str, CircuitBreaker] = {}

    def circuit_open(self, origin: str) -> bool:
        breaker = self._breakers.get(origin)
        return breaker is not None and breaker.is_open

    def transport(
        self, address: EngineAddress, *, verify: bool = True, ca_bundle: str | None = None
    ) -> httpx.AsyncBaseTransport:
        key = (address.origin, verify, ca_bundle)
        transport = self._transports.get(key)
        if transport is None:
            tls = _tls(verify, ca_bundle)  # a bad CA bundle is a config error, test or not
            transport = self._resilient(address.origin, self._transport or _network(tls))
            self._transports[key] = transport
        return transport

    def _resilient(self, origin: str, inner: httpx.AsyncBaseTransport) -> ResilientTransport:
        policy = self._policy
        if policy is None:
            return ResilientTransport(inner)
        breaker = self._breakers.get(origin)
        if breaker is None:
            breaker = CircuitBreaker(origin, threshold=policy.failures,
                                     cool_down=policy.cool_down, on_change=self._on_circuit)
            self._breakers[origin] = breaker
        return ResilientTransport(inner, retries=policy.retries, backoff=policy.backoff,
                                  breaker=breaker)

    async def aclose(self) -> None:
        transports, self._transports = list(self._transports.values()), {}
        for transport in transports:
            await transport.aclose()


def _network(tls: ssl.SSLContext | bool) -> httpx.AsyncBaseTransport:
    # imported on first use: a config with only embedded indexes never loads aiohttp
    from searchport.adapters.aiohttp_transport import AiohttpTransport

    return AiohttpTransport(tls=tls, max_connections=MAX_CONNECTIONS,
                            keepalive_seconds=KEEPALIVE_SECONDS)


def _tls(verify: bool, ca_bundle: str | None) -> ssl.SSLContext | bool:
    if not verify:
        return False
    if ca_bundle is None:
        return True
    try:
        return ssl.create_default_context(cafile=ca_bundle)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"caBundle: cannot read the CA bundle {ca_bundle!r} ({exc})") from None
