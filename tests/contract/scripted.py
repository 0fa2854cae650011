"""What the contract tiers of the server engines share: the real application (config
loader, container, use cases, HTTP layer, adapter, and the production engine client) over
real HTTP to a server on 127.0.0.1 that plays a scripted engine and records every request.

- ``LoopbackEngine``: an HTTP and an HTTPS server (``aiohttp.web``, on a loop of their own
  thread) that hand every request to a handler as an ``httpx.Request`` and send back its
  ``httpx.Response``. Every engine origin of a config is served by them: the production
  client is made for the loopback server's own address, and each request keeps the
  configured host in its ``Host`` header (what a name resolved to 127.0.0.1 would give),
  so the adapters keep the hosts they are configured with. A reply that is an
  ``httpx`` network error is played on the socket: a timeout is never answered, any
  other error closes the connection unanswered. The timeout each exchange is given is
  recorded (``timeouts``), and the client waits at most ``WAIT`` seconds of it, so that
  an unanswered request fails without waiting out an index's timeout (5 s by default).

- ``ScriptedEngine``: an engine answering by method and path (``on(...)``); each engine's
  conftest adds its routes, headers and defaults.
- ``Recorder``/``Sent``: every request the adapter made (method, path, headers, body); each
  request body and each scripted answer is held against the specification of its engine's
  endpoint (``tests/specs``), and what that refuses fails the test (``tests/conftest.py``).
  An exchange meant to be wrong (a broken answer the adapter must survive, a raw query the
  engine refuses) has its reply wrapped in ``OffSpec`` and is not checked.
- ``build_container``/``started``: the production container over a handler, and a started
  app over it (Litestar ``TestClient``) wrapped by each conftest in its own ``StartedApp``.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import ssl
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar
from urllib.parse import unquote, urlsplit

import httpx
import trustme
from aiohttp import web
from dependency_injector import providers
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.adapters.network.client import EngineClient
from searchport.adapters.network.exchange import Answer, Exchange, Tls
from searchport.adapters.network.pools import EnginePools
from searchport.domain.config import Config
from searchport.entrypoints.container import Container
from searchport.entrypoints.http.app import create_app
from tests.fakes import in_memory_analytics
from tests.specs.exchanges import VIOLATIONS, engine_answer, engine_request

Handler = Callable[[httpx.Request], httpx.Response]


@dataclass(frozen=True)
class OffSpec:
    """A scripted reply to an exchange its engine's specification refuses on purpose: a
    broken answer the adapter must survive, or a raw query written for another engine or
    for the engine to refuse. Neither the request nor the answer is held against the
    specification."""

    reply: Any

# What a scripted route answers: a response; (status, JSON body or text[, headers]);
# an httpx network error to play (httpx.ConnectError...); or a function of the request.
Reply = httpx.Response | tuple[Any, ...] | BaseException | Handler | OffSpec


class ScriptedEngine:
    """A server reduced to a table of answers.

    ``on(method, path, *replies)`` scripts a route; replies are used in order and the last
    one is repeated. A request to an unscripted route fails the test (the app answers 500).
    """

    content_type = "application/json"
    engine: str | None = None  # whose specification the exchanges are held against

    def __init__(self) -> None:
        self.unexpected: list[str] = []
        self._routes: dict[tuple[str, str], list[Reply]] = {}
        self._lock = threading.Lock()

    def on(self, method: str, path: str, *replies: Reply) -> Self:
        """Script ``method path`` (the path percent-encoded, as on the wire)."""
        assert replies
        self._routes[(method, path)] = list(replies)
        return self

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode("ascii").split("?", 1)[0]
        with self._lock:
            queue = self._routes.get((request.method, path))
            if not queue:
                self.unexpected.append(f"{request.method} {path}")
                raise AssertionError(f"unscripted engine request {request.method} {path}")
            reply = queue.pop(0) if len(queue) > 1 else queue[0]
        return self.respond(reply, request)

    def respond(self, reply: Reply, request: httpx.Request) -> httpx.Response:
        if isinstance(reply, OffSpec):
            response = self.respond(reply.reply, request)
            response.extensions["off_spec"] = True
            return response
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, httpx.Response):
            return reply
        if callable(reply):
            return reply(request)
        status, body, *rest = reply
        headers: dict[str, str] = dict(rest[0]) if rest else {}
        return self.response(status, body, headers)

    def answer_headers(self) -> dict[str, str]:
        """Headers the engine sends on every answer, besides ``Content-Type``."""
        return {}

    def response(self, status: int, body: Any, headers: Mapping[str, str] | None = None
                 ) -> httpx.Response:
        out = {"Content-Type": self.content_type, **self.answer_headers(), **(headers or {})}
        if isinstance(body, bytes):
            content = body
        elif isinstance(body, str):
            content = body.encode()
        else:
            content = json.dumps(body).encode()
        return httpx.Response(status, content=content, headers=out)


@dataclass(frozen=True)
class Sent:
    """One request the adapter sent."""

    method: str
    path: str  # as on the wire: percent-encoded, without the query string
    query: str
    url: str
    headers: httpx.Headers
    content: bytes
    body: Any  # the decoded JSON body, or None without one

    @property
    def decoded_path(self) -> str:
        return unquote(self.path)


@dataclass
class Recorder:
    """Wraps a handler; every request is recorded before it is answered, and held with its
    answer against the specification of the engine (``engines``: the engine of a request
    URL; by default the handler's ``engine``)."""

    handler: Handler
    sent: list[Sent] = field(default_factory=list)
    answered: int = 0
    engines: Callable[[str], str | None] | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        response, check = self.take(request)
        check()
        return response

    def take(self, request: httpx.Request) -> tuple[httpx.Response, Callable[[], None]]:
        """The answer, recorded, and the check of the exchange against the specification,
        to run once the answer is on its way (the loopback engine runs it after sending, so
        that a slow check never counts against the client's deadline)."""
        content = request.content
        raw_path, _, query = request.url.raw_path.decode("ascii").partition("?")
        sent = Sent(
            method=request.method,
            path=raw_path,
            query=query,
            url=str(request.url),
            headers=request.headers,
            content=content,
            body=json.loads(content) if content else None,
        )
        self.sent.append(sent)
        try:
            response = self.handler(request)
        finally:
            self.answered += 1
        engine = self._engine(sent.url)

        def check() -> None:
            if engine is not None and not response.extensions.get("off_spec"):
                VIOLATIONS.add(f"{engine} request {sent.method} {sent.decoded_path}",
                               engine_request(engine, sent.method, sent.decoded_path, query,
                                              sent.body))
                self._check_answer(engine, sent, response)

        return response, check

    def _engine(self, url: str) -> str | None:
        found = self.engines(url) if self.engines is not None else None
        return found or getattr(self.handler, "engine", None)

    @staticmethod
    def _check_answer(engine: str, sent: Sent, response: httpx.Response) -> None:
        try:
            body = json.loads(response.read()) if response.content else None
        except ValueError:
            return  # not JSON: the adapter's handling of a broken answer is under test
        VIOLATIONS.add(
            f"{engine} answer {response.status_code} to {sent.method} {sent.decoded_path}",
            engine_answer(engine, sent.method, sent.decoded_path, response.status_code, body))


@dataclass
class StartedApp:
    """A started application over a scripted engine."""

    client: TestClient[Any]
    recorder: Recorder
    config: Config
    container: Container
    served: LoopbackEngine

    @property
    def sent(self) -> list[Sent]:
        return self.recorder.sent

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        response = self.client.get(url, **kwargs)
        self.served.settle()  # the exchanges it caused are checked before the test goes on
        return response

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        response = self.client.post(url, **kwargs)
        self.served.settle()
        return response



class _ServerLoop:
    """The one event loop, in a thread of its own, that every loopback server runs on."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        atexit.register(self.loop.call_soon_threadsafe, self.loop.stop)

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=10)


_SERVERS: list[_ServerLoop] = []
# the scripted engines' certificate, for every host name the contract tests use
_CA = trustme.CA()
_CERTIFICATE = _CA.issue_cert("es.test", "es.internal.example", "meili.test",
                              "search.internal", "m", "localhost", "127.0.0.1")
HANG = 60.0  # seconds a timeout reply holds its request (the client gives up long before)
WAIT = 2.5  # seconds the client waits for an answer at most (a loaded machine is slow)


class _Loopback:
    """The production client for a configured ``origin``, made for the loopback server's
    address: each request goes there with the configured host as its ``Host``; the
    timeout each exchange is given is recorded, and ``WAIT`` seconds at most kept."""

    def __init__(self, origin: str, inner: EngineClient, timeouts: list[float]) -> None:
        self._origin = origin
        self._host = urlsplit(origin).netloc
        self._inner = inner
        self._timeouts = timeouts

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        assert url.startswith(self._origin), url
        self._timeouts.append(timeout)
        return await self._inner.exchange(
            method, self._inner.origin + url[len(self._origin):],
            {**headers, "Host": self._host}, body, min(timeout, WAIT))

    async def aclose(self) -> None:
        await self._inner.aclose()


class LoopbackEngine:
    """A handler served over real HTTP and HTTPS on 127.0.0.1 (see the module's doc)."""

    def __init__(self, handler: Handler) -> None:
        if not _SERVERS:
            _SERVERS.append(_ServerLoop())
        self.handler = handler
        self.timeouts: list[float] = []  # given to each exchange, in order
        self._loop = _SERVERS[0]
        self._busy = 0  # requests being answered or checked
        self._idle = threading.Condition()
        self._runner: web.AppRunner | None = None
        self._ports: tuple[int, int] = (0, 0)
        self._client_tls = Tls(ca_pem=_CA.cert_pem.bytes())

    def start(self) -> LoopbackEngine:
        if self._runner is None:
            self._loop.run(self._start())
        return self

    def stop(self) -> None:
        if self._runner is not None:
            self.settle()
            self._loop.run(self._runner.cleanup())
            self._runner = None

    @property
    def http_origin(self) -> str:
        """The plain-HTTP server's own address, for a client made outside ``network``."""
        self.start()
        return f"http://127.0.0.1:{self._ports[0]}"

    def settle(self, timeout: float = 60.0) -> None:
        """Wait until every request received so far is answered and checked."""
        with self._idle:
            assert self._idle.wait_for(lambda: self._busy == 0, timeout), "still checking"

    def _done(self) -> None:
        with self._idle:
            self._busy -= 1
            self._idle.notify_all()

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._serve)
        runner = web.AppRunner(app, handle_signals=False, access_log=None,
                               shutdown_timeout=0.1)
        await runner.setup()
        server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        _CERTIFICATE.configure_cert(server_tls)
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_tls).start()
        (_, http_port), (_, https_port) = runner.addresses[:2]
        self._runner, self._ports = runner, (http_port, https_port)

    def network(self, origin: str, tls: Tls, proxy: str | None) -> Exchange:
        """The production client for ``origin``, talking to this server (its https one
        for an https origin, its certificate checked as 127.0.0.1's), the test CA trusted
        where production would trust the system's."""
        self.start()
        https = origin.startswith("https:")
        port = self._ports[1] if https else self._ports[0]
        client = EngineClient(f"{'https' if https else 'http'}://127.0.0.1:{port}",
                              tls=self._client_tls if tls.verify and tls.ca_pem is None
                              else tls, proxy=proxy, max_connections=8, keepalive_seconds=30)
        return _Loopback(origin, client, self.timeouts)

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        with self._idle:
            self._busy += 1
        done = False
        try:
            body = await request.read()
            scheme = "https" if request.secure else "http"
            sent = httpx.Request(request.method,
                                 f"{scheme}://{request.host}{request.raw_path}",
                                 headers=list(request.headers.items()), content=body)
            take = getattr(self.handler, "take", None)
            try:
                if take is not None:
                    answer, check = take(sent)
                else:
                    answer, check = self.handler(sent), None
            except httpx.TimeoutException:
                done = True
                self._done()  # never answered: nothing to wait for
                await asyncio.sleep(HANG)
                raise
            except httpx.TransportError:
                assert request.transport is not None
                request.transport.abort()
                raise
            except AssertionError as exc:  # an unscripted request: the test fails on exit
                return web.Response(status=500, text=str(exc))
            headers = [(k, v) for k, v in answer.headers.multi_items()
                       if k.lower() not in ("content-length", "transfer-encoding")]
            response = web.Response(status=answer.status_code, headers=headers,
                                    body=answer.read())
            if check is not None:  # the answer sent first, then held against the spec
                await response.prepare(request)
                await response.write_eof()
                check()
            return response
        finally:
            if not done:
                self._done()


App = TypeVar("App", bound=StartedApp)


def build_container(config_yaml: str, handler: Handler, *,
                    environ: Mapping[str, str] | None = None,
                    base_dir: Path | None = None
                    ) -> tuple[Container, Recorder, LoopbackEngine]:
    """The production container over a loopback engine playing ``handler`` (one attempt
    per call: no retries, no breaker); engines are built (and configuration errors raised)
    here."""
    config = parse_config(textwrap.dedent(config_yaml), environ or {})
    hosts = [(str(i.host).rstrip("/"), i.engine) for i in config.indexes.values()
             if getattr(i, "host", None)]

    def engine_of(url: str) -> str | None:
        return next((engine for host, engine in hosts if url.startswith(host)), None)

    recorder = Recorder(handler, engines=engine_of)
    container = Container(config=config, base_dir=base_dir or Path("."))
    engine = LoopbackEngine(recorder)
    container.engine_pools.override(providers.Object(EnginePools(network=engine.network)))
    try:
        container.catalog()
        container.cache()
    except BaseException:
        engine.stop()
        raise
    return in_memory_analytics(container), recorder, engine


@contextmanager
def started(kind: type[App], config_yaml: str, handler: Handler, *,
            environ: Mapping[str, str] | None = None, base_dir: Path | None = None,
            warm_up: Callable[[Config], int] | None = None) -> Iterator[App]:
    """A started app of type ``kind``. With ``warm_up`` (how many requests startup makes in
    the background for a config), those have been answered before the first test request,
    so the order of ``sent`` does not depend on scheduling. On exit, no unscripted request
    was made."""
    container, recorder, engine = build_container(config_yaml, handler, environ=environ,
                                                  base_dir=base_dir)
    app = create_app(container)
    with engine_served(engine), TestClient(app) as client:
        if warm_up is not None:
            expected = warm_up(container.config())
            deadline = time.monotonic() + 5
            while recorder.answered < expected and time.monotonic() < deadline:
                time.sleep(0.001)
            time.sleep(0.005)  # let the engine store what it read
        yield kind(client=client, recorder=recorder, config=container.config(),
                   container=container, served=engine)
    unexpected = getattr(handler, "unexpected", [])
    assert not unexpected, f"the adapter sent unscripted requests: {unexpected}"


@contextmanager
def engine_served(engine: LoopbackEngine) -> Iterator[LoopbackEngine]:
    try:
        yield engine.start()
    finally:
        engine.stop()
