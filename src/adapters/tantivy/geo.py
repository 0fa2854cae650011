"""Web-mercator ("slippy map") tiles: the arithmetic behind ``geoGrid``.

A point's tile at the deepest zoom is computed once; a tile at a shallower zoom is the
same numbers shifted right, so every zoom level agrees with the standard formula.
"""

from __future__ import annotations

import math

from searchport.adapters.tantivy.schema import MAX_ZOOM

MAX_MERCATOR_LAT = 85.0511287798066  # the web-mercator square ends here
_ZOOM_SHIFTS = [(zoom, MAX_ZOOM - zoom) for zoom in range(MAX_ZOOM + 1)]


def tile_xy(lat: float, lon: float, zoom: int) -> tuple[int, int]:
    """Tile column and row of a point, with the OpenStreetMap formula."""
    side = 1 << zoom
    lat = max(-MAX_MERCATOR_LAT, min(MAX_MERCATOR_LAT, lat))
    x = math.floor((lon + 180.0) / 360.0 * side)
    y = math.floor((1.0 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2.0 * side)
    return min(max(x, 0), side - 1), min(max(y, 0), side - 1)


def tile_numbers(lat: float, lon: float) -> list[int]:
    """The tile number ``x * 2**zoom + y`` of a point at every zoom from 0 to ``MAX_ZOOM``."""
    x, y = tile_xy(lat, lon, MAX_ZOOM)
    return [((x >> shift) << zoom) | (y >> shift) for zoom, shift in _ZOOM_SHIFTS]


def tile_key(number: int, zoom: int) -> tuple[str, int, int]:
    """``("z/x/y", x, y)`` of a tile number."""
    x, y = number >> zoom, number & ((1 << zoom) - 1)
    return f"{zoom}/{x}/{y}", x, y
