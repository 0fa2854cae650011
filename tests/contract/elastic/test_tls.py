"""TLS to the engine, over a real HTTPS connection: verification is on by default,
``caBundle`` trusts a private CA, ``verifyTls: false`` turns verification off.

A small HTTPS server on 127.0.0.1 plays the engine with a certificate signed by a CA made
here with the ``openssl`` command (skipped without it), through the production container
and client untouched (the rest of the suite resolves its engines' host names to a loopback
engine whose CA its clients trust).
"""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from shutil import which
from typing import Any

import pytest
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import city_yaml

pytestmark = pytest.mark.skipif(which("openssl") is None, reason="needs the openssl command")

SERVER_EXTENSIONS = """\
subjectAltName = IP:127.0.0.1, DNS:localhost
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
"""


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ca.pem`` (a private CA), ``server.pem``/``server.key`` (127.0.0.1, signed by it)."""
    where = tmp_path_factory.mktemp("pki")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=searchport test CA", "-keyout", "ca.key", "-out", "ca.pem", cwd=where)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "server.key", "-out", "server.csr", cwd=where)
    (where / "server.ext").write_text(SERVER_EXTENSIONS)
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "server.ext", "-out", "server.pem",
            cwd=where)
    return where


class EngineOverTls(BaseHTTPRequestHandler):
    """Answers the mapping and searches of ``cities`` as Elasticsearch would."""

    def do_GET(self) -> None:
        self.answer(es.city_mapping() if self.path == "/cities/_mapping" else None)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.answer(es.empty_search() if self.path == "/cities/_search" else None)

    def answer(self, body: Any) -> None:
        content = json.dumps(body or {"error": "no such route", "status": 404}).encode()
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def https_host(pki: Path) -> Iterator[str]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.pem", pki / "server.key")
    server = ThreadingHTTPServer(("127.0.0.1", 0), EngineOverTls)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def search(host: str, base_dir: Path, settings: str = "") -> tuple[int, Any]:
    config = parse_config(city_yaml("elasticsearch", host=host, settings=settings), {})
    with TestClient(create_app(create_container(config, base_dir))) as client:
        response = client.get("/cities/search")
        return response.status_code, response.json()


def test_the_certificate_is_verified_by_default(https_host: str, pki: Path) -> None:
    status, body = search(https_host, pki)
    assert (status, body) == (502, {"error": "The elasticsearch engine cannot be reached"})


def test_a_ca_bundle_trusts_a_private_ca(https_host: str, pki: Path) -> None:
    status, body = search(https_host, pki, "caBundle: ca.pem")
    assert status == 200, body
    assert body["totalHits"] == 0


def test_verification_can_be_turned_off(https_host: str, pki: Path) -> None:
    status, body = search(https_host, pki, "verifyTls: false")
    assert status == 200, body


def test_a_ca_bundle_of_another_ca_is_refused(https_host: str, pki: Path,
                                              tmp_path: Path) -> None:
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=another CA", "-keyout", "other.key", "-out", "other.pem", cwd=tmp_path)
    status, _ = search(https_host, tmp_path, "caBundle: other.pem")
    assert status == 502
