"""Start the tests' OpenSearch node by hand: ``python -m tests.servers.opensearch --port 9250``.

Builds the launcher with Maven if needed, prints the URL once the node is ready and serves
until SIGTERM or SIGINT (Ctrl-C); then it stops the node and removes its data folder.
"""

from __future__ import annotations

import sys

from tests.servers.by_hand import serve_by_hand
from tests.servers.opensearch import OpenSearchServer, Unavailable, build

if __name__ == "__main__":
    sys.exit(serve_by_hand(None, engine="opensearch", name="OpenSearch", port=9250,
                           build=lambda: build(quiet=False), node=OpenSearchServer,
                           failures=(Unavailable, RuntimeError)))
