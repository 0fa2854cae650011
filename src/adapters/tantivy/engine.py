"""``TantivyEngine``: the embedded engine behind ``engine: tantivy``.

All tantivy work is blocking, so each call runs in a worker thread; tantivy releases the
GIL while it searches, so concurrent requests overlap. Searches run in the process's search
threads, as many as the cores the process may run on (``os.sched_getaffinity``): more
threads than cores only take turns at the interpreter lock, and each thread that allocates
at once keeps memory of its own.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from searchport.adapters.tantivy.builder import build_index, index_folder
from searchport.adapters.tantivy.hybrid import run_hybrid
from searchport.adapters.tantivy.native import mapping, raw_query
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.schema import IndexLayout
from searchport.adapters.tantivy.search import facet_search, run_search
from searchport.adapters.tantivy.vectors import RecordVectors
from searchport.domain.config import IndexConfig
from searchport.domain.errors import (
    EngineUnavailable,
    Forbidden,
    InvalidRequest,
    SearchportError,
)
from searchport.domain.query import FacetValuesQuery, Filter, SearchQuery
from searchport.domain.results import Capabilities, EngineResult, FacetValue, Hit

T = TypeVar("T")
logger = logging.getLogger("searchport.tantivy")



class SearchThreads:
    """The threads searches run in: made on first use in each process (a worker forked
    from a parent that searched gets threads of its own)."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._pid = 0

    @staticmethod
    def size() -> int:
        """The cores this process may run on (at least 1)."""
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):  # not every platform has CPU affinity
            return max(1, os.cpu_count() or 1)

    def pool(self) -> ThreadPoolExecutor:
        pid = os.getpid()
        if self._pool is None or self._pid != pid:
            self._pool = ThreadPoolExecutor(self.size(), thread_name_prefix="searchport-search")
            self._pid = pid
        return self._pool


SEARCH_THREADS = SearchThreads()

_CAPABILITIES = Capabilities(suggest=True, boosts=True, histogram=True, geo_grid=True,
                             geo_area=True, nested=False, multi_index=False, raw_query=True,
                             exact_facet_counts=True)


class TantivyEngine:
    def __init__(self, handle: str, config: IndexConfig, base_dir: Path) -> None:
        self._handle = handle
        self._config = config
        self._base_dir = base_dir
        self._index: OpenIndex | None = None

    @property
    def name(self) -> str:
        return "tantivy"

    @property
    def capabilities(self) -> Capabilities:
        return _CAPABILITIES

    async def start(self) -> None:
        """Build the index when missing or stale, then open it."""
        self._index = await asyncio.to_thread(self._open)

    async def reopen(self) -> None:
        """Open the live generation of the index folder (built since ``start``, by this
        process or another) in place of the one open; searches under way finish on the
        one they started on."""
        self._index = await asyncio.to_thread(self._open_live)

    def _open(self) -> OpenIndex:
        with _as_domain_errors(f"The embedded index of {self._handle} cannot be opened"):
            build_index(self._handle, self._config, self._base_dir)
        return self._open_live()

    def _open_live(self) -> OpenIndex:
        with _as_domain_errors(f"The embedded index of {self._handle} cannot be opened"):
            folder = index_folder(self._handle, self._config, self._base_dir)
            meta = folder.read_meta()
            if meta is None:
                raise EngineUnavailable(f"the index of {self._handle} was not built")
            generation = folder.generation_path(meta)
            vectors = RecordVectors(generation) if self._config.semantic is not None else None
            return OpenIndex(self._handle, generation, IndexLayout(self._config),
                             meta.stored_fields, vectors)

    async def close(self) -> None:
        self._index = None  # tantivy frees its files when the searcher is dropped

    async def ping(self) -> None:
        await self._run(OpenIndex.probe)

    async def search(self, query: SearchQuery) -> EngineResult:
        if query.semantic > 0 and query.vector is not None:
            floor = self._config.semantic.floor if self._config.semantic else 0.0
            return await self._run(lambda ix: run_hybrid(ix, query, floor))
        return await self._run(lambda ix: run_search(ix, query))

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        return await self._run(lambda ix: facet_search(ix, query))

    async def get_document(self, doc_id: str) -> Hit | None:
        def lookup(ix: OpenIndex) -> Hit | None:
            address = ix.address_by_id(doc_id)
            return None if address is None else ix.hit(ix.row(address))

        return await self._run(lookup)

    async def record_vector(self, doc_id: str) -> tuple[float, ...] | None:
        def lookup(ix: OpenIndex) -> tuple[float, ...] | None:
            if ix.vectors is None:
                raise InvalidRequest(f"{self._handle} searches by meaning nowhere: give it "
                                     "a semantic section (docs/semantic.md)")
            if ix.address_by_id(doc_id) is None:
                return None
            seq = ix.vectors.seq_of.get(doc_id)
            if seq is None:
                raise EngineUnavailable(f"the vectors of {self._handle} are not built")
            return tuple(float(x) for x in ix.vectors.matrix[seq])

        return await self._run(lookup)

    async def get_mapping(self) -> dict[str, Any]:
        return await self._run(mapping)

    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        if filters:  # never sent: raw_query_filters is off
            raise Forbidden("A raw query cannot keep forced filters on this engine")
        return await self._run(lambda ix: raw_query(ix, body))

    async def _run(self, work: Callable[[OpenIndex], T]) -> T:
        index = self._index
        if index is None:
            raise EngineUnavailable(f"the tantivy index of {self._handle} is not open")
        with _as_domain_errors(f"The embedded engine failed on {self._handle}"):
            return await asyncio.get_running_loop().run_in_executor(
                SEARCH_THREADS.pool(), work, index)


@contextmanager
def _as_domain_errors(failure: str) -> Iterator[None]:
    """Domain errors pass; any other failure is logged whole and becomes a 502 whose
    message keeps internals (paths, tantivy's text) out of the response."""
    try:
        yield
    except SearchportError:
        raise
    except BaseException as exc:
        _reraise_fatal(exc)
        logger.error("%s", failure, exc_info=exc)
        raise EngineUnavailable(f"{failure}; see the server log") from exc


def _reraise_fatal(exc: BaseException) -> None:
    """Let cancellation and interpreter exits through; a tantivy panic arrives as a
    BaseException (pyo3's PanicException) and is a failure like any other."""
    if isinstance(exc, Exception) or type(exc).__name__ == "PanicException":
        return
    raise exc
