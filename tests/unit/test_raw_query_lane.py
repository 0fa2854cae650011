"""The raw-query lane answers ``POST /{handle}/query`` exactly as Litestar's route does.

Each request is sent twice through the real app: once as is (the lane serves it) and once
with an ``Origin`` header (the lane leaves such requests to Litestar; no CORS is configured
here, so Litestar adds nothing for it). A counting wrapper around Litestar proves which of
the two answered; status, headers (but the per-request id and timing) and body must match.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.domain.config import (
    Config,
    IndexConfig,
    LimitsConfig,
    RateLimitConfig,
    RateRule,
)
from searchport.domain.errors import EngineUnavailable
from searchport.entrypoints.app import create_app
from searchport.entrypoints.raw_query_lane import RawQueryLane
from tests.fakes import FakeEngine, fake_container

PER_REQUEST = {"x-request-id", "server-timing"}
ORIGIN = {"Origin": "https://shop.example"}


class RawFailing(FakeEngine):
    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    async def raw_query(self, body: dict[str, Any]) -> bytes:
        raise self.error


def settings(**extra: Any) -> Config:
    index = IndexConfig(engine="tantivy", path="unused")
    closed = IndexConfig(engine="tantivy", path="unused", raw_query=False)
    return Config(indexes={"cities": index, "closed": closed, "broken": index, "down": index},
                  **extra)


class Lanes:
    """A client on the real app, and how many requests reached Litestar itself."""

    def __init__(self, client: TestClient[Any], app: Any) -> None:
        self.client = client
        self.litestar_calls = 0
        lane = app.app.app  # RequestContext -> Compression -> the lane
        assert isinstance(lane, RawQueryLane)
        litestar = lane.app

        async def counted(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                self.litestar_calls += 1
            await litestar(scope, receive, send)

        lane.app = counted

    def both(self, path: str, **kwargs: Any) -> tuple[Any, Any]:
        """(the lane's answer, Litestar's answer) to the same request."""
        before = self.litestar_calls
        laned = self.client.post(path, **kwargs)
        assert self.litestar_calls == before, "the lane should have answered"
        headers = {**kwargs.pop("headers", {}), **ORIGIN}
        routed = self.client.post(path, headers=headers, **kwargs)
        assert self.litestar_calls == before + 1, "Litestar should have answered"
        return laned, routed


@contextmanager
def lanes(config: Config | None = None) -> Iterator[Lanes]:
    engines = {"cities": FakeEngine(), "closed": FakeEngine(),
               "broken": RawFailing(RuntimeError("a bug")),
               "down": RawFailing(EngineUnavailable("The search engine is unavailable"))}
    app = create_app(fake_container(config or settings(), engines))
    with TestClient(app) as client:
        yield Lanes(client, app)


def same_answer(laned: Any, routed: Any) -> None:
    assert laned.status_code == routed.status_code, (laned.text, routed.text)
    assert laned.content == routed.content
    assert ({k: v for k, v in laned.headers.items() if k not in PER_REQUEST}
            == {k: v for k, v in routed.headers.items() if k not in PER_REQUEST})
    assert laned.headers["x-request-id"] != routed.headers["x-request-id"]
    assert laned.headers["server-timing"].startswith("engine;dur=")


@pytest.mark.parametrize(("path", "body", "status"), [
    ("/cities/query", b'{"query": {"match_all": {}}}', 200),
    ("/cities/query", b'{"bad": true}', 400),  # the engine refuses it
    ("/cities/query", b"[1, 2]", 400),
    ("/cities/query", b"{", 400),
    ("/cities/query", b"", 400),
    ("/closed/query", b"{}", 403),
    ("/broken/query", b"{}", 500),
    ("/down/query", b"{}", 502),
])
def test_same_answer_as_litestar(path: str, body: bytes, status: int) -> None:
    with lanes() as app:
        laned, routed = app.both(path, content=body,
                                 headers={"Content-Type": "application/json"})
    if status == 500:  # the body quotes the request's own id
        assert laned.json() == {
            "error": "Internal server error; quote the request id when reporting it",
            "requestId": laned.headers["x-request-id"]}
        assert routed.json()["requestId"] == routed.headers["x-request-id"]
        assert laned.headers["cache-control"] == routed.headers["cache-control"] == "no-store"
        return
    assert laned.status_code == status
    same_answer(laned, routed)


def test_the_answer_is_the_engines_bytes() -> None:
    with lanes() as app:
        laned, _ = app.both("/cities/query", content=b'{"size": 3}')
    assert laned.json() == {"echo": {"size": 3}}
    assert laned.headers["content-type"] == "application/json"
    assert "cache-control" not in laned.headers  # a POST answer is not for caches


def test_compressed_like_any_answer() -> None:
    body = msgspec.json.encode({"query": "x" * 4000})
    with lanes() as app:
        laned, routed = app.both("/cities/query", content=body,
                                 headers={"Accept-Encoding": "gzip"})
    assert laned.headers["content-encoding"] == "gzip"
    same_answer(laned, routed)
    assert laned.json() == {"echo": {"query": "x" * 4000}}


def test_413_on_a_large_body() -> None:
    with lanes(settings(limits=LimitsConfig(max_body_bytes=1024))) as app:
        laned, routed = app.both("/cities/query", content=b'{"q":"' + b"x" * 1100 + b'"}')
    assert laned.status_code == 413
    assert laned.json() == {"error": "The request body is too large"}
    same_answer(laned, routed)


def test_414_401_and_429_from_the_same_guards() -> None:
    with lanes(settings(limits=LimitsConfig(max_query_bytes=1024))) as app:
        laned, routed = app.both("/cities/query?" + "x" * 1100, content=b"{}")
    assert laned.status_code == 414
    same_answer(laned, routed)

    with lanes(settings(api_key="k-1")) as app:
        laned, routed = app.both("/cities/query", content=b"{}")
        assert laned.status_code == 401
        same_answer(laned, routed)
        laned, routed = app.both("/cities/query", content=b"{}",
                                 headers={"Authorization": "Bearer k-1"})
        assert laned.status_code == 200
        same_answer(laned, routed)

    limited = settings(rate_limit=RateLimitConfig(per_ip=RateRule(limit=1, window=60)))
    with lanes(limited) as app:
        assert app.client.post("/cities/query", content=b"{}").status_code == 200
        laned, routed = app.both("/cities/query", content=b"{}")
    assert laned.status_code == 429
    same_answer(laned, routed)


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/cities/query", 405),
    ("POST", "/nope/query", 404),  # not a configured handle
    ("POST", "/cities/query/", 200),  # Litestar's own path rules
    ("POST", "/cities/search", 405),
])
def test_other_requests_go_to_litestar(method: str, path: str, status: int) -> None:
    with lanes() as app:
        response = app.client.request(method, path, content=b"{}")
        assert app.litestar_calls == 1
    assert response.status_code == status


def test_counted_under_the_routes_template() -> None:
    with lanes() as app:
        app.both("/cities/query", content=b"{}")
        metrics = app.client.get("/metrics").text
    line = ('searchport_requests_total{method="POST",route="/{handle}/query",'
            'status="200"} 2.0')
    assert line in metrics


class _Receive:
    def __init__(self, *messages: dict[str, Any]) -> None:
        self.messages = list(messages)

    async def __call__(self) -> dict[str, Any]:
        return self.messages.pop(0)


async def _run(lane: RawQueryLane, receive: _Receive) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/cities/query", "headers": [],
             "query_string": b""}
    await lane(scope, receive, send)  # type: ignore[arg-type]
    return sent


@pytest.mark.anyio
async def test_chunked_bodies_are_joined_and_bounded() -> None:
    engine = FakeEngine()
    container = fake_container(settings(), {"cities": engine, "closed": engine,
                                            "broken": engine, "down": engine})

    async def litestar(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the lane should answer")

    lane = RawQueryLane(litestar, raw_query=container.raw_query, handles=["cities"],
                        max_body_bytes=1024)
    sent = await _run(lane, _Receive(
        {"type": "http.request", "body": b'{"size":', "more_body": True},
        {"type": "http.request", "body": b" 5}", "more_body": False}))
    assert sent[0]["status"] == 200
    assert msgspec.json.decode(sent[1]["body"]) == {"echo": {"size": 5}}

    sent = await _run(lane, _Receive(
        *[{"type": "http.request", "body": b"x" * 600, "more_body": True}] * 2))
    assert sent[0]["status"] == 413
    assert engine.queries == [{"size": 5}]

    sent = await _run(lane, _Receive(
        {"type": "http.request", "body": b"{", "more_body": True}, {"type": "http.disconnect"}))
    assert sent == []  # the client left: nothing to answer
