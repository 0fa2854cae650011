"""``QuerySuggestionsEngine``: a ``querySuggestions`` handle on the embedded engine.

Its index folder holds, beside tantivy's generations (``adapters/tantivy/folder.py``), the
records of the last build as JSON Lines (``suggestions.jsonl``): that file is the index's
source, so a restart serves the last suggestions at once, and a rebuild writes it anew and
builds a new generation from it, swapped in when complete.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from searchport.adapters.tantivy.builder import build_index, index_folder
from searchport.adapters.tantivy.engine import TantivyEngine
from searchport.domain.config import IndexConfig
from searchport.domain.errors import EngineUnavailable
from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit
from searchport.domain.suggestions.records import Suggestion

RECORDS_FILE = "suggestions.jsonl"
WRITE_LOCK = ".searchport-suggestions.lock"  # the records file and its build, together
_encode = msgspec.json.Encoder().encode


class QuerySuggestionsEngine:
    """``SearchEnginePort`` (searches go to the embedded engine) and ``SuggestionsIndex``."""

    def __init__(self, handle: str, config: IndexConfig, base_dir: Path) -> None:
        self._handle = handle
        self._source = config.source or ""
        self._folder = index_folder(handle, config, base_dir)
        self._records = self._folder.path / RECORDS_FILE
        # the embedded engine's view: an index built from the records file
        self._embedded = msgspec.structs.replace(config, engine="tantivy",
                                                 source=str(self._records))
        self._base_dir = base_dir
        self._engine = TantivyEngine(handle, self._embedded, base_dir)
        self._turn = asyncio.Lock()

    @property
    def name(self) -> str:
        return "querySuggestions"

    @property
    def capabilities(self) -> Capabilities:
        return self._engine.capabilities

    async def start(self) -> None:
        """Serve the last build's suggestions, or none before the first build."""
        if not self._records.is_file():
            await asyncio.to_thread(self._write_and_build, [], False)
        await self._engine.start()

    async def search(self, query: SearchQuery) -> EngineResult:
        return await self._engine.search(query)

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        return await self._engine.facet_values(query)

    async def get_document(self, doc_id: str) -> Hit | None:
        return await self._engine.get_document(doc_id)

    async def record_vector(self, doc_id: str) -> tuple[float, ...] | None:
        return await self._engine.record_vector(doc_id)

    async def get_mapping(self) -> dict[str, Any]:
        return await self._engine.get_mapping()

    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        return await self._engine.raw_query(body, filters)

    async def ping(self) -> None:
        await self._engine.ping()

    async def close(self) -> None:
        await self._engine.close()

    async def built_at(self) -> float | None:
        """None also while no suggestion was built (the empty index made at start, or a
        build that found none): another build costs little then."""
        def read() -> float | None:
            meta = self._folder.read_meta()
            if meta is None or meta.docs == 0:
                return None
            return meta.built_at

        return await asyncio.to_thread(read)

    async def reopen(self) -> None:
        await self._engine.reopen()

    async def replace(self, suggestions: Sequence[Suggestion]) -> None:
        rows = [suggestion.record(self._source) for suggestion in suggestions]
        async with self._turn:
            await asyncio.to_thread(self._write_and_build, rows, True)
            await self._engine.reopen()

    def _write_and_build(self, rows: Sequence[dict[str, Any]], force: bool) -> None:
        """The records file replaced whole (``os.replace``), then the index built from it;
        one process at a time, so a build never reads another process's file mid-write."""
        with self._folder.build_lock(WRITE_LOCK):
            temp = self._folder.path / f".{RECORDS_FILE}.{secrets.token_hex(4)}"
            try:
                with temp.open("wb") as file:
                    for row in rows:
                        file.write(_encode(row) + b"\n")
                os.replace(temp, self._records)
            except OSError as exc:
                raise EngineUnavailable(f"the query suggestions of {self._handle} cannot be "
                                        f"written: {exc.strerror}") from exc
            finally:
                temp.unlink(missing_ok=True)
            build_index(self._handle, self._embedded, self._base_dir, force=force)
