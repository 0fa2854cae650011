"""Reading an engine's 2xx answer: one error for a body of the wrong shape, and the two
shape checks every engine's ``parse`` module uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
