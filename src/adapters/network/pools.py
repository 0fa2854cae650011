"""``EnginePools``: the process's engine clients, one per engine origin, TLS setting and
proxy, shared by every handle that points there.

Handles on the same engine host share one ``EngineClient`` (``client.py``: one keep-alive
pool, bounded); credentials and timeouts are per request, so each handle keeps its own.
Every client is wrapped in a ``ResilientExchange`` (``resilience.py``): the call's timeout
is the budget of the whole call, and with a ``CallPolicy`` failed reads are retried and
each origin gets a circuit breaker (``circuit_open(origin)``, ``on_circuit`` callbacks).
The composition root owns the pools and closes them after the engines.

The proxy of a client is the handle's ``proxy`` setting, else the environment's
(``HTTPS_PROXY``/``HTTP_PROXY``, ``NO_PROXY``, read with the standard library as
requests and curl read them), chosen once when the client is made.
"""

from __future__ import annotations

import ssl
import time
import urllib.request
from collections.abc import Callable

from searchport.adapters.network.address import EngineAddress
from searchport.adapters.network.breaker import CircuitBreaker, StateListener
from searchport.adapters.network.exchange import Exchange, Tls
from searchport.adapters.network.resilience import CallPolicy, ResilientExchange
from searchport.domain.config import ConfigError

MAX_CONNECTIONS = 64
KEEPALIVE_SECONDS = 30.0

# (origin, verify, CA bundle, proxy)
PoolKey = tuple[str, bool, str | None, str | None]
# the network under one pool: origin, TLS, proxy -> an Exchange (tests wrap it)
Network = Callable[[str, Tls, "str | None"], Exchange]


class EnginePools:
    """Lazily made exchanges keyed by origin, TLS settings and proxy."""

    def __init__(
        self,
        *,
        policy: CallPolicy | None = None,
        on_circuit: StateListener | None = None,
        clock: Callable[[], float] = time.monotonic,
        network: Network | None = None,
    ) -> None:
        """``policy``: retries and circuit breakers (none: one attempt, no breaker);
        ``on_circuit(origin, open)`` hears every breaker's state, starting closed;
        ``clock``: the breakers' (tests move it instead of waiting for a cool-down);
        ``network``: what makes each pool's exchange (default: an ``EngineClient``)."""
        self._policy = policy
        self._on_circuit = on_circuit
        self._clock = clock
        self._network = network
        self._exchanges: dict[PoolKey, ResilientExchange] = {}
        self._breakers: dict[str, CircuitBreaker] = {}

    def circuit_open(self, origin: str) -> bool:
        breaker = self._breakers.get(origin)
        return breaker is not None and breaker.is_open

    def exchange(self, address: EngineAddress, *, verify: bool = True,
                 ca_bundle: str | None = None, proxy: str | None = None) -> Exchange:
        """The pooled exchange for ``address``; ``proxy``: the handle's own (None: the
        environment's). ``ConfigError`` for a CA bundle that cannot be read."""
        if proxy is None:
            proxy = environment_proxy(address)
        key = (address.origin, verify, ca_bundle, proxy)
        exchange = self._exchanges.get(key)
        if exchange is None:
            tls = _tls(verify, ca_bundle)
            make = self._network or network
            exchange = self._resilient(address.origin, make(address.origin, tls, proxy))
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


def network(origin: str, tls: Tls, proxy: str | None) -> Exchange:
    # imported on first use: a config with only embedded indexes never loads pycurl
    from searchport.adapters.network.client import EngineClient

    return EngineClient(origin, tls=tls, proxy=proxy, max_connections=MAX_CONNECTIONS,
                        keepalive_seconds=KEEPALIVE_SECONDS)


def environment_proxy(address: EngineAddress) -> str | None:
    """The proxy the environment names for ``address`` (``HTTPS_PROXY`` for https,
    ``HTTP_PROXY`` for http, in lower case too), unless ``NO_PROXY`` lists its host."""
    chosen = urllib.request.getproxies_environment().get("https" if address.is_https else "http")
    # proxy_bypass reads NO_PROXY as requests and curl do
    if chosen is None or urllib.request.proxy_bypass(address.netloc):
        return None
    return chosen


def _tls(verify: bool, ca_bundle: str | None) -> Tls:
    """The TLS setting, a CA bundle read and checked now (a PEM file of certificates)."""
    if not verify or ca_bundle is None:
        return Tls(verify=verify)
    try:
        with open(ca_bundle, "rb") as file:
            pem = file.read()
        ssl.create_default_context(cafile=ca_bundle)  # certificates ssl can load
    except (OSError, ValueError, ssl.SSLError) as exc:
        raise ConfigError(f"caBundle: cannot read the CA bundle {ca_bundle!r} ({exc})") from None
    return Tls(verify=True, ca_pem=pem)
