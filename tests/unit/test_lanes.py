"""The lanes answer exactly as Litestar's routes do: the raw query (``POST
/{handle}/query``) and GET answers held in this process's cache.

Each request is sent to two apps built alike from the same config: the real one (a lane
serves it) and one made with ``lanes=False`` (Litestar serves everything). A counting
wrapper around the first app's Litestar proves the lane answered; status, headers (but
the per-request id and timing) and body must match, CORS headers included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest
from dependency_injector import providers
from litestar.testing import TestClient

from searchport.adapters.cache.memory import MemoryCache
from searchport.domain.config import (
    Config,
    IndexCacheConfig,
    IndexConfig,
    LimitsConfig,
    RateLimitConfig,
    RateRule,
)
from searchport.domain.errors import EngineUnavailable
from searchport.entrypoints.app import create_app
from searchport.entrypoints.lanes import CachedAnswerLane, Learned, LearnedUrls, RawQueryLane
from searchport.entrypoints.request_context import RequestContext
from searchport.entrypoints.timing import ObservedCache
from tests.fakes import EchoEngine, FakeCache, FakeEngine, fake_container

PER_REQUEST = {"x-request-id", "server-timing"}


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
    """Clients on the app with lanes and on its twin without, and how many requests reached
    the first one's Litestar."""

    def __init__(self, client: TestClient[Any], app: Any, plain: TestClient[Any]) -> None:
        self.client = client
        self.plain = plain
        self.litestar_calls = 0
        cached = app.app.app  # RequestContext -> Compression -> the lanes
        assert isinstance(cached, CachedAnswerLane)
        lane = cached.app
        assert isinstance(lane, RawQueryLane)
        litestar = lane.app

        async def counted(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                self.litestar_calls += 1
            await litestar(scope, receive, send)

        lane.app = counted

    def both(self, path: str, method: str = "POST", **kwargs: Any) -> tuple[Any, Any]:
        """(the lane's answer, Litestar's answer) to the same request."""
        before = self.litestar_calls
        laned = self.client.request(method, path, **kwargs)
        assert self.litestar_calls == before, "the lane should have answered"
        return laned, self.plain.request(method, path, **kwargs)

    def routed(self, path: str, method: str = "GET", **kwargs: Any) -> Any:
        """A request that the first app's Litestar must answer (sent to both apps)."""
        before = self.litestar_calls
        response = self.client.request(method, path, **kwargs)
        assert self.litestar_calls == before + 1, "Litestar should have answered"
        self.plain.request(method, path, **kwargs)
        return response


@contextmanager
def twins(build: Callable[[], Any]) -> Iterator[Lanes]:
    """``build()`` makes a container; one app with lanes on it, one without on another."""
    app = create_app(build())
    with TestClient(app) as client, TestClient(create_app(build(), lanes=False)) as plain:
        yield Lanes(client, app, plain)


@contextmanager
def lanes(config: Config | None = None) -> Iterator[Lanes]:
    def build() -> Any:
        engines = {"cities": FakeEngine(), "closed": FakeEngine(),
                   "broken": RawFailing(RuntimeError("a bug")),
                   "down": RawFailing(EngineUnavailable("The search engine is unavailable"))}
        return fake_container(config or settings(), engines)

    with twins(build) as app:
        yield app


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
        assert [r.status_code for r in app.both("/cities/query", content=b"{}")] == [200, 200]
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
        laned = app.client.get("/metrics").text
        routed = app.plain.get("/metrics").text
    line = ('searchport_requests_total{method="POST",route="/{handle}/query",'
            'status="200"} 1.0')
    assert line in laned
    assert line in routed


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


# ------------------------------------------------------------- answers held in the cache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def cached_settings(**extra: Any) -> Config:
    index = IndexConfig(engine="tantivy", path="unused",
                        cache=IndexCacheConfig(search_ttl=30, documents=True))
    return Config(indexes={"cities": index}, **extra)


@contextmanager
def cached_lanes(
    config: Config | None = None, tier: Any = None
) -> Iterator[tuple[Lanes, EchoEngine, Clock]]:
    """The apps over EchoEngines (an answer spells out its query, so an answer served for
    the wrong URL shows) and memory caches on clocks the test moves; the first app's engine
    and clock are given."""
    made: list[tuple[EchoEngine, Clock]] = []

    def build() -> Any:
        clock = Clock()
        engine = EchoEngine()
        made.append((engine, clock))
        container = fake_container(config or cached_settings(), {"cities": engine})
        container.cache.override(providers.Object(ObservedCache(
            tier if tier is not None else MemoryCache(clock=clock),
            container.metrics().cache_lookup)))
        return container

    with twins(build) as app:
        yield app, *made[0]


CACHED_GETS = [
    "/cities/search?q=paris&page=2",
    "/cities/search?q=paris&page=3",
    "/cities/autocomplete?q=par",
    "/cities/facets/region?q=eu",
    "/cities/documents/a%2Fb",
    "/cities/mapping",
]


@pytest.mark.parametrize("path", CACHED_GETS)
def test_a_held_answer_is_litestars_answer(path: str) -> None:
    with cached_lanes() as (app, engine, _):
        first = app.routed(path)  # a miss: Litestar answers, the lane learns the URL
        calls = len(engine.queries)
        laned, routed = app.both(path, method="GET")
        assert len(engine.queries) == calls  # both from the cache
    assert first.status_code == 200
    assert laned.content == first.content
    same_answer(laned, routed)
    assert laned.headers["cache-control"] == "public, max-age=10, stale-while-revalidate=50"


def test_each_url_gets_its_own_answer() -> None:
    with cached_lanes() as (app, _, _):
        firsts = [app.routed(path).content for path in CACHED_GETS[:4]]
        again = [app.both(path, method="GET")[0].content for path in CACHED_GETS[:4]]
    assert again == firsts
    assert len(set(firsts)) == 4


@pytest.mark.parametrize("named", ["{etag}", "W/{etag}", '"other", {etag}', "*"])
def test_304_as_litestar_sends_it(named: str) -> None:
    with cached_lanes() as (app, _, _):
        etag = app.routed(CACHED_GETS[0]).headers["etag"]
        laned, routed = app.both(CACHED_GETS[0], method="GET",
                                 headers={"If-None-Match": named.format(etag=etag)})
    assert laned.status_code == 304
    assert laned.content == b""
    same_answer(laned, routed)


def test_compressed_and_private_like_litestars() -> None:
    with cached_lanes(cached_settings(api_key="k-1")) as (app, _, _):
        key = {"Authorization": "Bearer k-1"}
        app.routed(CACHED_GETS[0], headers=key)
        laned, routed = app.both(CACHED_GETS[0], method="GET",
                                 headers={**key, "Accept-Encoding": "gzip"})
        assert laned.headers["cache-control"] == "private, max-age=10"
        same_answer(laned, routed)
        # a learned URL still needs the key: refused by the lane's guards, cache untouched
        before = app.litestar_calls
        refused = app.client.get(CACHED_GETS[0])
        assert app.litestar_calls == before
        assert refused.status_code == 401
        metrics = app.client.get("/metrics", headers=key).text
    assert 'searchport_cache_lookups_total{result="hit"} 1.0' in metrics  # the lane's hit


def test_an_expired_or_cleared_entry_goes_back_to_the_engine() -> None:
    with cached_lanes() as (app, engine, clock):
        first = app.routed(CACHED_GETS[0])
        assert len(engine.queries) == 1
        clock.now += 31  # past searchTtl: the lane finds nothing and hands over
        assert app.routed(CACHED_GETS[0]).content == first.content
        assert len(engine.queries) == 2
        app.both(CACHED_GETS[0], method="GET")
        assert app.client.post("/cache/clear").status_code == 200
        assert app.routed(CACHED_GETS[0]).content == first.content
        assert len(engine.queries) == 3


def test_a_miss_in_the_lane_meets_the_rate_limit_once() -> None:
    limited = cached_settings(rate_limit=RateLimitConfig(per_ip=RateRule(limit=2, window=600)))
    with cached_lanes(limited) as (app, _, clock):
        assert app.routed(CACHED_GETS[0]).status_code == 200  # 1st request
        clock.now += 31
        # the lane runs the guards, finds the entry gone, and Litestar's guards stand aside
        assert app.routed(CACHED_GETS[0]).status_code == 200  # 2nd, not a 429
        refused = app.client.get(CACHED_GETS[0])  # 3rd: the lane's guards refuse
    assert refused.status_code == 429


@pytest.mark.parametrize("path", [
    "/cities/search?q=paris&page=abc",
    "/cities/search?q=paris&sort=%5Bbad",
])
def test_errors_are_never_learned(path: str) -> None:
    with cached_lanes() as (app, _, _):
        for _ in range(2):
            assert app.routed(path).status_code == 400


@pytest.mark.anyio
@pytest.mark.parametrize(("template", "learned"), [
    ("/{handle}/search", True),
    ("/{handle}/reshaped", False),  # a route whose answer is not the entry's bytes as is
])
async def test_only_routes_answering_the_entry_as_is_are_learned(
    template: str, learned: bool
) -> None:
    tier = MemoryCache()
    tier.store("the-key", b'{"stored":true}', 60)
    cache = ObservedCache(tier)
    served: list[str] = []

    async def litestar(scope: Any, receive: Any, send: Any) -> None:
        scope["path_template"] = template
        scope["path_params"] = {"handle": "cities"}
        served.append(scope["path"])
        await cache.get("the-key")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b'{"reshaped":true}'})

    lane = CachedAnswerLane(litestar, cache=lambda: cache, private=False)
    app = RequestContext(lane)
    bodies = []
    for _ in range(2):
        sent: list[dict[str, Any]] = []

        async def send(message: Any, into: list[dict[str, Any]] = sent) -> None:
            into.append(message)

        scope = {"type": "http", "method": "GET", "path": "/cities/x", "query_string": b"",
                 "headers": []}
        await app(scope, _Receive({"type": "http.request", "body": b""}), send)  # type: ignore[arg-type]
        bodies.append(sent[1]["body"])
    assert len(served) == (1 if learned else 2)
    assert bodies[1] == (b'{"stored":true}' if learned else b'{"reshaped":true}')


def test_no_in_process_tier_no_lane() -> None:
    shared_only = FakeCache(status="connected")  # like Redis with localTtl 0
    with cached_lanes(tier=shared_only) as (app, engine, _):
        for _ in range(3):
            assert app.routed(CACHED_GETS[0]).status_code == 200
    assert len(engine.queries) == 1  # still cached, by the shared tier


def test_learned_urls_are_bounded() -> None:
    urls = LearnedUrls(max_entries=3, max_bytes=10_000)
    for n in range(5):
        urls.put((f"/h/search{n}", b""), Learned(f"k{n}", "/{handle}/search", {}))
    assert len(urls) == 3
    assert urls.get(("/h/search0", b"")) is None
    assert urls.get(("/h/search4", b"")) is not None
    small = LearnedUrls(max_entries=100, max_bytes=1_000)
    for n in range(20):
        small.put((f"/h/search{n}", b"q=" + b"x" * 100), Learned("k", "/{handle}/search", {}))
    assert 1 <= len(small) <= 3


def test_remembered_etags_are_bounded_by_bytes() -> None:
    lane = CachedAnswerLane(None, cache=lambda: ObservedCache(MemoryCache()),  # type: ignore[arg-type]
                            private=False)
    big = b"x" * (3 * 1024 * 1024)
    first = lane._etag("k1", big)
    assert lane._etag("k1", big) is first  # remembered while the entry is these bytes
    changed = lane._etag("k1", big + b"y")
    assert changed != first
    for n in range(5):
        lane._etag(f"k{n + 2}", bytes(big))
    assert lane._etag_bytes <= 8 * 1024 * 1024
    assert sum(len(body) for body, _ in lane._etags.values()) == lane._etag_bytes


# ------------------------------------------------------------------------------------ CORS

CORS_CASES = [
    (["https://shop.example"], {"Origin": "https://shop.example"}),
    (["https://shop.example"], {"Origin": "https://evil.example"}),
    ("*", {"Origin": "https://any.example"}),
    ("*", {"Origin": "https://any.example", "Cookie": "session=1"}),
]


@pytest.mark.parametrize(("origins", "headers"), CORS_CASES)
def test_cors_headers_as_litestar_adds_them(origins: Any, headers: dict[str, str]) -> None:
    with lanes(settings(cors_origins=origins)) as app:
        for body in (b'{"size": 1}', b"{"):
            laned, routed = app.both("/cities/query", content=body, headers=headers)
            same_answer(laned, routed)
            assert "access-control-allow-methods" in laned.headers
    allowed = headers["Origin"] == "https://shop.example" or "Cookie" in headers
    assert (laned.headers.get("access-control-allow-origin") == headers["Origin"]) is allowed

    key = {"Authorization": "Bearer k-1"}
    with cached_lanes(cached_settings(cors_origins=origins, api_key="k-1")) as (app, _, _):
        first = app.routed(CACHED_GETS[0], headers={**headers, **key})
        answers = [
            app.both(CACHED_GETS[0], method="GET", headers={**headers, **key}),
            app.both(CACHED_GETS[0], method="GET",
                     headers={**headers, **key, "If-None-Match": first.headers["etag"]}),
            app.both(CACHED_GETS[0], method="GET", headers=headers),  # no key: the guard's 401
        ]
        preflight = app.routed(CACHED_GETS[0], method="OPTIONS", headers={
            **headers, "Access-Control-Request-Method": "GET"})
    assert [laned.status_code for laned, _ in answers] == [200, 304, 401]
    for laned, routed in answers:
        same_answer(laned, routed)
    assert preflight.status_code in (204, 400)
