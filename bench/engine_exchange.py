#!/usr/bin/env python3
"""In-process microbenchmark of one Elasticsearch search as the adapter runs it: the engine
call (translate, the exchange stack: ``EngineApi``, ``ResilientExchange`` with its breaker,
decode, parse) over an in-memory network, and the decoding of the answer alone.

    .venv/bin/python bench/engine_exchange.py                      # this checkout
    git archive <rev> src | tar -x -C /tmp/base                    # an older revision...
    .venv/bin/python bench/engine_exchange.py --src /tmp/base/src  # ...measured the same way

The answer is shaped like the shared harness's ``search_uniq`` case (20 hits of 13 fields,
two highlighted, two facets of 10 values, ~22 kB). No socket is opened: the figures are the
CPU of searchport's own code per engine call, best of ``--rounds`` (µs).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def use_src(src: str) -> None:
    """Import ``searchport`` from another checkout's ``src`` folder."""
    folder = tempfile.mkdtemp(prefix="searchport-src-")
    os.symlink(Path(src).resolve(), Path(folder) / "searchport")
    sys.path.insert(0, folder)


def search_answer(facet_names: tuple[str, str]) -> dict[str, Any]:
    words = ["castle", "keep", "wall", "gate", "tower", "river", "abbey", "manor", "estate",
             "survey", "record", "view", "north", "south", "ruin", "hall"]
    hits = []
    for n in range(20):
        title = f"{words[n % 16].title()} Castle from the {words[(n + 3) % 16]}"
        description = " ".join(words[(n + k) % 16] for k in range(48))
        hits.append({
            "_index": "bench", "_id": str(1000 + n), "_score": 12.4 - n / 10,
            "_source": {"title": title, "description": description,
                        "category": "Architecture", "period": "Medieval",
                        "maker": "Unknown maker", "dateCreated": 1180 + n,
                        "medium": "Watercolour on paper", "placeCountry": "Scotland",
                        "accessionNumber": f"BENCH.1900.{n:03}",
                        "imageUrl": f"https://images.example.org/bench/{n}/full/400,/0/d.jpg",
                        "url": f"https://collections.example.org/objects/{n}",
                        "tags": ["castle", words[n % 16], "scotland"]},
            "highlight": {"title": [title.replace("Castle", "<mark>Castle</mark>")],
                          "description": [description[:150].replace(
                              "castle", "<mark>castle</mark>")]},
        })
    aggs = {name: {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0,
                   "buckets": [{"key": f"{name}-{k}", "doc_count": 400 - 37 * k}
                               for k in range(10)]}
            for name in facet_names}
    return {"took": 3, "timed_out": False,
            "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": 3120, "relation": "eq"}, "max_score": 12.4,
                     "hits": hits},
            "aggregations": aggs}


MAPPING = {"bench": {"mappings": {"properties": {
    name: {"type": "keyword"} for name in ("category", "period", "maker", "tags")} | {
    name: {"type": "text"} for name in ("title", "description")}}}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", help="import searchport from this src folder")
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.src:
        use_src(args.src)

    import msgspec

    from searchport.adapters.config_loader import parse_config
    from searchport.adapters.elastic import parse
    from searchport.adapters.elastic.translate import facet_name
    from searchport.adapters.network.exchange import Answer
    from searchport.adapters.network.pools import EnginePools
    from searchport.adapters.network.resilience import CallPolicy
    from searchport.adapters.resources import EngineResources
    from searchport.domain.query import SearchQuery

    body = msgspec.json.encode(search_answer((facet_name(0), facet_name(1))))
    mapping = msgspec.json.encode(MAPPING)
    headers = {"content-type": "application/json", "x-elastic-product": "Elasticsearch"}

    class Network:  # the socket replaced by canned answers
        async def exchange(self, method: str, url: str, head: Any, content: Any,
                           timeout: float) -> Answer:
            return Answer(200, headers, mapping if url.endswith("/_mapping") else body)

        async def aclose(self) -> None:
            return None


    config = parse_config(
        '{"indexes": {"bench": {"engine": "elasticsearch", "host": "http://127.0.0.1:9201",'
        ' "indexName": "bench"}}}', {})
    create = importlib.import_module("searchport.adapters.elastic").create_elasticsearch
    engine = create("bench", config.indexes["bench"],
                    EngineResources(base_dir=Path("."),
                                    pools=EnginePools(policy=CallPolicy(),
                                                      network=lambda *settings: Network())))
    query = SearchQuery(text="castle", limit=20, facets=("category", "period"),
                        max_facet_values=10, highlight=True)

    async def calls() -> float:
        await engine.search(query)  # the mapping fetched once
        started = time.perf_counter()
        for _ in range(args.calls):
            await engine.search(query)
        return (time.perf_counter() - started) / args.calls * 1e6

    def decoding(read: Any) -> float:
        started = time.perf_counter()
        for _ in range(args.calls):
            read()
        return (time.perf_counter() - started) / args.calls * 1e6

    walked = lambda: parse.search_result(msgspec.json.decode(body), query)  # noqa: E731
    typed = getattr(parse, "decode_search", None)
    rows = {"engine call (translate, exchange stack, decode, parse)": [],
            "decode + parse: JSON to dicts, dict walk": []}  # type: dict[str, list[float]]
    if typed is not None:
        rows["decode + parse: JSON straight into structs"] = []
    for _ in range(args.rounds):
        rows["engine call (translate, exchange stack, decode, parse)"].append(
            asyncio.run(calls()))
        rows["decode + parse: JSON to dicts, dict walk"].append(decoding(walked))
        if typed is not None:
            rows["decode + parse: JSON straight into structs"].append(
                decoding(lambda: typed(body, query)))
    print(f"answer {len(body)} bytes, {args.calls} calls x {args.rounds} rounds, "
          f"searchport from {Path(parse.__file__).parents[2]}")
    print("| measure | best µs | median µs |\n|---|---|---|")
    for name, figures in rows.items():
        figures.sort()
        print(f"| {name} | {figures[0]:.1f} | {figures[len(figures) // 2]:.1f} |")


if __name__ == "__main__":
    main()
