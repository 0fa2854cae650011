"""Start the tests' Elasticsearch node by hand:
``python -m tests.servers.elasticsearch --port 9260``.

Unpacks the distribution with Maven if needed, prints the URL once the node is ready and
serves until SIGTERM or SIGINT (Ctrl-C); then it stops the node and removes its folder.
"""

from __future__ import annotations

import sys

from tests.servers.by_hand import serve_by_hand
from tests.servers.elasticsearch import VERSION, ElasticsearchServer, Unavailable, build

if __name__ == "__main__":
    sys.exit(serve_by_hand(None, engine="elasticsearch", name=f"Elasticsearch {VERSION}",
                           port=9260, build=lambda: build(quiet=False),
                           node=ElasticsearchServer, failures=(Unavailable, RuntimeError)))
