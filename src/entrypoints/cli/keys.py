"""``searchport keys secure``: mint a secured key from a named key of the config, for a
backend that does not use an Algolia client. The key goes to stdout alone; what it allows
goes to stderr."""

from __future__ import annotations

import argparse
import ipaddress
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from searchport.domain.config import Config
from searchport.domain.errors import InvalidRequest
from searchport.domain.filters.grammar import parse_filters
from searchport.entrypoints.keys.secured import mint

DURATION = re.compile(r"^(\d+)\s*([smhd]?)$")
SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400}


class KeyRequestError(ValueError):
    """What is wrong with the command line, in one sentence."""


def duration(text: str) -> int:
    found = DURATION.match(text.strip().lower())
    if found is None or int(found.group(1)) == 0:
        raise KeyRequestError(f"--valid-for: {text!r} is not a duration such as 3600, 30m, "
                              "1h or 2d")
    return int(found.group(1)) * SECONDS[found.group(2)]


def restrictions(args: argparse.Namespace, config: Config, now: float) -> dict[str, Any]:
    """The key's restrictions from the command line, each checked first."""
    limits: dict[str, Any] = {}
    if args.filters:
        try:
            parse_filters(args.filters)
        except InvalidRequest as exc:
            raise KeyRequestError(f"--filters: {exc.message}") from None
        limits["filters"] = args.filters
    if args.valid_for:
        limits["validUntil"] = int(now) + duration(args.valid_for)
    if args.handles:
        handles = [h.strip() for h in args.handles.split(",") if h.strip()]
        for handle in handles:
            if "*" not in handle and handle not in config.indexes:
                raise KeyRequestError(f"--handles: {handle!r} is not a configured handle")
        limits["restrictIndices"] = handles
    if args.sources:
        try:
            ipaddress.ip_network(args.sources, strict=False)
        except ValueError:
            raise KeyRequestError(f"--sources: {args.sources!r} is not an IPv4 or IPv6 "
                                  "network (CIDR)") from None
        limits["restrictSources"] = args.sources
    if args.user_token:
        limits["userToken"] = args.user_token
    return limits


def secure(args: argparse.Namespace, config: Config, now: float | None = None) -> int:
    parent = config.keys.get(args.parent)
    if parent is None:
        named = ", ".join(sorted(config.keys)) or "none is configured"
        print(f"searchport: --parent: no key named {args.parent!r} under keys: ({named})",
              file=sys.stderr)
        return 2
    try:
        limits = restrictions(args, config, time.time() if now is None else now)
    except KeyRequestError as exc:
        print(f"searchport: {exc}", file=sys.stderr)
        return 2
    print(mint(parent.key, limits))
    until = limits.get("validUntil")
    expiry = (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(until)) if until
              else "never (add --valid-for)")
    print(f"secured key of {args.parent!r}: handles {limits.get('restrictIndices', ['*'])}, "
          f"filters {limits.get('filters', '(none)')!r}, expires {expiry}", file=sys.stderr)
    return 0


def add_commands(sub: Any, config_help: str, func: Callable[[argparse.Namespace], int]
                 ) -> None:
    """``keys secure`` under the root parser's subcommands, run by ``func``."""
    keys = sub.add_parser("keys", help="API keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    cmd = keys_sub.add_parser(
        "secure", help="print a secured key minted from a named key (docs/keys.md)",
        description="Prints a secured API key (the format of Algolia's "
                    "generateSecuredApiKey) minted from the named key --parent; it reads "
                    "only what its parent reads, narrowed by these options.")
    cmd.add_argument("--config", help=config_help)
    cmd.add_argument("--parent", required=True, help="the name of a key under keys:")
    cmd.add_argument("--filters", help="filters ANDed to every read, in Algolia's filter "
                                       "syntax (genre:fiction AND year > 2000)")
    cmd.add_argument("--valid-for", help="lifetime: seconds, or 30m, 1h, 2d")
    cmd.add_argument("--handles", help="comma-separated handles or patterns (dev_*)")
    cmd.add_argument("--sources", help="the IPv4 or IPv6 network (CIDR) it may be used from")
    cmd.add_argument("--user-token", help="the user it is for: its rate-limit identity")
    cmd.set_defaults(func=func)
