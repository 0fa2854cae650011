"""The ASGI factory for servers: ``searchport.entrypoints.asgi:create``.

Only this module reads the environment: ``SEARCHPORT_CONFIG`` (default ./config.yaml) and
``SEARCHPORT_LISTEN_URL`` (set by ``searchport serve`` for the ready log line) and
``SEARCHPORT_ACCESS_LOG`` (``text`` under ``serve --reload``: human-readable access lines).
"""

from __future__ import annotations

import gc
import logging
import os
from pathlib import Path

from searchport.adapters.config_loader import load_config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from searchport.entrypoints.http.request_context import RequestContext


def create() -> RequestContext:
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    path = Path(os.environ.get("SEARCHPORT_CONFIG") or "config.yaml").resolve()
    config = load_config(path)
    container = create_container(config, path.parent)
    access_log = os.environ.get("SEARCHPORT_ACCESS_LOG")
    app = create_app(
        container,
        listen_url=os.environ.get("SEARCHPORT_LISTEN_URL"),
        access_log="text" if access_log == "text" else None,
    )
    # the modules, config, container and app live as long as the server process: out of
    # the collector's sight, a full collection does not walk them (under load that pause
    # would set the p99 latency)
    gc.freeze()
    # a young-generation collection every 700 allocations (the default) would meet the
    # objects of the requests in flight again and again and promote them: every 20,000 it
    # finds them gone
    gc.set_threshold(20_000, 10, 10)
    return app
