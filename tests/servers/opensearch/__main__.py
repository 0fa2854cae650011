"""Start the tests' OpenSearch node by hand: ``python -m tests.servers.opensearch --port 9250``.

Builds the launcher with Maven if needed, prints the URL once the node is ready and serves
until SIGTERM or SIGINT (Ctrl-C); then it stops the node and removes its data folder.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

from tests.servers.opensearch import OpenSearchServer, Unavailable, build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.servers.opensearch",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9250, help="HTTP port (default 9250)")
    parser.add_argument("--home", type=Path, default=None,
                        help="the node's folder (default: a temporary one, removed after)")
    args = parser.parse_args(argv)
    try:
        print("building the OpenSearch node (the first time downloads its jars) ...",
              flush=True)
        build(quiet=False)
    except (Unavailable, RuntimeError) as exc:
        print(exc, file=sys.stderr)
        return 1
    home = args.home or Path(tempfile.mkdtemp(prefix="searchport-opensearch-"))
    server = OpenSearchServer(home, args.port)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        server.start()
        print(f"OpenSearch {server.url} is ready (started in {server.started_in:.1f} s); "
              "stop it with Ctrl-C", flush=True)
        stop.wait()
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        server.stop()
        if args.home is None:
            shutil.rmtree(home, ignore_errors=True)
    print("OpenSearch stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
