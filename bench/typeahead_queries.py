"""The search-as-you-type load of `typeahead_vs_typesense.py`.

The demo rows (``src/demo/cities.jsonl.gz``), and 600 queries built from them alone, the
same on every run (a fixed seed): prefixes of 2 to 5 letters and whole names of the 3,000
most populous cities, a fifth of them with two neighbouring letters swapped (a typo).
``replicated`` makes a larger source of the same rows under new ids (the 1M-document mode).
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEMO_SOURCE = ROOT / "src" / "demo" / "cities.jsonl.gz"
QUERIES = 600
TOP_CITIES = 3_000
SEED = 2026
Row = dict[str, Any]


def demo_rows() -> list[Row]:
    with gzip.open(DEMO_SOURCE, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def swapped(text: str, rng: random.Random) -> str:
    """``text`` with two neighbouring letters swapped (the same text when none differ)."""
    places = [i for i in range(len(text) - 1)
              if text[i].isalpha() and text[i + 1].isalpha() and text[i] != text[i + 1]]
    if not places:
        return text
    i = rng.choice(places)
    return text[:i] + text[i + 1] + text[i] + text[i + 2:]


def typeahead_queries(rows: list[Row], count: int = QUERIES, seed: int = SEED) -> list[str]:
    rng = random.Random(seed)
    top = sorted(rows, key=lambda r: -int(r.get("population") or 0))[:TOP_CITIES]
    queries = []
    while len(queries) < count:
        name = str(rng.choice(top)["name"])
        letters = rng.choice([2, 3, 4, 5, 0])  # 0: the whole name
        text = name if letters == 0 else name[:letters]
        if not text.strip():
            continue
        if len(queries) % 5 == 4:
            text = swapped(text, rng)
        queries.append(text)
    return queries


def replicated(rows: list[Row], total: int) -> Iterator[Row]:
    """``total`` rows: the demo's again and again, each copy under new ids."""
    for n in range(total):
        row = dict(rows[n % len(rows)])
        copy = n // len(rows)
        if copy:
            row["id"] = f"{row['id']}-{copy}"
        yield row


def write_source(rows: list[Row], total: int, path: Path) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for row in replicated(rows, total):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
