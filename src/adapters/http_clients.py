"""Pooled HTTP clients for the server engines: one ``httpx.AsyncClient`` per engine origin.

Handles that point at the same engine host share one connection pool (keep-alive, bounded);
credentials and timeouts are per request, so each handle keeps its own. The composition root
owns the pool and closes it after the engines.
"""

from __future__ import annotations

import logging
import ssl
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx

from searchport.domain.config import ConfigError

# httpx logs every request URL at INFO; searchport logs its own, credential-free lines.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)

MAX_CONNECTIONS = 64
MAX_KEEPALIVE = 32
KEEPALIVE_SECONDS = 30.0


class EngineAddress:
    """An engine ``host`` split into the origin (pool key), a path prefix and any
    credentials written into the URL (``https://user:pass@host``), which are taken out."""

    def __init__(self, host: str) -> None:
        host = host.strip()
        if "://" not in host:  # "localhost:9200" means http://localhost:9200
            host = f"http://{host}"
        try:
            parts = urlsplit(host)
            parts.port  # noqa: B018 - a bad port raises here
        except ValueError:
            raise ConfigError("host: not a valid URL") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError("host: not an http:// or https:// URL")
        netloc = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        if parts.port is not None:
            netloc = f"{netloc}:{parts.port}"
        self.origin = urlunsplit((parts.scheme, netloc, "", "", ""))
        self.prefix = parts.path.rstrip("/")
        # userinfo is percent-encoded in a URL (RFC 3986 3.2.1): "p%40ss" is "p@ss"
        self.username = unquote(parts.username) if parts.username is not None else None
        self.password = unquote(parts.password) if parts.password is not None else None
        self.is_https = parts.scheme == "https"

    def url(self, path: str) -> str:
        return f"{self.origin}{self.prefix}{path}"


class HttpClients:
    """Lazily created clients keyed by origin and TLS settings."""

    def __init__(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        """``transport`` replaces the network for every client (contract tests)."""
        self._transport = transport
        self._clients: dict[tuple[str, bool, str | None], httpx.AsyncClient] = {}

    def client(
        self, address: EngineAddress, *, verify: bool = True, ca_bundle: str | None = None
    ) -> httpx.AsyncClient:
        key = (address.origin, verify, ca_bundle)
        client = self._clients.get(key)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(
                verify=_tls(verify, ca_bundle),
                limits=httpx.Limits(
                    max_connections=MAX_CONNECTIONS,
                    max_keepalive_connections=MAX_KEEPALIVE,
                    keepalive_expiry=KEEPALIVE_SECONDS,
                ),
                follow_redirects=False,
                transport=self._transport,
                trust_env=False,  # proxies and .netrc never redirect engine credentials
            )
            self._clients[key] = client
        return client

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()


def _tls(verify: bool, ca_bundle: str | None) -> ssl.SSLContext | bool:
    if not verify:
        return False
    if ca_bundle is None:
        return True
    try:
        return ssl.create_default_context(cafile=ca_bundle)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"caBundle: cannot read the CA bundle {ca_bundle!r} ({exc})") from None
