"""Reading an engine's 2xx answer: one error for a body of the wrong shape, the two shape
checks every engine's ``parse`` module uses, and dates written back as ISO-8601."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

_SECONDS = re.compile(r"-?[0-9]{1,19}")


class UnreadableAnswer(ValueError):
    """The engine answered 2xx with a body searchport cannot read."""


def mapping(value: Any, what: str = "value") -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise UnreadableAnswer(f"{what} is not an object")
    return value


def as_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise UnreadableAnswer(f"{what} is not a list")
    return value


def text(value: Any) -> str:
    """A scalar as text, booleans as JSON writes them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def iso_date(value: Any) -> str:
    """Whole Unix seconds (how Typesense and Meilisearch hold a ``date`` field, and write its
    facet values) as an ISO-8601 UTC date-time in the embedded engine's format
    (``2002-07-18T12:54:00Z``); any other value as text (a date stored as text, a fraction
    of a second)."""
    written = text(value)
    if not _SECONDS.fullmatch(written):
        return written
    try:
        moment = datetime.fromtimestamp(int(written), UTC)
    except (OverflowError, OSError, ValueError):
        return written  # past year 9999: no ISO-8601 date-time to write
    return moment.isoformat().replace("+00:00", "Z")
