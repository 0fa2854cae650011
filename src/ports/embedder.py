"""The embedder port: texts to vectors of their meaning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from searchport.domain.semantic import Vector


class EmbedderPort(Protocol):
    """Texts to unit vectors of one model's space. Raises only ``searchport.domain.errors``
    exceptions (``EngineUnavailable``, ``EngineTimeout``) when it cannot."""

    @property
    def model(self) -> str:
        """The vectors' space: vectors of two models are never compared."""
        ...

    async def start(self) -> None:
        """Load the model or open the connection (a failure stops startup)."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[Vector]: ...

    async def close(self) -> None: ...
