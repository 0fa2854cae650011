"""The conformance dataset: 60 small documents every engine can store the same way, and a
plain-Python reading of the search contract that the expectations are computed from.

No dates (Typesense has no date type) and no empty arrays (engines disagree on whether an
empty list "exists"); ``price`` is missing on some rows so ``exists`` has work to do.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable
from typing import Any

WORDS = ("castle", "night", "river", "garden", "silver", "winter", "shadow", "ocean",
         "city", "forest", "dream", "stone")
AUTHORS = ("Ada Lovelace", "Mary Shelley", "Jules Verne", "Italo Calvino", "Anne Rice",
           "Ursula Le Guin")
GENRES = ("fiction", "history", "science", "poetry")
TAGS = ("award", "classic", "new", "translated", "illustrated")

FIELDS: dict[str, dict[str, Any]] = {
    "title": {"type": "text", "weight": 2},
    "author": {"type": "text", "searchable": True},
    "genre": {"type": "keyword"},
    "tags": {"type": "keyword"},
    "year": {"type": "integer"},
    "rank": {"type": "integer"},
    "rating": {"type": "integer"},
    "price": {"type": "float"},
    "available": {"type": "boolean"},
    "location": {"type": "geo_point"},
}
KEYWORDS = ("genre", "tags")


def build_rows(count: int = 60, seed: int = 20261122) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    rows = []
    ranks = rnd.sample(range(1, 10 * count), count)
    for i in range(count):
        row: dict[str, Any] = {
            "id": f"c{i:02d}",
            "title": " ".join(rnd.sample(WORDS, rnd.randint(2, 4))).capitalize(),
            "author": rnd.choice(AUTHORS),
            "genre": rnd.choice(GENRES),
            "tags": sorted(rnd.sample(TAGS, rnd.randint(1, 3))),
            "year": rnd.randint(1950, 2020),
            "rank": ranks[i],
            "rating": rnd.randint(1, 5),
            "available": rnd.random() < 0.6,
            "location": {"lat": round(rnd.uniform(36.0, 60.0), 4),
                         "lon": round(rnd.uniform(-9.0, 25.0), 4)},
        }
        if rnd.random() < 0.8:
            row["price"] = rnd.randint(4, 60) + rnd.choice((0.0, 0.5))
        rows.append(row)
    return rows


ROWS = build_rows()


# ---------------------------------------------------------------- the contract, in Python

def values(row: dict[str, Any], field: str) -> list[Any]:
    value = row.get(field)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def matches(row: dict[str, Any], field: str, condition: Any) -> bool:
    """One entry of the ``filters`` grammar of DECISIONS.md."""
    present = values(row, field)
    if isinstance(condition, dict):
        if "not" in condition:
            banned = condition["not"] if isinstance(condition["not"], list) else [condition["not"]]
            return not any(v in banned for v in present)
        if "exists" in condition:
            return bool(present) == condition["exists"]
        low, high = condition.get("min"), condition.get("max")
        return any((low is None or v >= low) and (high is None or v <= high) for v in present)
    wanted = condition if isinstance(condition, list) else [condition]
    return any(v in wanted for v in present)


def select(filters: dict[str, Any], rows: Iterable[dict[str, Any]] = ROWS) -> list[dict[str, Any]]:
    return [r for r in rows if all(matches(r, f, c) for f, c in filters.items())]


def facet_counts(filters: dict[str, Any], field: str) -> dict[str, int]:
    """Disjunctive counts: every filter but the facet's own."""
    others = {f: c for f, c in filters.items() if f != field}
    counts: Counter[str] = Counter()
    for row in select(others):
        for value in set(values(row, field)):
            counts[as_facet_value(value)] += 1
    return dict(counts)


def as_facet_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def histogram(filters: dict[str, Any], field: str, interval: float) -> list[tuple[float, int]]:
    keys = [math.floor(v / interval) * interval for r in select(filters) for v in values(r, field)]
    if not keys:
        return []
    counts = Counter(keys)
    first, last = min(keys), max(keys)
    steps = round((last - first) / interval)
    return [(first + i * interval, counts.get(first + i * interval, 0)) for i in range(steps + 1)]


def tile(lat: float, lon: float, zoom: int) -> str:
    """The Web-Mercator tile ``z/x/y`` of a point (geotile_grid's keys)."""
    n = 2 ** zoom
    x = min(n - 1, max(0, math.floor((lon + 180.0) / 360.0 * n)))
    rad = math.radians(lat)
    y = math.floor((1.0 - math.log(math.tan(rad) + 1.0 / math.cos(rad)) / math.pi) / 2.0 * n)
    return f"{zoom}/{x}/{min(n - 1, max(0, y))}"


def tiles(filters: dict[str, Any], zoom: int) -> dict[str, int]:
    return dict(Counter(tile(r["location"]["lat"], r["location"]["lon"], zoom)
                        for r in select(filters)))


def words(text: str) -> set[str]:
    return {w.strip(".,").lower() for w in text.split()}


def containing_all(query: str, fields: tuple[str, ...] = ("title", "author")) -> set[str]:
    wanted = words(query)
    return {r["id"] for r in ROWS
            if wanted <= set().union(*(words(str(r.get(f, ""))) for f in fields))}


def containing_all_with_prefix(query: str,
                               fields: tuple[str, ...] = ("title", "author")) -> set[str]:
    """Documents with every word of ``query``, the last one as a prefix of a word."""
    *whole, last = [w.lower() for w in query.split()]
    found = set()
    for r in ROWS:
        present = set().union(*(words(str(r.get(f, ""))) for f in fields))
        if set(whole) <= present and any(w.startswith(last) for w in present):
            found.add(r["id"])
    return found
