"""The engine clients through a real proxy process (proxy.py, on 127.0.0.1, with basic
authentication) and against a real TLS server whose certificate a CA made by the test
signed: a handle's ``proxy``, the environment's ``HTTP_PROXY``/``HTTPS_PROXY`` and
``NO_PROXY``, a ``caBundle``, ``verifyTls: false``, and https through a proxy (CONNECT).
The proxy's access log says which requests went through it; the proxy's password is never
in an error."""

from __future__ import annotations

import logging
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trustme
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.adapters.network.address import EngineAddress
from searchport.adapters.network.exchange import Answer, ExchangeError, Refused
from searchport.adapters.network.pools import EnginePools
from searchport.domain.config import ConfigError
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.misbehaving_upstream import misbehaving_upstream, refused_port
from tests.scripted_http import Request, Script, ScriptedServer, ok, run

PASSWORD = "pr0xy-s3cret"


@dataclass
class Proxy:
    port: int
    log: Path

    def url(self, password: str = PASSWORD) -> str:
        return f"http://searchport:{password}@127.0.0.1:{self.port}"

    def seen(self) -> str:
        """The access log so far (one line per request or tunnel it carried)."""
        return self.log.read_text(encoding="utf-8") if self.log.exists() else ""

    def saw(self, line: str, wait: float = 5.0) -> bool:
        """Whether the access log has ``line`` (it is written a moment after the answer)."""
        deadline = time.monotonic() + wait
        while line not in self.seen():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    folder = tmp_path_factory.mktemp("proxy")
    port_file, log = folder / "port", folder / "access.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "proxy", "--hostname", "127.0.0.1", "--port", "0",
         "--port-file", str(port_file), "--num-workers", "1", "--num-acceptors", "1",
         "--basic-auth", f"searchport:{PASSWORD}", "--log-file", str(log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            assert process.poll() is None, "proxy.py stopped"
            assert time.monotonic() < deadline, "proxy.py did not start"
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        while True:  # the port file is written before the socket listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "proxy.py does not listen"
                time.sleep(0.05)
        yield Proxy(port, log)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def ca_bundle(ca: trustme.CA, tmp_path: Path) -> str:
    path = tmp_path / "engine-ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


def tls_server(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    return context


def echo(request: Request) -> Script:
    return ok(b'{"target": "%s"}' % request.target.encode())


def served(answer_tls: ssl.SSLContext | None, **settings: str | bool | None
           ) -> tuple[Answer | ExchangeError, ScriptedServer]:
    async def main() -> tuple[Answer | ExchangeError, ScriptedServer]:
        async with ScriptedServer(echo, tls=answer_tls) as server:
            pools = EnginePools()
            try:
                exchange = pools.exchange(EngineAddress(server.origin),
                                          **settings)  # type: ignore[arg-type]
                try:
                    outcome: Answer | ExchangeError = await exchange.exchange(
                        "GET", server.url("/idx/_search?q=1"), {}, None, 5.0)
                except ExchangeError as exc:
                    outcome = exc
                return outcome, server
            finally:
                await pools.aclose()

    return run(main())


@pytest.fixture(autouse=True)
def no_environment_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "no_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


# ---------------------------------------------------------------- proxies


def test_a_handle_s_proxy_carries_its_requests(proxy: Proxy) -> None:
    answer, server = served(None, proxy=proxy.url())
    assert isinstance(answer, Answer) and answer.status_code == 200
    assert answer.content == b'{"target": "/idx/_search?q=1"}'
    assert len(server.requests) == 1
    assert proxy.saw(f"GET 127.0.0.1:{server.port}/idx/_search?q=1 - 200")


def test_a_proxy_refusing_the_credentials_is_its_407_and_reaches_no_engine(
        proxy: Proxy) -> None:
    answer, server = served(None, proxy=proxy.url("wrong"))
    assert isinstance(answer, Answer) and answer.status_code == 407
    assert server.requests == []


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy"])
def test_the_environment_s_proxy_is_used_unless_no_proxy_lists_the_host(
        proxy: Proxy, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, proxy.url())
    answer, server = served(None)
    assert isinstance(answer, Answer) and answer.status_code == 200
    assert proxy.saw(f"GET 127.0.0.1:{server.port}/idx/_search")

    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    before = proxy.seen()
    answer, server = served(None)
    assert isinstance(answer, Answer) and answer.status_code == 200
    assert len(server.requests) == 1
    time.sleep(0.2)  # a line the proxy would write comes by now
    assert f"127.0.0.1:{server.port}" not in proxy.seen()[len(before):]


def test_https_goes_through_the_proxy_in_a_tunnel(proxy: Proxy, ca: trustme.CA,
                                                  ca_bundle: str) -> None:
    answer, server = served(tls_server(ca), proxy=proxy.url(), ca_bundle=ca_bundle)
    assert isinstance(answer, Answer) and answer.status_code == 200
    assert answer.content == b'{"target": "/idx/_search?q=1"}'
    assert proxy.saw(f"CONNECT 127.0.0.1:{server.port}")


def test_the_environment_s_https_proxy_is_used_for_https(
        proxy: Proxy, ca: trustme.CA, ca_bundle: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url())
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{refused_port()}")  # not for https
    answer, server = served(tls_server(ca), ca_bundle=ca_bundle)
    assert isinstance(answer, Answer) and answer.status_code == 200
    assert proxy.saw(f"CONNECT 127.0.0.1:{server.port}")


def test_a_tunnel_the_proxy_refuses_is_refused_and_names_no_credential(
        proxy: Proxy, ca: trustme.CA, ca_bundle: str) -> None:
    failure, server = served(tls_server(ca), proxy=proxy.url("wrong"), ca_bundle=ca_bundle)
    assert isinstance(failure, Refused)
    assert "wrong" not in str(failure) and PASSWORD not in str(failure)
    assert server.requests == []


def test_a_proxy_that_is_down_is_refused_and_names_no_credential() -> None:
    port = refused_port()
    failure, server = served(None, proxy=f"http://searchport:{PASSWORD}@127.0.0.1:{port}")
    assert isinstance(failure, Refused)
    assert PASSWORD not in str(failure) and str(port) not in str(failure)
    assert server.requests == []


@pytest.mark.parametrize("proxy_setting", [
    f"https://searchport:{PASSWORD}@proxy.example:3128",
    f"socks5://searchport:{PASSWORD}@proxy.example:1080",
    f"http://searchport:{PASSWORD}@proxy.example:port",
    f"http://searchport:{PASSWORD}@proxy.example:3128/path",
])
def test_a_proxy_setting_that_cannot_work_stops_startup_without_its_password(
        proxy_setting: str) -> None:
    yaml = ("indexes:\n  cities:\n    engine: elasticsearch\n"
            "    host: http://127.0.0.1:9200\n    indexName: cities\n"
            f"    proxy: {proxy_setting}\n")
    with pytest.raises(ConfigError, match=r"^indexes\.cities\.proxy: ") as caught:
        parse_config(yaml, {})
    assert PASSWORD not in str(caught.value)


# ---------------------------------------------------------------- TLS


def test_a_ca_bundle_makes_the_engine_s_certificate_trusted(ca: trustme.CA,
                                                            ca_bundle: str) -> None:
    answer, server = served(tls_server(ca), ca_bundle=ca_bundle)
    assert isinstance(answer, Answer) and answer.status_code == 200
    assert server.origin.startswith("https://") and len(server.requests) == 1


def test_a_certificate_of_an_unknown_ca_is_refused(ca: trustme.CA) -> None:
    failure, server = served(tls_server(ca))
    assert isinstance(failure, Refused)
    assert server.requests == []


def test_a_certificate_is_taken_as_is_without_verification(ca: trustme.CA) -> None:
    answer, server = served(tls_server(ca), verify=False)
    assert isinstance(answer, Answer) and answer.status_code == 200
    assert len(server.requests) == 1


def test_each_tls_setting_and_proxy_has_its_own_pool(proxy: Proxy) -> None:
    pools = EnginePools()
    address = EngineAddress("https://127.0.0.1:9243")
    assert pools.exchange(address) is pools.exchange(address)
    assert pools.exchange(address) is not pools.exchange(address, verify=False)
    assert pools.exchange(address) is not pools.exchange(address, proxy=proxy.url())


# ---------------------------------------------------------------- through the application


def test_an_index_s_proxy_setting_carries_its_searches_and_its_password_is_never_shown(
        proxy: Proxy, caplog: pytest.LogCaptureFixture) -> None:
    """The ``proxy`` key of a handle, read by the loader and wired by the container: the
    searches go through the proxy; with credentials it refuses, the answer is a 502 and
    neither the answer nor the log shows the password."""
    caplog.set_level(logging.DEBUG)
    with misbehaving_upstream() as engine:
        def app_with(password: str) -> Iterator[TestClient[Any]]:
            yaml = ("resilience: {retries: 0}\nindexes:\n  cities:\n"
                    "    engine: elasticsearch\n"
                    f"    host: {engine.url}\n    indexName: cities\n"
                    f"    proxy: {proxy.url(password)}\n")
            container = create_container(parse_config(yaml, {}), Path("."))
            with TestClient(create_app(container, access_log="off")) as client:
                yield client

        for client in app_with(PASSWORD):
            response = client.get("/cities/search", params={"q": "paris"})
            assert response.status_code == 200, response.text
        # proxy.py logs a kept-alive connection's first request: here the mapping's
        assert proxy.saw(f"127.0.0.1:{engine.port}/cities/_mapping - 200")
        searches = len(engine.data_requests())

        for client in app_with("wrong-password"):
            response = client.get("/cities/search", params={"q": "lyon"})
            assert response.status_code == 502
            assert response.json()["error"] == "The elasticsearch engine failed (HTTP 407)"
        assert len(engine.data_requests()) == searches  # refused by the proxy
    for text in (response.text, caplog.text):
        assert PASSWORD not in text and "wrong-password" not in text
