"""Secured API keys, the format of Algolia's ``generateSecuredApiKey``.

A secured key is ``base64(hex(HMAC-SHA256(parent key, params)) + params)``, where ``params``
is the URL-encoded query string of the restrictions sorted by name (``filters``,
``validUntil``, ``restrictIndices``, ``restrictSources``, ``userToken``; lists joined by
commas), as the stock Python and JavaScript clients write it. Anyone holding the parent key
can mint one offline; searchport checks the HMAC against every configured key in constant
time and reads the restrictions. The params are not secret (base64 is no encryption), only
unforgeable.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

import msgspec

from searchport.domain.errors import InvalidRequest
from searchport.domain.filters.grammar import (
    Cnf,
    parse_facet_filters,
    parse_filters,
    parse_numeric_filters,
)

DIGEST_CHARS = 64  # hex SHA-256
MAX_KEY_CHARS = 8192
FILTER_PARAMS = ("filters", "facetFilters", "numericFilters")
KNOWN = frozenset({*FILTER_PARAMS, "validUntil", "restrictIndices", "restrictSources",
                   "userToken"})


class SecuredKeyRefused(Exception):
    """The key is not a secured key of a configured parent, or is one it cannot honour;
    ``reason`` is for the server's log (never key material), the client hears one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Restrictions(msgspec.Struct, frozen=True, kw_only=True):
    """What a secured key says, parsed."""

    filters: Cnf = ()
    valid_until: int | None = None
    indices: tuple[str, ...] | None = None  # names or "*" patterns; None: every one
    sources: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] | None = None
    user_token: str | None = None
    fingerprint: str = ""  # a digest of the params


def split(token: bytes) -> tuple[bytes, str] | None:
    """The (hex digest, params) a token claims, or ``None`` when it is not shaped as a
    secured key."""
    if len(token) > MAX_KEY_CHARS:
        return None
    try:
        decoded = base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        return None
    digest, params = decoded[:DIGEST_CHARS], decoded[DIGEST_CHARS:]
    if len(digest) != DIGEST_CHARS or not all(c in b"0123456789abcdef" for c in digest):
        return None
    try:
        return digest, params.decode("utf-8")
    except UnicodeDecodeError:
        return None


def signature(parent: bytes, params: str) -> bytes:
    return hmac.new(parent, params.encode("utf-8"), hashlib.sha256).hexdigest().encode("ascii")


def restrictions(params: str) -> Restrictions:
    """The restrictions of verified ``params``; ``SecuredKeyRefused`` naming the problem."""
    try:
        pairs = parse_qsl(params, keep_blank_values=True, strict_parsing=bool(params))
    except ValueError:
        raise SecuredKeyRefused("its restrictions are not a query string") from None
    values: dict[str, str] = {}
    for name, value in pairs:
        if name not in KNOWN:
            raise SecuredKeyRefused(f"it carries {name!r}, a restriction searchport does "
                                    "not enforce")
        if name in values:
            raise SecuredKeyRefused(f"it carries {name!r} twice")
        values[name] = value
    try:
        return Restrictions(
            filters=_filters(values),
            valid_until=int(values["validUntil"]) if "validUntil" in values else None,
            indices=_list(values["restrictIndices"]) if "restrictIndices" in values else None,
            sources=(tuple(ipaddress.ip_network(s, strict=False)
                           for s in _list(values["restrictSources"]))
                     if "restrictSources" in values else None),
            user_token=values.get("userToken") or None,
            fingerprint=hashlib.sha256(params.encode("utf-8")).hexdigest()[:24],
        )
    except InvalidRequest as exc:
        raise SecuredKeyRefused(f"its filters do not parse ({exc.message})") from None
    except ValueError:
        raise SecuredKeyRefused("its validUntil or restrictSources is malformed") from None


def _list(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.replace(";", ",").split(",") if part.strip())


def _filters(values: Mapping[str, str]) -> Cnf:
    cnf: Cnf = ()
    if values.get("filters", "").strip():
        cnf += parse_filters(values["filters"])
    for name, parse in (("facetFilters", parse_facet_filters),
                        ("numericFilters", parse_numeric_filters)):
        text = values.get(name, "").strip()
        if text:
            cnf += parse(text if text.startswith("[") else _legacy_groups(text))
    return cnf


def _legacy_groups(text: str) -> list[list[str]]:
    """The clients write a list restriction joined by commas (``[["g:a", "g:b"], "l:fr"]``
    arrives as ``g:a,g:b,l:fr``), which is Algolia's string form: commas AND,
    parentheses group an OR (``(g:a,g:b),l:fr``)."""
    groups: list[list[str]] = []
    depth, part, current = 0, "", []
    for char in text + ",":
        if char == "(" and depth == 0 and not part.strip():
            depth = 1
        elif char == ")" and depth == 1:
            depth = 2
        elif char == "," and depth != 1:
            if part.strip():
                current.append(part.strip())
            groups.append(current)
            depth, part, current = 0, "", []
        elif char == "," and depth == 1:
            current.append(part.strip())
            part = ""
        else:
            part += char
    return [g for g in groups if g]


def mint(parent: str, restrictions: Mapping[str, Any]) -> str:
    """A secured key of ``parent``, as ``generateSecuredApiKey`` writes it (lists joined by
    commas, parameters sorted by name, spaces as ``%20``)."""
    flat = {name: ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
            for name, value in sorted(restrictions.items()) if value is not None}
    params = urlencode(flat).replace("+", "%20")
    digest = signature(parent.encode("utf-8"), params).decode("ascii")
    return base64.b64encode(f"{digest}{params}".encode()).decode("ascii")
