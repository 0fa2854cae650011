"""The embedded engine's searches run in the process's search threads: as many as the cores
the process may run on, made again in a forked child."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading

import pytest

from searchport.adapters.tantivy import engine as tantivy_engine
from searchport.adapters.tantivy.engine import SEARCH_THREADS, SearchThreads, TantivyEngine
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.domain.query import SearchQuery


def test_as_many_threads_as_usable_cores() -> None:
    assert SearchThreads.size() == len(os.sched_getaffinity(0))
    pool = SEARCH_THREADS.pool()
    assert pool is SEARCH_THREADS.pool()
    assert pool._max_workers == SearchThreads.size()


@pytest.mark.anyio
async def test_searches_run_in_the_search_threads(books_engine: TantivyEngine,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    names: list[str] = []
    real_search = tantivy_engine.run_search

    def search(ix: OpenIndex, query: SearchQuery) -> object:
        names.append(threading.current_thread().name)
        return real_search(ix, query)

    monkeypatch.setattr(tantivy_engine, "run_search", search)
    texts = ("castle", "night", "the", "war")
    results = await asyncio.gather(*(books_engine.search(SearchQuery(text=t)) for t in texts))
    one_by_one = [await books_engine.search(SearchQuery(text=t)) for t in texts]
    assert results == one_by_one
    assert any(r.total > 0 for r in results)
    assert len(names) == 8
    assert all(name.startswith("searchport-search") for name in names)
    assert threading.current_thread().name not in names


def _search_in_child(out: multiprocessing.queues.Queue[int]) -> None:
    out.put(SEARCH_THREADS.pool().submit(os.getpid).result(timeout=10))


def test_a_forked_child_gets_threads_of_its_own() -> None:
    assert SEARCH_THREADS.pool().submit(os.getpid).result(timeout=10) == os.getpid()
    context = multiprocessing.get_context("fork")
    out: multiprocessing.queues.Queue[int] = context.Queue()
    child = context.Process(target=_search_in_child, args=(out,))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    assert out.get(timeout=5) == child.pid
