"""What ``python -m tests.servers.<engine>`` shares: build, start the node on the port asked
for, say when it is ready, serve until SIGTERM or SIGINT (Ctrl-C), then stop it and remove
its temporary folder, leaving nothing running."""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol


class Node(Protocol):
    url: str
    started_in: float | None

    def start(self, *, echo: bool = False) -> None: ...

    def stop(self) -> None: ...


def serve_by_hand(argv: list[str] | None, *, engine: str, name: str, port: int,
                  build: Callable[[], object], node: Callable[[Path, int], Node],
                  failures: tuple[type[BaseException], ...]) -> int:
    """``engine``: the module's name (``opensearch``); ``name``: the product as printed."""
    parser = argparse.ArgumentParser(prog=f"python -m tests.servers.{engine}",
                                     description=f"Start the tests' {name} node by hand.")
    parser.add_argument("--port", type=int, default=port, help=f"HTTP port (default {port})")
    parser.add_argument("--home", type=Path, default=None,
                        help="the node's folder (default: a temporary one, removed after)")
    parser.add_argument("--verbose", action="store_true", help="print the node's own log")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        print(f"building the {name} node (the first time downloads it) ...", flush=True)
        build()
    except failures as exc:
        print(exc, file=sys.stderr)
        return 1
    home = args.home or Path(tempfile.mkdtemp(prefix=f"searchport-{engine}-"))
    server = node(home, args.port)
    try:
        server.start(echo=args.verbose)
        print(f"{name} {server.url} is ready (started in {server.started_in or 0:.1f} s); "
              "stop it with Ctrl-C", flush=True)
        stop.wait()
    except failures as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        server.stop()
        if args.home is None:
            shutil.rmtree(home, ignore_errors=True)
    print(f"{name} stopped", flush=True)
    return 0
