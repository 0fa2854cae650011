"""Geo tiles, centroids and bounds on a real tantivy index."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pytest

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import GeoBounds, GeoGridSpec, GeoPoint, SearchQuery, TermFilter

pytestmark = pytest.mark.anyio
Row = dict[str, Any]


def expected_tiles(rows: list[Row], zoom: int, ref: SimpleNamespace
                   ) -> dict[str, tuple[int, float, float, set[str]]]:
    """key -> (count, mean lat, mean lon, ids of the tile's documents)."""
    tiles: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for row in rows:
        found = ref.point(row)
        if found is not None:
            x, y = ref.tile(found[0], found[1], zoom)
            tiles[f"{zoom}/{x}/{y}"].append((found[0], found[1], ref.doc_id(row)))
    return {
        key: (len(points), sum(p[0] for p in points) / len(points),
              sum(p[1] for p in points) / len(points), {p[2] for p in points})
        for key, points in tiles.items()
    }


@pytest.mark.parametrize("zoom", [0, 1, 3, 5, 8, 12, 17, 23, 29])
async def test_tiles_counts_and_centroids(books_engine: TantivyEngine, rows: list[Row],
                                          ref: SimpleNamespace, zoom: int) -> None:
    result = await books_engine.search(SearchQuery(
        limit=0, geo_grid=GeoGridSpec(field="location", precision=zoom)))
    want = expected_tiles(rows, zoom, ref)
    assert result.geo_clusters is not None
    got = {c.key: c for c in result.geo_clusters}
    assert set(got) == set(want)
    for key, (count, lat, lon, members) in want.items():
        cluster = got[key]
        assert cluster.count == count
        assert cluster.lat == pytest.approx(lat, abs=1e-9)
        assert cluster.lng == pytest.approx(lon, abs=1e-9)
        assert cluster.hit is not None and cluster.hit.id in members
    counts = [c.count for c in result.geo_clusters]
    assert counts == sorted(counts, reverse=True)


async def test_clusters_follow_text_and_filters(books_engine: TantivyEngine, rows: list[Row],
                                                ref: SimpleNamespace) -> None:
    result = await books_engine.search(SearchQuery(
        text="the", filters=(TermFilter(field="available", values=(True,)),), limit=0,
        geo_grid=GeoGridSpec(field="location", precision=4)))
    subset = [r for r in rows if ref.text_matches(r, "the") and r.get("available") is True]
    want = expected_tiles(subset, 4, ref)
    assert result.geo_clusters is not None
    assert {c.key: c.count for c in result.geo_clusters} == {k: v[0] for k, v in want.items()}


async def test_cluster_sample_hits_honour_fields(books_engine: TantivyEngine) -> None:
    result = await books_engine.search(SearchQuery(
        fields=("title",), geo_grid=GeoGridSpec(field="location", precision=2)))
    assert result.geo_clusters
    for cluster in result.geo_clusters:
        assert cluster.hit is not None and set(cluster.hit.source) == {"title"}


def inside(found: tuple[float, float] | None, top: float, left: float, bottom: float,
           right: float) -> bool:
    if found is None:
        return False
    lat, lon = found
    in_lon = left <= lon <= right if left <= right else (lon >= left or lon <= right)
    return bottom <= lat <= top and in_lon


@pytest.mark.parametrize(("top", "left", "bottom", "right"), [
    (60.0, -10.0, 35.0, 30.0),  # Europe
    (0.0, -180.0, -90.0, 180.0),  # southern hemisphere
    (0.0, 170.0, -30.0, -170.0),  # across the antimeridian: Suva and Apia
])
async def test_bounds_restrict_hits_totals_and_tiles(
        books_engine: TantivyEngine, rows: list[Row], ref: SimpleNamespace,
        top: float, left: float, bottom: float, right: float) -> None:
    bounds = GeoBounds(top_left=GeoPoint(lat=top, lon=left),
                       bottom_right=GeoPoint(lat=bottom, lon=right))
    result = await books_engine.search(SearchQuery(
        limit=100, geo_grid=GeoGridSpec(field="location", precision=6, bounds=bounds)))
    subset = [r for r in rows if inside(ref.point(r), top, left, bottom, right)]
    assert subset
    assert result.total == len(subset)
    assert {h.id for h in result.hits} == {ref.doc_id(r) for r in subset}
    want = expected_tiles(subset, 6, ref)
    assert result.geo_clusters is not None
    assert {c.key: c.count for c in result.geo_clusters} == {k: v[0] for k, v in want.items()}


async def test_no_grid_no_clusters(books_engine: TantivyEngine) -> None:
    result = await books_engine.search(SearchQuery())
    assert result.geo_clusters is None
    empty = await books_engine.search(SearchQuery(
        text="xyzzy", geo_grid=GeoGridSpec(field="location", precision=3)))
    assert empty.geo_clusters == []


@pytest.mark.parametrize("field", ["title", "year", "nope"])
async def test_grid_on_a_non_geo_field_is_invalid(books_engine: TantivyEngine,
                                                  field: str) -> None:
    with pytest.raises(InvalidRequest, match=f'"{field}"'):
        await books_engine.search(SearchQuery(geo_grid=GeoGridSpec(field=field, precision=3)))
