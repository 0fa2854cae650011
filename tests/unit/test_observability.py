"""The access log and ``GET /metrics``, through the real app over fakes of the ports."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from searchport.domain.config import Config, MetricsConfig
from searchport.domain.errors import EngineTimeout
from searchport.entrypoints.http.app import create_app
from searchport.entrypoints.http.observability import AccessLog, RequestRecord
from tests.fakes import FailingEngine, FakeCache, FakeEngine, fake_container
from tests.unit.test_http_contract import KEY, config, engine

SEARCH_ROUTE = "/{handle}/search"


def sample(body: str, name: str, **labels: str) -> float | None:
    """The value of one sample in a Prometheus text exposition, None when absent."""
    for line in body.splitlines():
        if line.startswith("#") or not line.startswith(name + "{"):
            continue
        raw_labels, _, value = line[len(name) + 1:].rpartition("} ")
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', raw_labels))
        if found == labels:
            return float(value)
    return None


@pytest.fixture
def access_lines() -> Iterator[list[str]]:
    """The lines the access log writes during the test."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger("searchport.access")
    handler = Collect()
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)


def client_for(settings: Config, engines: dict[str, FakeEngine] | None = None,
               cache: FakeCache | None = None, **kw: Any) -> TestClient[Any]:
    engines = engines or {handle: engine() for handle in settings.indexes}
    return TestClient(create_app(fake_container(settings, engines, cache), **kw))


def test_requests_are_counted_by_route_template_and_status() -> None:
    with client_for(config(), cache=FakeCache(status="disabled")) as client:
        for _ in range(3):
            assert client.get("/cities/search", params={"q": "x"}).status_code == 200
        assert client.get("/cities/search", params={"page": "x"}).status_code == 400
        assert client.get("/no/such/route/at/all").status_code == 404
        body = client.get("/metrics").text
    assert sample(body, "searchport_requests_total",
                  route=SEARCH_ROUTE, method="GET", status="200") == 3
    assert sample(body, "searchport_requests_total",
                  route=SEARCH_ROUTE, method="GET", status="400") == 1
    assert sample(body, "searchport_requests_total",
                  route="unmatched", method="GET", status="404") == 1
    assert sample(body, "searchport_request_duration_seconds_count", route=SEARCH_ROUTE) == 4
    # the concrete path (with the handle typed by the client) is never a label value
    assert "/cities/search" not in body
    # with no cache configured there is no lookup to count
    assert "searchport_cache_lookups_total{" not in body


def test_engine_calls_and_errors_by_handle() -> None:
    engines = {"cities": engine(), "locked": FailingEngine(EngineTimeout("slow"))}
    with client_for(config(), engines) as client:
        assert client.get("/cities/search").status_code == 200
        assert client.get("/locked/search").status_code == 504
        assert client.get("/ghost/search").status_code == 404
        body = client.get("/metrics").text
    assert sample(body, "searchport_engine_duration_seconds_count",
                  handle="cities", operation="search") == 1
    assert sample(body, "searchport_engine_errors_total",
                  handle="locked", error="EngineTimeout") == 1
    assert sample(body, "searchport_engine_errors_total",
                  handle="cities", error="EngineTimeout") is None
    assert 'handle="ghost"' not in body


def test_cache_hits_and_misses_are_counted() -> None:
    cache = FakeCache(status="memory")
    with client_for(config(), cache=cache) as client:
        for _ in range(3):
            assert client.get("/cities/search", params={"q": "same"}).status_code == 200
        body = client.get("/metrics").text
    assert sample(body, "searchport_cache_lookups_total", result="miss") == 1
    assert sample(body, "searchport_cache_lookups_total", result="hit") == 2


def test_metrics_need_the_token_unless_public() -> None:
    with client_for(config(api_key=KEY)) as client:
        assert client.get("/metrics").status_code == 401
        answer = client.get("/metrics", headers={"Authorization": f"Bearer {KEY}"})
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/plain")
    with client_for(config(api_key=KEY, metrics=MetricsConfig(public=True))) as client:
        assert client.get("/metrics").status_code == 200
        assert client.get("/indexes").status_code == 401  # only /metrics was opened


def test_metrics_can_be_turned_off() -> None:
    with client_for(config(metrics=MetricsConfig(enabled=False))) as client:
        assert client.get("/metrics").status_code == 404


def test_one_json_access_line_per_request(access_lines: list[str]) -> None:
    cache = FakeCache(status="memory")
    with client_for(config(), cache=cache) as client:
        first = client.get("/cities/search", params={"q": "secret words"},
                           headers={"X-Request-ID": "req-1"})
        client.get("/cities/search", params={"q": "secret words"},
                   headers={"X-Request-ID": "req-2"})
        client.get("/nope/search", headers={"X-Request-ID": "req-3"})
    assert first.status_code == 200
    records = {r["requestId"]: r for r in map(json.loads, access_lines)}
    assert set(records) >= {"req-1", "req-2", "req-3"}
    one = records["req-1"]
    assert one["method"] == "GET" and one["route"] == SEARCH_ROUTE
    assert one["handle"] == "cities" and one["status"] == 200 and one["cache"] == "miss"
    assert one["ms"] >= one["engineMs"] >= 0
    assert records["req-2"]["cache"] == "hit" and records["req-2"]["engineMs"] == 0
    assert records["req-3"]["status"] == 404 and records["req-3"]["handle"] == "nope"
    # neither the query string nor any header is logged
    assert not any("secret" in line for line in access_lines)


def test_the_log_can_be_text_or_off(access_lines: list[str]) -> None:
    with client_for(config(), access_log="text") as client:
        client.get("/cities/search", headers={"X-Request-ID": "txt-1"})
    assert re.fullmatch(
        r"\d\d:\d\d:\d\d 200 GET /\{handle\}/search [\d.]+ ms \(engine [\d.]+ ms\) \[txt-1\]",
        access_lines[-1],
    )
    access_lines.clear()
    with client_for(config(access_log="off")) as client:
        client.get("/cities/search")
    assert access_lines == []


def test_a_failing_observer_never_fails_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: AccessLog, record: RequestRecord) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(AccessLog, "__call__", broken)
    with client_for(config()) as client:
        assert client.get("/cities/search").status_code == 200
