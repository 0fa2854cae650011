"""``EngineAddress``: an engine's ``host`` setting, split and checked; ``proxy_address``:
a ``proxy`` setting checked.

Its own module, free of any HTTP client, so that reading the config (the ``serve`` parent
process, ``check``) does not load the engines' HTTP client.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit

from searchport.domain.config import ConfigError


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
        self.netloc = netloc  # host[:port], without credentials
        self.origin = urlunsplit((parts.scheme, netloc, "", "", ""))
        self.prefix = parts.path.rstrip("/")
        # userinfo is percent-encoded in a URL (RFC 3986 3.2.1): "p%40ss" is "p@ss"
        self.username = unquote(parts.username) if parts.username is not None else None
        self.password = unquote(parts.password) if parts.password is not None else None
        self.is_https = parts.scheme == "https"

    def url(self, path: str) -> str:
        return f"{self.origin}{self.prefix}{path}"


def proxy_address(proxy: str) -> str:
    """A handle's ``proxy`` (``http://[user:password@]host:port``) checked; the message of
    a ``ConfigError`` never repeats it (it may hold a password)."""
    try:
        parts = urlsplit(proxy.strip())
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        raise ConfigError("proxy: not a valid URL") from None
    if parts.scheme != "http" or not parts.hostname or parts.path not in ("", "/"):
        raise ConfigError("proxy: not an http://host:port URL")
    return proxy.strip()
