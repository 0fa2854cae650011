"""The engine object itself: port conformance, lifecycle, and the paths HTTP cannot reach
(an offset between pages)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import TypeVar

import msgspec
import pytest

from searchport.adapters.meilisearch import MeilisearchEngine, create, translate
from searchport.adapters.network.pools import EnginePools
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig
from searchport.domain.query import SearchQuery
from searchport.ports.engine import SearchEnginePort
from tests.contract.meilisearch import meili_answers as ma
from tests.contract.meilisearch.conftest import HOST, KEY, SEARCH, MeiliDouble, Recorder
from tests.contract.scripted import LoopbackEngine


def engine_over(handler: MeiliDouble, **settings: object) -> tuple[MeilisearchEngine, Recorder]:
    """The adapter alone over ``handler``, served on loopback until the test ends."""
    config = msgspec.convert({"engine": "meilisearch", "host": HOST, "indexName": ma.INDEX,
                              "apiKey": KEY, **settings}, IndexConfig)
    recorder = Recorder(handler)
    served = LoopbackEngine(recorder)
    pools = EnginePools(network=served.network)
    _SERVED.append((served, pools))
    return create("books", config, EngineResources(base_dir=Path("."), pools=pools)), recorder


_SERVED: list[tuple[LoopbackEngine, EnginePools]] = []
T = TypeVar("T")


def run(call: Awaitable[T]) -> T:
    """``call`` on an event loop of its own; the engine's connections closed on it."""
    async def main() -> T:
        try:
            return await call
        finally:
            for _, pools in _SERVED:
                await pools.aclose()

    return asyncio.run(main())


@pytest.fixture(autouse=True)
def _stop_served() -> Iterator[None]:
    yield
    while _SERVED:
        _SERVED.pop()[0].stop()


def test_the_engine_satisfies_the_port() -> None:
    engine: SearchEnginePort = engine_over(MeiliDouble())[0]
    assert engine.name == "meilisearch"
    assert not engine.capabilities.boosts and engine.capabilities.raw_query


def test_ping_is_a_search_for_nothing() -> None:
    double = MeiliDouble().search((200, ma.estimated(limit=0)))
    engine, recorder = engine_over(double)
    run(engine.ping())
    [sent] = recorder.sent
    assert (sent.method, sent.path, sent.body) == ("POST", SEARCH, {"limit": 0})
    assert sent.headers["authorization"] == f"Bearer {KEY}"


def test_start_reads_the_primary_key_and_close_stops_waiting() -> None:
    double = MeiliDouble(primary_key="isbn").search((200, ma.search([{"isbn": "9", "t": 1}])))
    engine, recorder = engine_over(double)

    async def start_search_close() -> str:
        await engine.start()
        result = await engine.search(SearchQuery())
        await engine.close()
        return result.hits[0].id

    assert run(start_search_close()) == "9"
    assert [s.path for s in recorder.sent].count(f"/indexes/{ma.INDEX}") == 1


def test_an_offset_between_pages_fetches_one_page_holding_it() -> None:
    query = SearchQuery(offset=5, limit=20)
    assert translate.window(query) == ({"page": 1, "hitsPerPage": 25}, 5)
    docs = [{"id": f"d{i}"} for i in range(25)]
    double = MeiliDouble().search((200, ma.search(docs, total=40, hits_per_page=25)))
    engine, recorder = engine_over(double)
    result = run(engine.search(query))
    assert [h.id for h in result.hits] == [f"d{i}" for i in range(5, 25)]
    assert result.total == 40
    body = next(s.body for s in recorder.sent if s.path == SEARCH)
    assert (body["page"], body["hitsPerPage"]) == (1, 25)


def test_the_index_uid_is_quoted_in_paths() -> None:
    assert translate.index_path("a b/c", "/search") == "/indexes/a%20b%2Fc/search"
    assert json.loads(json.dumps(translate.raw_body({"indexUid": "x", "q": "y"}))) == {"q": "y"}
