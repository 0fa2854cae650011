"""The Query Suggestions index port: where a ``querySuggestions`` handle's records go."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from searchport.domain.suggestions.records import Suggestion


class SuggestionsIndex(Protocol):
    """One ``querySuggestions`` handle's index. Raises only ``searchport.domain.errors``
    exceptions; a failed ``replace`` leaves the index served before it whole."""

    async def built_at(self) -> float | None:
        """When the live index was built (seconds since the Unix epoch), by this process
        or another one serving the same index folder; None before any build."""
        ...

    async def reopen(self) -> None:
        """Serve the live index, when another process built a newer one."""
        ...

    async def replace(self, suggestions: Sequence[Suggestion]) -> None:
        """Build an index of these suggestions and serve it in one swap: a search during
        the build answers from the previous index."""
        ...
