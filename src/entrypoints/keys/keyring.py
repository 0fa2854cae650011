"""Every configured key, and what a request's token is: a plain key, a named key with its
access, a secured key minted from either, or nothing (a 401).

Tokens are compared in constant time against every key (``hmac.compare_digest``, all keys
compared whatever matched before), and a secured key's HMAC against every parent's. Which
check failed is logged as a reason (never key material) and never told to the client.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import time
from collections.abc import Callable
from typing import NamedTuple

from searchport.domain.access import EVERY_HANDLE, FULL_ACCESS, Access, filters_by_handle
from searchport.domain.catalog import IndexEntry
from searchport.domain.config import Config, KeyConfig, RateRule
from searchport.domain.filters.translate import to_domain_filters
from searchport.domain.query import Filter
from searchport.entrypoints.keys import secured
from searchport.entrypoints.keys.secured import Restrictions, SecuredKeyRefused

logger = logging.getLogger("searchport.keys")


class Principal(NamedTuple):
    """Who a valid token speaks for."""

    access: Access
    identity: str  # the rate limit's name for it (a digest or a key's name, never a key)
    rule: RateRule | None = None  # the key's own rate rule, counted per ``identity``


class _Key(NamedTuple):
    secret: bytes
    name: str  # "" for a plain apiKey entry
    access: Access
    config: KeyConfig | None


def _digest(material: bytes | str) -> str:
    data = material.encode("utf-8") if isinstance(material, str) else material
    return hashlib.sha256(data).hexdigest()[:32]


def named_access(name: str, config: KeyConfig) -> Access:
    return Access(handles=tuple(config.handles),
                  forced=filters_by_handle(config.filters), filtered=bool(config.filters),
                  raw_query=config.raw_query, analytics=config.analytics,
                  fingerprint="k" + _digest(f"{name}\0{config.handles}\0{config.filters}")[:16])


class Keyring:
    def __init__(self, config: Config, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        keys = [_Key(k.encode("utf-8"), "", FULL_ACCESS, None) for k in config.api_keys]
        keys += [_Key(k.key.encode("utf-8"), name, named_access(name, k), k)
                 for name, k in config.keys.items()]
        self._keys = tuple(keys)

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    @property
    def has_own_rules(self) -> bool:
        return any(k.config is not None and k.config.rate_limit is not None
                   for k in self._keys)

    def resolve(self, token: bytes, address: str) -> Principal | None:
        """The principal of ``token`` from the client at ``address``, or ``None``."""
        if not token:
            return None
        found: _Key | None = None
        for key in self._keys:  # every key compared, whatever matched before
            if hmac.compare_digest(token, key.secret):
                found = key
        if found is not None:
            return self._plain(found, token)
        claimed = secured.split(token)
        if claimed is None:
            return None
        digest, params = claimed
        for key in self._keys:
            if hmac.compare_digest(digest, secured.signature(key.secret, params)):
                found = key
        if found is None:
            return None
        try:
            return self._secured(found, token, params, address)
        except SecuredKeyRefused as exc:
            logger.warning("secured key of %s refused: %s", _parent_label(found), exc.reason)
            return None

    def _live(self, key: _Key) -> bool:
        expires = key.config.expires if key.config is not None else None
        return expires is None or self._clock() < expires.timestamp()

    def _plain(self, key: _Key, token: bytes) -> Principal | None:
        if not self._live(key):
            return None
        if key.config is None:
            return Principal(FULL_ACCESS, f"token:{_digest(token)}")
        return Principal(key.access, f"key:{key.name}", key.config.rate_limit)

    def _secured(self, parent: _Key, token: bytes, params: str,
                 address: str) -> Principal | None:
        if not self._live(parent):
            raise SecuredKeyRefused("its parent key has expired")
        limits = secured.restrictions(params)
        if limits.valid_until is not None and self._clock() >= limits.valid_until:
            raise SecuredKeyRefused("it has expired (validUntil)")
        if limits.sources is not None and not _from(address, limits.sources):
            raise SecuredKeyRefused("the request comes from outside its restrictSources")
        who = (f"user:{_digest(parent.name + chr(0) + limits.user_token)}"
               if limits.user_token else f"token:{_digest(token)}")
        explicit_raw = parent.config is not None and parent.config.raw_query is True
        access = _secured_access(limits, explicit_raw).within(parent.access)
        rule = parent.config.rate_limit if parent.config is not None else None
        return Principal(access, f"{f'key:{parent.name}:' if parent.name else ''}{who}", rule)


def _secured_access(limits: Restrictions, explicit_raw: bool) -> Access:
    cnf = limits.filters

    def forced(entry: IndexEntry) -> tuple[Filter, ...]:
        return to_domain_filters(cnf, entry.fields.real)

    handles = limits.indices if limits.indices is not None else EVERY_HANDLE
    restricted = bool(cnf) or handles != EVERY_HANDLE
    return Access(handles=handles, forced=forced, filtered=bool(cnf),
                  raw_query=explicit_raw if restricted else None,
                  fingerprint="s" + limits.fingerprint)


def _from(address: str, sources: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
          ) -> bool:
    try:
        client = ipaddress.ip_address(address)
    except ValueError:
        return False
    mapped = getattr(client, "ipv4_mapped", None)  # ::ffff:10.0.0.1 is 10.0.0.1
    return any(client in network or (mapped is not None and mapped in network)
               for network in sources)


def _parent_label(key: _Key) -> str:
    return f"the key {key.name!r}" if key.name else "a plain apiKey entry"
