"""Numeric field stats on a real Typesense 0.24.1 (``facet_counts[].stats``), and the
``facets_stats`` of the Algolia routes built from them. Expected values: plain Python over
the loaded rows.

Seen on the server: stats cover every value in the matching documents whatever
``max_facet_values`` is; ``total_values`` is the number of distinct values (so the count is
``sum / avg``); a float field gives single-precision numbers (19.989999771118164 for 19.99).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.adapters.network.pools import EnginePools
from searchport.adapters.resources import EngineResources
from searchport.adapters.typesense import TypesenseEngine
from searchport.domain.config import IndexConfig
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import RangeFilter, SearchQuery, TermFilter
from searchport.domain.results import FieldStats
from searchport.ports.engine import SearchEnginePort
from tests.integration.typesense_server import (
    app_client,
    index_settings,
    typesense_rows,
)
from tests.typesense_server import TypesenseServer

Row = dict[str, Any]
ROWS = typesense_rows()
SINGLE = 1e-6  # relative error of single-precision floats summed in double


@pytest.fixture
async def engine(server: TypesenseServer) -> AsyncIterator[SearchEnginePort]:
    config = msgspec.convert(index_settings(server), IndexConfig)
    pools = EnginePools()
    try:
        yield TypesenseEngine("books", config, EngineResources(Path("."), pools))
    finally:
        await pools.aclose()


@pytest.fixture(scope="module")
def client(server: TypesenseServer) -> Iterator[TestClient[Any]]:
    fields = {"year": {"type": "integer"}, "pages": {"type": "integer"},
              "genre": {"type": "keyword"}}
    with app_client({"books": index_settings(server, fields=fields)}) as client:
        yield client


def values(rows: list[Row], field: str) -> list[float]:
    return [float(r[field]) for r in rows if isinstance(r.get(field), int | float)]


def assert_stats(found: FieldStats | None, expected: list[float], rel: float = 1e-12) -> None:
    assert found is not None and expected
    assert (found.min, found.max, found.count) == (min(expected), max(expected), len(expected))
    assert found.sum is not None and math.isclose(found.sum, sum(expected), rel_tol=rel)
    assert found.avg is not None
    assert math.isclose(found.avg, sum(expected) / len(expected), rel_tol=rel)


@pytest.mark.anyio
async def test_stats_over_every_matching_value(engine: SearchEnginePort) -> None:
    result = await engine.search(SearchQuery(stats=("year", "pages", "price"),
                                             max_facet_values=1, limit=0))
    assert_stats(result.stats.get("year"), values(ROWS, "year"))
    assert_stats(result.stats.get("pages"), values(ROWS, "pages"))
    assert_stats(result.stats.get("price"), values(ROWS, "price"), rel=SINGLE)


@pytest.mark.anyio
async def test_stats_follow_the_filters_like_facets(engine: SearchEnginePort) -> None:
    filters = (TermFilter(field="genre", values=("fiction",)),
               RangeFilter(field="pages", min=300))
    every = await engine.search(SearchQuery(filters=filters, stats=("pages", "year"),
                                            facets=("year",), disjunctive_facets=False))
    fiction = [r for r in ROWS if r.get("genre") == "fiction"]
    kept = [r for r in fiction if r.get("pages", 0) >= 300]
    assert every.total == len(kept)
    assert_stats(every.stats.get("pages"), values(kept, "pages"))
    assert_stats(every.stats.get("year"), values(kept, "year"))
    # disjunctive: a stats field's own filters do not narrow its stats
    own = await engine.search(SearchQuery(filters=filters, stats=("pages", "year")))
    assert_stats(own.stats.get("pages"), values(fiction, "pages"))
    assert_stats(own.stats.get("year"), values(kept, "year"))


@pytest.mark.anyio
async def test_no_matching_value_no_stats_and_refusals(engine: SearchEnginePort) -> None:
    none = await engine.search(SearchQuery(
        filters=(TermFilter(field="genre", values=("no such genre",)),), stats=("year",)))
    assert none.stats == {}
    for field in ("genre", "published"):  # a string facet; a number that is not a facet
        with pytest.raises(InvalidRequest, match="stats"):
            await engine.search(SearchQuery(stats=(field,)))


def test_algolia_facets_stats(client: TestClient[Any]) -> None:
    response = client.post("/1/indexes/books/query", json={
        "facets": ["year", "pages", "genre"], "maxValuesPerFacet": 2, "hitsPerPage": 0,
        "numericFilters": ["year>=1900"]})
    assert response.status_code == 200, response.text
    kept = [r for r in ROWS if r.get("year", 0) >= 1900]
    stats = response.json()["facets_stats"]
    assert set(stats) == {"year", "pages"}
    for field in ("year", "pages"):
        found = values(kept, field)
        assert stats[field]["min"] == min(found) and stats[field]["max"] == max(found)
        assert stats[field]["sum"] == pytest.approx(sum(found))
        assert stats[field]["avg"] == pytest.approx(sum(found) / len(found))
