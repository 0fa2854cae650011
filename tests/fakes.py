"""Hand-written fakes of the ports, for unit tests of the domain and the HTTP layer."""

from __future__ import annotations

from typing import Any

import msgspec

from searchport.domain.errors import InvalidQuery
from searchport.domain.query import FacetValuesQuery, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit


class FakeEngine:
    """Records every query and answers with canned results."""

    def __init__(
        self,
        *,
        name: str = "fake",
        capabilities: Capabilities | None = None,
        result: EngineResult | None = None,
        facet_values: list[FacetValue] | None = None,
        documents: dict[str, Hit] | None = None,
    ) -> None:
        self._name = name
        self._capabilities = capabilities or Capabilities(
            suggest=True, histogram=True, geo_grid=True
        )
        self.result = result or EngineResult(hits=[], total=0)
        self.values = facet_values or []
        self.documents = documents or {}
        self.queries: list[Any] = []
        self.started = False
        self.closed = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    async def search(self, query: SearchQuery) -> EngineResult:
        self.queries.append(query)
        return self.result

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        self.queries.append(query)
        return self.values

    async def get_document(self, doc_id: str) -> Hit | None:
        self.queries.append(doc_id)
        return self.documents.get(doc_id)

    async def get_mapping(self) -> dict[str, Any]:
        return {"fake": {"mappings": {}}}

    async def raw_query(self, body: dict[str, Any]) -> bytes:
        self.queries.append(body)
        if "bad" in body:
            raise InvalidQuery("the engine rejected the query: bad")
        return msgspec.json.encode({"echo": body})

    async def start(self) -> None:
        self.started = True

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        self.closed = True


class FakeCache:
    """A dict cache with a switchable status."""

    def __init__(self, status: str = "memory") -> None:
        self.status = status
        self.entries: dict[str, bytes] = {}

    async def get(self, key: str) -> bytes | None:
        return self.entries.get(key)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        self.entries[key] = value

    async def clear(self) -> int:
        removed = len(self.entries)
        self.entries.clear()
        return removed

    async def close(self) -> None:
        return None
