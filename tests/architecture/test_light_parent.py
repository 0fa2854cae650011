"""`searchport serve`'s parent process only reads the config and starts granian; its forked
worker imports the app. Heavy modules imported by the parent would be paid twice in RSS
(the parent lives as long as the worker), so reading any config must leave them unloaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("searchport.adapters.network.client", "pycurl", "aiohttp", "httpx", "litestar", "redis",
         "dependency_injector", "tantivy")


@pytest.mark.parametrize(("cache", "allowed"), [
    ({"backend": "none"}, ""),
    ({"backend": "memory"}, ""),
    # redis-py itself checks the URL, so that `check` and `serve` refuse a bad one alike
    ({"backend": "redis", "url": "redis://127.0.0.1:6399/0"}, "redis"),
])
def test_reading_a_config_loads_no_client_framework_or_engine(
        tmp_path: Path, cache: dict[str, str], allowed: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({
        "cache": cache,
        "indexes": {
            "es": {"engine": "elasticsearch", "host": "http://127.0.0.1:9200",
                   "indexName": "products"},
            "ts": {"engine": "typesense", "host": "http://127.0.0.1:8108",
                   "indexName": "products", "apiKey": "k"},
        },
    }), encoding="utf-8")
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "import searchport.entrypoints.cli.main as cli\n"
        f"config, _ = cli._load({str(config)!r})\n"
        "assert set(config.indexes) == {'es', 'ts'}, config.indexes\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == allowed, f"loaded by the serve parent: {done.stdout}"
