"""The conformance dataset: 60 small documents every engine can store the same way, and a
plain-Python reading of the search contract that the expectations are computed from.

``published`` is an ISO-8601 date-time (Typesense stores it as ``int64`` Unix seconds, the
way its adapter expects dates); a written date in a filter covers its span (a date the whole
day, a date-time its second). No empty arrays (engines disagree on whether an empty list
"exists"); ``price`` is missing on some rows so ``exists`` has work to do.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
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
    "published": {"type": "date"},
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
    moments = random.Random(seed + 1)  # a second stream: the rows above stay as they were
    first = datetime(1995, 1, 1, tzinfo=UTC)
    for row in rows:
        moment = first + timedelta(seconds=moments.randint(0, 25 * 365 * 86400))
        row["published"] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return rows


ROWS = build_rows()


# ---------------------------------------------------------------- the contract, in Python

def values(row: dict[str, Any], field: str) -> list[Any]:
    value = row.get(field)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def span(text: str) -> tuple[datetime, datetime]:
    """The instants ``[start, end)`` a written date covers."""
    if DAY.fullmatch(text):
        start = datetime.combine(date.fromisoformat(text), time(), tzinfo=UTC)
        return start, start + timedelta(days=1)
    start = instant(text).replace(microsecond=0)
    return start, start + timedelta(seconds=1)


def matches(row: dict[str, Any], field: str, condition: Any) -> bool:
    """One entry of the ``filters`` grammar of docs/filters-and-parameters.md."""
    if FIELDS.get(field, {}).get("type") == "date":
        return _date_matches(row, field, condition)
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


def _date_matches(row: dict[str, Any], field: str, condition: Any) -> bool:
    present = [instant(v) for v in values(row, field)]

    def within(text: str) -> bool:
        start, end = span(text)
        return any(start <= v < end for v in present)

    if isinstance(condition, dict):
        if "not" in condition:
            banned = condition["not"] if isinstance(condition["not"], list) else [condition["not"]]
            return not any(within(b) for b in banned)
        if "exists" in condition:
            return bool(present) == condition["exists"]
        low, high = condition.get("min"), condition.get("max")
        return any((low is None or v >= span(low)[0]) and (high is None or v < span(high)[1])
                   for v in present)
    return any(within(w) for w in (condition if isinstance(condition, list) else [condition]))


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
