"""The one request pipeline (``RequestContext`` -> Litestar: CORS, routing, the guards as
middleware, its response cache, its compression, the handler), on the two requests it
serves most cheaply: the raw query (``POST /{handle}/query``) and a GET whose whole answer
Litestar's response cache keeps in this process.

Expected statuses, bodies and headers are written out here; an answer served from the
kept copy must equal, byte for byte and header for header (but the per-request id and
timing), the answer that was computed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest
from dependency_injector import providers
from litestar.testing import TestClient

from searchport.adapters.cache.memory import MemoryCache
from searchport.adapters.observed import ObservedCache
from searchport.domain.config import (
    AnalyticsConfig,
    Config,
    IndexCacheConfig,
    IndexConfig,
    LimitsConfig,
    RateLimitConfig,
    RateRule,
)
from searchport.domain.errors import EngineUnavailable
from searchport.domain.query import Filter
from searchport.entrypoints.container import Container
from searchport.entrypoints.http.app import create_app
from searchport.entrypoints.http.request_context import RequestContext
from tests.fakes import EchoEngine, FakeCache, FakeEngine, fake_container

PER_REQUEST = {"x-request-id", "server-timing"}
JSON_ERROR = {"content-type": "application/json", "cache-control": "no-store"}
INTERNAL = "Internal server error; quote the request id when reporting it"


class RawFailing(FakeEngine):
    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    async def raw_query(self, body: dict[str, Any], filters: tuple[Filter, ...] = ()) -> bytes:
        raise self.error


def settings(**extra: Any) -> Config:
    index = IndexConfig(engine="tantivy", path="unused")
    closed = IndexConfig(engine="tantivy", path="unused", raw_query=False)
    return Config(indexes={"cities": index, "closed": closed, "broken": index, "down": index},
                  **extra)


@contextmanager
def served(config: Config | None = None) -> Iterator[TestClient[Any]]:
    engines = {"cities": FakeEngine(), "closed": FakeEngine(),
               "broken": RawFailing(RuntimeError("a bug")),
               "down": RawFailing(EngineUnavailable("The search engine is unavailable"))}
    with TestClient(create_app(fake_container(config or settings(), engines))) as client:
        yield client


def has_headers(response: Any, expected: dict[str, str]) -> None:
    for name, value in expected.items():
        assert response.headers.get(name) == value, (name, response.headers)


@pytest.mark.parametrize(("path", "body", "status", "error"), [
    ("/cities/query", b'{"bad": true}', 400, "the engine rejected the query: bad"),
    ("/cities/query", b"[1, 2]", 400, "The request body must be a JSON object"),
    ("/cities/query", b"{", 400, "The request body must be a JSON object"),
    ("/cities/query", b"", 400, "The request body must be a JSON object"),
    ("/closed/query", b"{}", 403, "The raw query endpoint is turned off for this index"),
    ("/down/query", b"{}", 502, "The search engine is unavailable"),
])
def test_raw_query_errors(path: str, body: bytes, status: int, error: str) -> None:
    with served() as client:
        response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == status, response.text
    assert response.json()["error"] == error
    has_headers(response, JSON_ERROR)
    assert response.headers["x-request-id"]
    assert response.headers["server-timing"].startswith("engine;dur=")


def test_raw_query_500_quotes_the_request_id() -> None:
    with served() as client:
        response = client.post("/broken/query", content=b"{}")
    assert response.status_code == 500
    assert response.json() == {"error": INTERNAL, "requestId": response.headers["x-request-id"]}
    has_headers(response, JSON_ERROR)


def test_the_raw_answer_is_the_engines_bytes() -> None:
    with served() as client:
        response = client.post("/cities/query", content=b'{"size": 3}')
    assert response.status_code == 200
    assert response.content == msgspec.json.encode({"echo": {"size": 3}})
    assert response.headers["content-type"] == "application/json"
    assert "cache-control" not in response.headers  # a POST answer is not for caches
    assert "etag" not in response.headers


def test_a_raw_answer_is_compressed_like_any_answer() -> None:
    body = msgspec.json.encode({"query": "x" * 4000})
    with served() as client:
        response = client.post("/cities/query", content=body, headers={"Accept-Encoding": "gzip"})
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["vary"] == "Accept-Encoding"
    assert response.json() == {"echo": {"query": "x" * 4000}}


def test_413_on_a_large_body() -> None:
    with served(settings(limits=LimitsConfig(max_body_bytes=1024))) as client:
        response = client.post("/cities/query", content=b'{"q":"' + b"x" * 1100 + b'"}')
        chunked = client.post("/cities/query", content=iter([b'{"q":"', b"x" * 1100, b'"}']))
        fits = client.post("/cities/query", content=iter([b'{"size":', b" 5}"]))
    for refused in (response, chunked):
        assert refused.status_code == 413
        assert refused.json() == {"error": "The request body is too large"}
        has_headers(refused, JSON_ERROR)
    assert fits.json() == {"echo": {"size": 5}}  # a body sent in chunks is joined


def test_414_401_and_429_from_the_guards() -> None:
    with served(settings(limits=LimitsConfig(max_query_bytes=1024))) as client:
        response = client.post("/cities/query?" + "x" * 1100, content=b"{}")
    assert response.status_code == 414
    assert response.json() == {"error": "The query string is longer than 1024 bytes; send "
                               "fewer or shorter parameters"}
    has_headers(response, JSON_ERROR)

    with served(settings(api_key="k-1")) as client:
        refused = client.post("/cities/query", content=b"{}")
        allowed = client.post("/cities/query", content=b"{}",
                              headers={"Authorization": "Bearer k-1"})
    assert refused.status_code == 401
    assert refused.json() == {"error": "Unauthorized"}
    has_headers(refused, {**JSON_ERROR, "www-authenticate": 'Bearer realm="searchport"'})
    assert allowed.status_code == 200

    limited = settings(rate_limit=RateLimitConfig(per_ip=RateRule(limit=2, window=60)))
    with served(limited) as client:
        statuses = [client.post("/cities/query", content=b"{}").status_code for _ in range(3)]
        refused = client.post("/cities/query", content=b"{}")
    assert statuses == [200, 200, 429]  # each request counted once
    assert refused.json()["error"].startswith("Too many requests: try again in ")
    has_headers(refused, JSON_ERROR)
    assert int(refused.headers["retry-after"]) >= 1


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/cities/query", 405),
    ("POST", "/nope/query", 404),  # not a configured handle
    ("POST", "/cities/query/", 200),  # Litestar's own path rules
    ("POST", "/cities/search", 405),
])
def test_litestar_routes_the_raw_query(method: str, path: str, status: int) -> None:
    with served() as client:
        response = client.request(method, path, content=b"{}")
    assert response.status_code == status


def test_counted_under_the_routes_template() -> None:
    with served() as client:
        client.post("/cities/query", content=b"{}")
        metrics = client.get("/metrics").text
    assert ('searchport_requests_total{method="POST",route="/{handle}/query",'
            'status="200"} 1.0') in metrics


# ------------------------------------------------------------- answers kept in the process


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountedCache(ObservedCache):
    """Counts the response cache's lookups: a whole answer Litestar kept makes none."""

    gets = 0

    async def get(self, key: str) -> bytes | None:
        self.gets += 1
        return await super().get(key)


def cached_settings(**extra: Any) -> Config:
    """Whole answers kept in the process: analytics off (with it on, search and autocomplete
    answers are never kept whole, see test_logged_searches_are_never_kept_whole)."""
    index = IndexConfig(engine="tantivy", path="unused",
                        cache=IndexCacheConfig(search_ttl=30, documents=True))
    extra.setdefault("analytics", AnalyticsConfig(backend="none"))
    return Config(indexes={"cities": index}, **extra)


class Cached:
    def __init__(self, client: TestClient[Any], engine: EchoEngine, clock: Clock,
                 cache: CountedCache, app: RequestContext, container: Container) -> None:
        self.client, self.engine, self.clock, self.cache = client, engine, clock, cache
        self.app, self.container = app, container


@contextmanager
def cached(config: Config | None = None, tier: Any = None) -> Iterator[Cached]:
    """An app over an EchoEngine (an answer spells out its query, so an answer served for the
    wrong URL shows) and a memory cache on a clock the test moves."""
    clock, engine = Clock(), EchoEngine()
    container = fake_container(config or cached_settings(), {"cities": engine})
    if tier is None:  # the memory backend: the cache is its own tier in the process
        tier = MemoryCache(clock=clock)
        container.process_tier.override(providers.Object(tier))
    else:  # a shared cache alone (Redis with localTtl 0): no tier in the process
        container.process_tier.override(providers.Object(None))
    cache = CountedCache(tier, container.cache_lookups())
    container.cache.override(providers.Object(cache))
    app = create_app(container)
    with TestClient(app) as client:
        yield Cached(client, engine, clock, cache, app, container)


CACHED_GETS = [
    "/cities/search?q=paris&page=2",
    "/cities/search?q=paris&page=3",
    "/cities/autocomplete?q=par",
    "/cities/facets/region?q=eu",
    "/cities/documents/a%2Fb",
    "/cities/mapping",
]


def same_answer(kept: Any, computed: Any) -> None:
    assert kept.status_code == computed.status_code, (kept.text, computed.text)
    assert kept.content == computed.content
    assert ({k: v for k, v in kept.headers.items() if k not in PER_REQUEST}
            == {k: v for k, v in computed.headers.items() if k not in PER_REQUEST})
    assert kept.headers["x-request-id"] != computed.headers["x-request-id"]
    assert kept.headers["server-timing"].startswith("engine;dur=")


@pytest.mark.parametrize("path", CACHED_GETS)
def test_a_kept_answer_is_the_computed_answer(path: str) -> None:
    with cached() as app:
        first = app.client.get(path)
        calls, gets = len(app.engine.queries), app.cache.gets
        again = app.client.get(path)
        assert (len(app.engine.queries), app.cache.gets) == (calls, gets)  # Litestar's copy
    assert first.status_code == 200
    same_answer(again, first)
    assert again.headers["cache-control"] == "public, max-age=10, stale-while-revalidate=50"


def test_logged_searches_are_never_kept_whole() -> None:
    """With analytics on, a repeated search is answered by the route (so it is logged, and a
    queryID is never served twice); the other GET routes are still kept whole."""
    with cached(cached_settings(analytics=AnalyticsConfig(backend="sqlite"))) as app:
        store = app.container.analytics_store()
        for path in CACHED_GETS:
            app.client.get(path)
        gets = app.cache.gets
        for path in CACHED_GETS:
            app.client.get(path)
        assert app.cache.gets == gets + 3  # two searches and an autocomplete asked again
        tracked = [app.client.get("/cities/search?q=x&clickAnalytics=true").json()["queryID"]
                   for _ in range(2)]
        assert tracked[0] != tracked[1]
    # written on the app's shutdown: four searches, two autocompletes, the two tracked
    assert [s.query_id for s in store.searches] == [None] * 6 + tracked


def test_each_url_gets_its_own_answer() -> None:
    with cached() as app:
        firsts = [app.client.get(path).content for path in CACHED_GETS[:4]]
        again = [app.client.get(path).content for path in CACHED_GETS[:4]]
    assert again == firsts
    assert len(set(firsts)) == 4


@pytest.mark.parametrize("named", ["{etag}", "W/{etag}", '"other", {etag}', "*"])
def test_304_kept_like_the_200(named: str) -> None:
    with cached() as app:
        etag = app.client.get(CACHED_GETS[0]).headers["etag"]
        headers = {"If-None-Match": named.format(etag=etag)}
        computed = app.client.get(CACHED_GETS[0], headers=headers)
        gets = app.cache.gets
        kept = app.client.get(CACHED_GETS[0], headers=headers)
        assert app.cache.gets == gets
    assert kept.status_code == computed.status_code == 304
    assert kept.content == b""
    assert kept.headers["etag"] == (f"W/{etag}" if named.startswith("W/") else etag)
    same_answer(kept, computed)


def test_kept_answers_are_compressed_and_private_with_a_key() -> None:
    with cached(cached_settings(api_key="k-1")) as app:
        key = {"Authorization": "Bearer k-1", "Accept-Encoding": "gzip"}
        first = app.client.get(CACHED_GETS[0], headers=key)
        kept = app.client.get(CACHED_GETS[0], headers=key)
        # a kept answer still needs the key: the guards run before Litestar's cache
        refused = app.client.get(CACHED_GETS[0])
        metrics = app.client.get("/metrics", headers=key).text
    assert kept.headers["cache-control"] == "private, max-age=10"
    assert kept.headers["vary"] == "Authorization, Accept-Encoding"
    same_answer(kept, first)
    assert refused.status_code == 401
    assert 'searchport_cache_lookups_total{result="hit"} 1.0' in metrics


def test_an_answer_kept_compressed_goes_only_to_clients_that_accept_it() -> None:
    long = "/cities/search?q=" + "paris" * 300  # the echoed query makes a body worth packing
    with cached() as app:
        packed = app.client.get(long, headers={"Accept-Encoding": "br"})
        kept = app.client.get(long, headers={"Accept-Encoding": "br"})
        gets = app.cache.gets
        plain = app.client.get(long, headers={"Accept-Encoding": "identity"})
        assert app.cache.gets == gets + 1  # not the copy kept compressed
        gzipped = app.client.get(long, headers={"Accept-Encoding": "gzip"})
    assert packed.headers["content-encoding"] == "br"
    same_answer(kept, packed)
    assert "content-encoding" not in plain.headers
    assert gzipped.headers["content-encoding"] == "gzip"
    assert plain.json() == packed.json() == gzipped.json()
    assert packed.headers["etag"] == gzipped.headers["etag"] == f"W/{plain.headers['etag']}"


def test_an_answer_kept_for_one_key_is_not_sent_for_another() -> None:
    with cached(cached_settings(api_key=["k-1", "k-2"])) as app:
        first = app.client.get(CACHED_GETS[0], headers={"Authorization": "Bearer k-1"})
        gets = app.cache.gets
        other = app.client.get(CACHED_GETS[0], headers={"Authorization": "Bearer k-2"})
        assert app.cache.gets == gets + 1  # not Litestar's copy: the response cache was asked
        again = app.client.get(CACHED_GETS[0], headers={"Authorization": "Bearer k-2"})
        assert app.cache.gets == gets + 1  # now k-2's own copy
    assert first.content == other.content == again.content


def test_an_expired_or_cleared_answer_goes_back_to_the_engine() -> None:
    with cached() as app:
        first = app.client.get(CACHED_GETS[0])
        assert len(app.engine.queries) == 1
        app.clock.now += 31  # past searchTtl: both copies are gone
        assert app.client.get(CACHED_GETS[0]).content == first.content
        assert len(app.engine.queries) == 2
        app.client.get(CACHED_GETS[0])
        assert len(app.engine.queries) == 2
        assert app.client.post("/cache/clear").status_code == 200
        assert app.client.get(CACHED_GETS[0]).content == first.content
        assert len(app.engine.queries) == 3


def test_a_kept_answer_meets_the_rate_limit_once() -> None:
    limited = cached_settings(rate_limit=RateLimitConfig(per_ip=RateRule(limit=2, window=600)))
    with cached(limited) as app:
        statuses = [app.client.get(CACHED_GETS[0]).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


@pytest.mark.parametrize("path", [
    "/cities/search?q=paris&page=abc",
    "/cities/search?q=paris&sort=%5Bbad",
])
def test_errors_are_never_kept(path: str) -> None:
    with cached() as app:
        for _ in range(2):
            assert app.client.get(path).status_code == 400
        assert app.client.get(CACHED_GETS[0]).status_code == 200


def test_with_no_tier_in_the_process_litestar_keeps_nothing() -> None:
    shared_only = FakeCache(status="connected")  # like Redis with localTtl 0
    with cached(tier=shared_only) as app:
        for _ in range(3):
            assert app.client.get(CACHED_GETS[0]).status_code == 200
        assert app.cache.gets == 3  # every request asked the response cache
    assert len(app.engine.queries) == 1  # still cached, by the shared tier


def test_the_access_log_says_hit_for_a_kept_answer() -> None:
    records: list[Any] = []
    with cached() as app:
        app.app.observers = (*app.app.observers, records.append)
        app.client.get(CACHED_GETS[0])
        app.client.get(CACHED_GETS[0])
    assert [r.cache for r in records] == ["miss", "hit"]


# ------------------------------------------------------------------------------------ CORS

CORS_CASES = [
    (["https://shop.example"], {"Origin": "https://shop.example"}, True),
    (["https://shop.example"], {"Origin": "https://evil.example"}, False),
    ("*", {"Origin": "https://any.example"}, None),  # "*"
    ("*", {"Origin": "https://any.example", "Cookie": "session=1"}, True),
]


def cors_origin(response: Any, headers: dict[str, str], allowed: bool | None) -> None:
    assert "access-control-allow-methods" in response.headers
    expected = {True: headers["Origin"], False: None, None: "*"}[allowed]
    assert response.headers.get("access-control-allow-origin") == expected
    if allowed:
        assert "Origin" in response.headers["vary"]


@pytest.mark.parametrize(("origins", "headers", "allowed"), CORS_CASES)
def test_cors_headers_on_every_answer(origins: Any, headers: dict[str, str],
                                      allowed: bool | None) -> None:
    with served(settings(cors_origins=origins)) as client:
        for body in (b'{"size": 1}', b"{"):
            cors_origin(client.post("/cities/query", content=body, headers=headers), headers,
                        allowed)

    key = {"Authorization": "Bearer k-1"}
    with cached(cached_settings(cors_origins=origins, api_key="k-1")) as app:
        first = app.client.get(CACHED_GETS[0], headers={**headers, **key})
        answers = [
            app.client.get(CACHED_GETS[0], headers={**headers, **key}),
            app.client.get(CACHED_GETS[0],
                           headers={**headers, **key, "If-None-Match": first.headers["etag"]}),
            app.client.get(CACHED_GETS[0], headers=headers),  # no key: the guard's 401
        ]
        preflight = app.client.options(CACHED_GETS[0], headers={
            **headers, "Access-Control-Request-Method": "GET"})
    assert [answer.status_code for answer in answers] == [200, 304, 401]
    same_answer(answers[0], first)
    for answer in (first, *answers):
        cors_origin(answer, headers, allowed)
    assert preflight.status_code == (204 if allowed is not False else 400)
