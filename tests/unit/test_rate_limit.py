"""Rate limiting: the GCRA rule against an independent sliding-window count, the memory
store's bounds, and the 429s of the real app over fakes."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from searchport.adapters.rate_limit.memory import MemoryRateLimitStore
from searchport.domain.config import RateLimitConfig, RateRule
from searchport.domain.rate_limit import gcra
from searchport.entrypoints.http.app import create_app
from searchport.ports.rate_limit import RateLimitStore
from tests.fakes import fake_container
from tests.unit.test_http_contract import KEY, OTHER_KEY, config, engine

# ------------------------------------------------------------------------- the rule


def replay(times: list[float], limit: int, window: float) -> list[bool]:
    tat: float | None = None
    allowed = []
    for now in times:
        verdict = gcra(tat, now, limit, window)
        if verdict.allowed:
            tat = verdict.tat
        allowed.append(verdict.allowed)
    return allowed


arrivals = st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=60).map(sorted)


@settings(max_examples=300)
@given(times=arrivals, limit=st.integers(1, 10), window=st.floats(0.5, 30))
def test_never_more_than_the_bucket_allows(times: list[float], limit: int,
                                           window: float) -> None:
    accepted = [t for t, ok in zip(times, replay(times, limit, window), strict=True) if ok]
    rate = limit / window
    # an independent count over every span between two accepted requests (a token bucket of
    # ``limit`` refilled at ``rate``): never more than the burst plus what the span refilled
    for i, start in enumerate(accepted):
        for j in range(i, len(accepted)):
            span = accepted[j] - start
            assert j - i + 1 <= limit + math.floor(span * rate + 1e-9)


@given(limit=st.integers(1, 20), window=st.floats(0.5, 30), n=st.integers(1, 200))
def test_a_client_at_the_allowed_rate_is_never_refused(limit: int, window: float,
                                                       n: int) -> None:
    interval = window / limit
    assert all(replay([i * interval for i in range(n)], limit, window))


def test_a_burst_of_limit_then_a_wait_of_one_interval() -> None:
    assert replay([0.0] * 5, limit=3, window=6) == [True, True, True, False, False]
    verdict = gcra(6.0, 0.0, 3, 6)  # three requests at 0 left the TAT at 6
    assert not verdict.allowed and verdict.retry_after == pytest.approx(2.0)
    assert replay([0, 0, 0, 2.0], limit=3, window=6)[-1] is True


# ------------------------------------------------------------------------- the store


def test_memory_store_keeps_at_most_max_keys_and_forgets_the_oldest() -> None:
    now = [0.0]
    store = MemoryRateLimitStore(max_keys=3, clock=lambda: now[0])

    async def run() -> list[float]:
        waits = [await store.hit(f"k{i}", 1, 60) for i in range(5)]
        waits.append(await store.hit("k4", 1, 60))  # still known: refused
        waits.append(await store.hit("k0", 1, 60))  # evicted: starts over
        return waits

    waits = asyncio.run(run())
    assert waits[:5] == [0.0] * 5
    assert waits[5] == pytest.approx(60.0)
    assert waits[6] == 0.0
    assert len(store) == 3


def test_memory_store_conforms_to_the_port() -> None:
    store: RateLimitStore = MemoryRateLimitStore()
    assert asyncio.run(store.hit("a", 1, 1)) == 0.0


# ------------------------------------------------------------------------- over HTTP


@contextmanager
def limited(**rules: Any) -> Iterator[TestClient[Any]]:
    settings_ = config(rate_limit=RateLimitConfig(**rules), api_key=[KEY, OTHER_KEY])
    engines = {handle: engine() for handle in settings_.indexes}
    with TestClient(create_app(fake_container(settings_, engines))) as client:
        yield client


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_per_ip_limit_answers_429_with_retry_after() -> None:
    with limited(per_ip=RateRule(limit=3, window=60)) as client:
        statuses = [client.get("/cities/search", headers=bearer(KEY)).status_code
                    for _ in range(4)]
        refused = client.get("/cities/search", headers=bearer(KEY))
        health = client.get("/health")
        metrics = client.get("/metrics", headers=bearer(KEY))
    assert statuses == [200, 200, 200, 429]
    assert refused.status_code == 429
    assert refused.json()["error"].startswith("Too many requests")
    assert 1 <= int(refused.headers["retry-after"]) <= 20  # one interval: 60 s / 3
    assert refused.headers["cache-control"] == "no-store"
    assert refused.headers["x-request-id"]
    assert health.status_code == 200  # never limited
    assert metrics.status_code == 200


def test_a_client_guessing_keys_is_limited_before_auth() -> None:
    with limited(per_ip=RateRule(limit=2, window=60)) as client:
        statuses = [client.get("/cities/search", headers=bearer(f"guess-{i}")).status_code
                    for i in range(4)]
    assert statuses == [401, 401, 429, 429]


def test_per_token_limits_each_token_alone() -> None:
    with limited(per_token=RateRule(limit=2, window=60)) as client:
        first = [client.get("/cities/search", headers=bearer(KEY)).status_code for _ in range(3)]
        other = client.get("/cities/search", headers=bearer(OTHER_KEY)).status_code
    assert first == [200, 200, 429]
    assert other == 200


def test_forwarded_for_counts_only_when_trusted() -> None:
    def statuses(trust: bool) -> list[int]:
        with limited(per_ip=RateRule(limit=1, window=60), trust_forwarded_for=trust) as client:
            return [client.get("/cities/search", headers={
                **bearer(KEY), "X-Forwarded-For": f"198.51.100.{i}, 10.0.0.{i}"}).status_code
                for i in range(3)]

    assert statuses(trust=True) == [200, 200, 200]  # three clients behind the proxy
    assert statuses(trust=False) == [200, 429, 429]  # one peer; the header is not believed


def test_no_rule_means_no_limit() -> None:
    with limited() as client:
        assert {client.get("/cities/search", headers=bearer(KEY)).status_code
                for _ in range(30)} == {200}


def test_429_is_in_the_openapi_description() -> None:
    with limited() as client:
        text = client.get("/openapi/json").json()["info"]["description"]
    assert "429" in text

