"""Smoke test of an installed searchport, as a new user meets it: no config at all.

By default it drives the ``searchport`` of the environment running the tests. CI also runs
it against the built wheel installed in a fresh virtual environment (``SEARCHPORT_BIN``
names that install's command), from a folder outside the checkout, so the wheel itself is
proven to serve: its modules, its search page, its demo data.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx

from tests.e2e.conftest import SEARCHPORT, Server, free_port

COMMAND = Path(os.environ.get("SEARCHPORT_BIN") or SEARCHPORT)


def test_installed_searchport_serves_the_builtin_demo_with_no_config(tmp_path: Path) -> None:
    version = subprocess.run([str(COMMAND), "--version"], capture_output=True, text=True,
                             timeout=60, check=True)
    assert version.stdout.startswith("searchport ")
    port = free_port()
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items()
           if k not in ("API_KEY", "REDIS_URL", "SEARCHPORT_CONFIG", "PYTHONPATH")}
    env.update(XDG_CACHE_HOME=str(cache), PORT=str(port))
    workdir = tmp_path / "empty"
    workdir.mkdir()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen([str(COMMAND), "serve"], cwd=workdir, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, text=True)
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert process.poll() is None, server.output()
            assert time.monotonic() < deadline, server.output()
            try:
                if server.client.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        client = server.client
        body = client.get("/cities/search", params={"q": "paris"}).json()
        assert body["hits"][0]["name"] == "Paris" and body["totalHits"] >= 1
        page = client.get("/ui")
        assert page.status_code == 200 and "<script" in page.text
        assert client.get("/ui/assets/app.js").status_code == 200
        assert client.get("/openapi").status_code == 200
        spec = client.get("/openapi/json").json()
        assert "/{handle}/search" in spec["paths"]
        algolia = client.post("/1/indexes/cities/query", json={"params": "query=tokyo"})
        assert algolia.status_code == 200, algolia.text
        assert algolia.json()["hits"][0]["name"] == "Tokyo"
        folder = cache / "searchport" / "demo"
        assert f"Its config and index live in {folder}" in server.output()
        assert (folder / "indexes" / "cities" / "searchport-index.json").is_file()
        assert list(workdir.iterdir()) == []  # nothing written where it was started
    finally:
        server.stop()
