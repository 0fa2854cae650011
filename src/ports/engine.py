"""The search-engine port: everything the use cases ask of one configured index."""

from __future__ import annotations

from typing import Any, Protocol

from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit


class SearchEnginePort(Protocol):
    """One index handle's engine. Raises only ``searchport.domain.errors`` exceptions."""

    @property
    def name(self) -> str:
        """The engine type, as written in the config (``tantivy``, ``elasticsearch``...)."""
        ...

    @property
    def capabilities(self) -> Capabilities: ...

    async def search(self, query: SearchQuery) -> EngineResult: ...

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]: ...

    async def get_document(self, doc_id: str) -> Hit | None: ...

    async def record_vector(self, doc_id: str) -> tuple[float, ...] | None:
        """The vector of one record's meaning (docs/semantic.md, similar documents): the
        one the engine searches by meaning with; ``None`` when no record has that id.
        ``InvalidRequest`` when the handle searches by meaning nowhere or the record has
        no vector."""
        ...

    async def get_mapping(self) -> dict[str, Any]: ...

    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        """Run an engine-native query body against the configured index; the engine's
        response as JSON bytes, unmodified. ``filters`` (only sent to an engine whose
        ``Capabilities.raw_query_filters`` is set): every document the body reads, counts
        and aggregations included, must satisfy them."""
        ...

    async def start(self) -> None:
        """Open connections or the local index (building it when missing or stale)."""
        ...

    async def ping(self) -> None:
        """Return when the engine answers; raise ``EngineUnavailable``/``EngineTimeout``."""
        ...

    async def close(self) -> None: ...
