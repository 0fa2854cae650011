#!/usr/bin/env python3
"""CPU per search-as-you-type query of the embedded engine, in process (no HTTP).

    .venv/bin/python bench/typeahead_cpu.py                   # the demo, 5 rounds of 600
    .venv/bin/python bench/typeahead_cpu.py --docs 1000000    # the demo rows to 1M documents
    .venv/bin/python bench/typeahead_cpu.py --via engine      # through TantivyEngine.search
    valgrind --tool=callgrind .venv/bin/python bench/typeahead_cpu.py --rounds 1 --no-build-report
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=ffi_call \
        .venv/bin/python bench/typeahead_cpu.py --index-dir /tmp/ix --rounds 2 --window
        # instructions of the measured rounds alone: the total / (600 x 2) per query

The queries are `typeahead_vs_typesense.py`'s (`typeahead_queries.py`), each made into the
engine query the HTTP route makes of ``GET /cities/search?q=...&facets=country&perPage=10``
(the demo's defaults otherwise: highlights on). ``--window`` runs the measured rounds inside
one call through ``ctypes`` (libffi's ``ffi_call``), so that callgrind, told to count only
inside that function, counts those rounds and nothing else (not the start, the warm rounds
or the index's reading). ``--via search`` (the default) calls the
adapter's search function on the open index in this thread; ``--via engine`` awaits
``TantivyEngine.search`` as the server does. CPU time (``time.process_time``, every thread of
the process) is what a shared machine measures steadily; wall time is printed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from typeahead_queries import DEMO_SOURCE, demo_rows, typeahead_queries, write_source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--docs", type=int, default=0, help="replicate the demo rows to N")
    parser.add_argument("--via", choices=["search", "engine"], default="search")
    parser.add_argument("--index-dir", type=Path, help="keep the index here (reused)")
    parser.add_argument("--no-build-report", action="store_true")
    parser.add_argument("--window", action="store_true",
                        help="the measured rounds inside one ffi_call (callgrind's toggle; "
                             "with --via search, whose searches run in this thread)")
    args = parser.parse_args()

    from searchport import demo
    from searchport.adapters.config_loader import parse_config
    from searchport.adapters.tantivy import build_index
    from searchport.adapters.tantivy.builder import index_folder
    from searchport.adapters.tantivy.engine import TantivyEngine
    from searchport.adapters.tantivy.reader import OpenIndex
    from searchport.adapters.tantivy.schema import IndexLayout
    from searchport.adapters.tantivy.search import run_search
    from searchport.domain.catalog import IndexEntry
    from searchport.domain.search_request import SearchRequest, build_search_query

    rows = demo_rows()
    queries = typeahead_queries(rows)
    with tempfile.TemporaryDirectory(prefix="searchport-typeahead-") as tmp:
        folder = args.index_dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        source = DEMO_SOURCE
        if args.docs:
            source = folder / f"cities-{args.docs}.jsonl"
            if not source.exists():
                write_source(rows, args.docs, source)
        text = demo.CONFIG_TEMPLATE.read_text(encoding="utf-8").replace(
            demo.SOURCE_MARKER, json.dumps(str(source)))
        config = parse_config(text, {}).indexes["cities"]
        started, cpu = time.perf_counter(), time.process_time()
        report = build_index("cities", config, folder)
        if report.rebuilt and not args.no_build_report:
            print(f"build: {report.docs} documents in {time.perf_counter() - started:.1f} s "
                  f"({report.docs / (time.perf_counter() - started):,.0f} docs/s), "
                  f"CPU {time.process_time() - cpu:.1f} s")
        engine = TantivyEngine("cities", config, folder)
        loop = asyncio.new_event_loop()
        loop.run_until_complete(engine.start())
        entry = IndexEntry("cities", config, engine)
        made = [build_search_query(entry, SearchRequest(handle="cities", q=q, facets="country",
                                                        per_page=10))[0] for q in queries]
        meta = index_folder("cities", config, folder).read_meta()
        assert meta is not None
        index = OpenIndex("cities", index_folder("cities", config, folder).generation_path(meta),
                          IndexLayout(config))
        vocabulary = getattr(index, "vocabulary", None)  # older trees (--src) have none
        if vocabulary is not None:
            vocabulary.wait()  # read in the background as an index opens (typo_words.py)

        def one_round() -> list[float]:
            timings = []
            for query in made:
                begin = time.perf_counter()
                if args.via == "search":
                    run_search(index, query)
                else:
                    loop.run_until_complete(engine.search(query))
                timings.append(time.perf_counter() - begin)
            return timings

        one_round()  # warm: caches, page cache (and, via engine, its vocabulary's reading)
        one_round()
        gc.freeze()  # the collector settings of a searchport worker (entrypoints/asgi.py)
        gc.set_threshold(20_000, 10, 10)
        cpu_per_query, p50s, p99s = [], [], []

        def measured() -> None:
            for _ in range(args.rounds):
                cpu = time.process_time()
                timings = one_round()
                cpu_per_query.append((time.process_time() - cpu) / len(made) * 1e6)
                timings.sort()
                p50s.append(statistics.median(timings) * 1e3)
                p99s.append(timings[int(len(timings) * 0.99)] * 1e3)

        if args.window:  # one call through libffi: callgrind counts inside ffi_call only
            ctypes.CFUNCTYPE(None)(measured)()
        else:
            measured()
        loop.run_until_complete(engine.close())
        loop.close()
    print(f"{len(made)} queries x {args.rounds} rounds, via {args.via}: CPU per query "
          f"{', '.join(f'{c:.0f}' for c in cpu_per_query)} µs "
          f"(median {statistics.median(cpu_per_query):.0f} µs); wall p50 "
          f"{statistics.median(p50s):.3f} ms, p99 {statistics.median(p99s):.3f} ms")


if __name__ == "__main__":
    main()
