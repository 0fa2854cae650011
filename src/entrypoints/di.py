"""The bridge from Litestar's dependency injection to the container's providers."""

from __future__ import annotations

from typing import Any

from dependency_injector import providers
from litestar.di import Provide


def bridge(provider: providers.Provider[Any]) -> Provide:
    """A Litestar dependency that asks ``provider`` for its value on each request (so an
    override in the container holds at once). The container's providers are synchronous
    singletons: resolved inline, with no coroutine or thread per request."""

    def resolve() -> Any:
        return provider()

    return Provide(resolve, use_cache=False, sync_to_thread=False)
