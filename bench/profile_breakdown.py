#!/usr/bin/env python3
"""Where a gateway process's CPU goes, by stage, from a py-spy raw profile.

    py-spy record -p <worker pid> -d 10 -r 200 -f raw --threads -o search.raw --nonblocking
    python3 bench/profile_breakdown.py search.raw [--requests N]

Each sample of the event loop's thread (MainThread) is charged to the first stage, walking
from the innermost frame outwards, whose pattern matches a frame. Samples of other threads
(granian's Rust runtime: HTTP parsing, socket I/O; py-spy cannot tell their waiting from
their working) are counted apart and left out of the shares. With ``--requests`` (the
requests answered while py-spy recorded) the table also shows microseconds per request.
"""

from __future__ import annotations

import argparse
import collections
import re

# (stage, pattern on one frame "function (file:line)"), first match from the leaf wins
STAGES: list[tuple[str, str]] = [
    ("compression", r"compression|gzip|zlib|brotli"),
    ("ETag (checksum of the body)", r"checksum \(.*http_cache\.py"),
    ("decode engine JSON", r"EngineApi\.decode|parse\.py|_wire|decode_answer"),
    ("reshape (domain shaping)", r"shaping\.py|usecases/search\.py.*_search"),
    ("encode response", r"json_response \(.*http_cache\.py|Encoder|encode_json"),
    ("query building (translate)", r"translate\.py|fields\.py \(src/adapters"),
    ("parameter parsing (domain)", r"search_request\.py|params\.py \(src/domain"),
    ("upstream client (engine exchange)", r"httpx/|httpcore/|h11/|anyio/|aiohttp|yarl|"
                                           r"multidict|adapters/network/"),
    ("cache key, single flight", r"engine_cache\.py"),
    ("access log, metrics, request context", r"observability|request_context|prometheus|"
                                              r"timing\.py|logging/"),
    ("routing, params, middleware (Litestar)", r"litestar/|src/entrypoints/"),
    ("event loop (asyncio)", r"asyncio/|selector|granian/_futures"),
    ("other Python", r"."),
]
COMPILED = [(stage, re.compile(pattern)) for stage, pattern in STAGES]
NATIVE = "server native threads (granian: HTTP I/O)"
SERVER = "HTTP server (granian, called from the loop: send, receive)"
# the ASGI send/receive callables are granian's (native): a sample whose innermost Python
# frame is the one calling them is time spent in the server
SERVER_CALL = re.compile(r"send_with_headers|capture_response_started|Request\.stream|"
                         r"RequestContext\.__call__ |_future_watcher|_callback_wrapper")


def stage_of(frames: list[str]) -> str:
    if frames and frames[0].startswith("thread ") and "MainThread" not in frames[0]:
        return NATIVE
    python = [f for f in frames if "(" in f and not f.startswith(("process ", "thread "))]
    if not python:
        return NATIVE
    if SERVER_CALL.search(python[-1]):  # the innermost Python frame is inside a call to granian
        return SERVER
    for frame in reversed(python):
        for stage, pattern in COMPILED:
            if stage != "other Python" and pattern.search(frame):
                return stage
    return "other Python"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw", help="py-spy --format raw output")
    ap.add_argument("--requests", type=int, help="requests answered during the recording")
    ap.add_argument("--rate", type=int, default=200, help="py-spy sampling rate (Hz)")
    args = ap.parse_args()
    counts: collections.Counter[str] = collections.Counter()
    with open(args.raw, encoding="utf-8") as raw:
        for line in raw:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if n.isdigit():  # py-spy may cut the last line short
                counts[stage_of([f for f in stack.split(";") if f])] += int(n)
    native = counts.pop(NATIVE, 0)
    total = sum(counts.values())
    per_request = args.requests and 1e6 / args.rate / args.requests
    print(f"{total} event-loop samples ({native} of other threads left out)"
          + (f", {args.requests} requests" if args.requests else ""))
    print("| stage | share | µs per request |" if per_request else "| stage | share |")
    print("|---|---|---|" if per_request else "|---|---|")
    for stage, n in counts.most_common():
        cells = f"| {stage} | {100 * n / total:.1f} % |"
        print(cells + (f" {n * per_request:.0f} |" if per_request else ""))


if __name__ == "__main__":
    main()
