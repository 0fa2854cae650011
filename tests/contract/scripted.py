"""What the contract tiers of the server engines share: the real application (config
loader, container, use cases, HTTP layer, adapter) with the network replaced by an
``httpx.MockTransport`` that plays a scripted engine and records every request.

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

import json
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar
from urllib.parse import unquote

import httpx
from dependency_injector import providers
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.adapters.http_clients import HttpClients
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
# an exception to raise (httpx.ConnectError...); or a function of the request.
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
        if engine is not None and not response.extensions.get("off_spec"):
            VIOLATIONS.add(f"{engine} request {sent.method} {sent.decoded_path}",
                           engine_request(engine, sent.method, sent.decoded_path, query,
                                          sent.body))
            self._check_answer(engine, sent, response)
        return response

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

    @property
    def sent(self) -> list[Sent]:
        return self.recorder.sent

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.client.get(url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.client.post(url, **kwargs)


App = TypeVar("App", bound=StartedApp)


def build_container(config_yaml: str, handler: Handler, *,
                    environ: Mapping[str, str] | None = None,
                    base_dir: Path | None = None) -> tuple[Container, Recorder]:
    """The production container with the network replaced; engines are built (and
    configuration errors raised) here."""
    config = parse_config(textwrap.dedent(config_yaml), environ or {})
    hosts = [(str(i.host).rstrip("/"), i.engine) for i in config.indexes.values()
             if getattr(i, "host", None)]

    def engine_of(url: str) -> str | None:
        return next((engine for host, engine in hosts if url.startswith(host)), None)

    recorder = Recorder(handler, engines=engine_of)
    container = Container(config=config, base_dir=base_dir or Path("."))
    container.http_clients.override(
        providers.Object(HttpClients(transport=httpx.MockTransport(recorder)))
    )
    container.catalog()
    container.cache()
    return in_memory_analytics(container), recorder


@contextmanager
def started(kind: type[App], config_yaml: str, handler: Handler, *,
            environ: Mapping[str, str] | None = None, base_dir: Path | None = None,
            warm_up: Callable[[Config], int] | None = None) -> Iterator[App]:
    """A started app of type ``kind``. With ``warm_up`` (how many requests startup makes in
    the background for a config), those have been answered before the first test request,
    so the order of ``sent`` does not depend on scheduling. On exit, no unscripted request
    was made."""
    container, recorder = build_container(config_yaml, handler, environ=environ,
                                          base_dir=base_dir)
    app = create_app(container)
    with TestClient(app) as client:
        if warm_up is not None:
            expected = warm_up(container.config())
            deadline = time.monotonic() + 5
            while recorder.answered < expected and time.monotonic() < deadline:
                time.sleep(0.001)
            time.sleep(0.005)  # let the engine store what it read
        yield kind(client=client, recorder=recorder, config=container.config(),
                   container=container)
    unexpected = getattr(handler, "unexpected", [])
    assert not unexpected, f"the adapter sent unscripted requests: {unexpected}"
