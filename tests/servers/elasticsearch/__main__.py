"""Start the tests' Elasticsearch node by hand:
``python -m tests.servers.elasticsearch --port 9260``.

Unpacks the distribution with Maven if needed, prints the URL once the node is ready and
serves until SIGTERM or SIGINT (Ctrl-C); then it stops the node and removes its folder.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

from tests.servers.elasticsearch import VERSION, ElasticsearchServer, Unavailable, build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.servers.elasticsearch",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9260, help="HTTP port (default 9260)")
    parser.add_argument("--home", type=Path, default=None,
                        help="the node's work folder (default: a temporary one, removed after)")
    parser.add_argument("--verbose", action="store_true", help="print the node's own log")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        print(f"unpacking Elasticsearch {VERSION} (the first time downloads it) ...", flush=True)
        build(quiet=False)
    except (Unavailable, RuntimeError) as exc:
        print(exc, file=sys.stderr)
        return 1
    home = args.home or Path(tempfile.mkdtemp(prefix="searchport-elasticsearch-"))
    server = ElasticsearchServer(home, args.port)
    try:
        server.start(echo=args.verbose)
        print(f"Elasticsearch {VERSION} {server.url} is ready (started in "
              f"{server.started_in:.1f} s); stop it with Ctrl-C", flush=True)
        stop.wait()
    except (Unavailable, RuntimeError) as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        server.stop()
        if args.home is None:
            shutil.rmtree(home, ignore_errors=True)
    print("Elasticsearch stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
