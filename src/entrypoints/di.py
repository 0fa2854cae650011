"""The bridge from Litestar's dependency injection to the container's providers."""

from __future__ import annotations

import inspect
from typing import Any

from dependency_injector import providers
from litestar.di import Provide


def bridge(provider: providers.Provider[Any]) -> Provide:
    """A Litestar dependency that asks ``provider`` for its value on each request."""

    async def resolve() -> Any:
        value = provider()
        if inspect.isawaitable(value):
            value = await value
        return value

    return Provide(resolve, use_cache=False)
