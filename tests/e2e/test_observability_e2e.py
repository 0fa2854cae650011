"""The access log and /metrics of a real ``searchport serve`` process."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.e2e.conftest import Server, sample_config


def access_records(server: Server, request_id: str, timeout: float = 5.0) -> list[dict[str, Any]]:
    """The JSON access lines of ``request_id`` in the server's output (waits for the write)."""
    deadline = time.monotonic() + timeout
    while True:
        found = []
        for line in server.output().splitlines():
            if line.startswith("{") and f'"{request_id}"' in line:
                found.append(json.loads(line))
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_each_request_is_one_json_line_on_stdout(server: Server) -> None:
    answer = server.client.get("/cities/search", params={"q": "private words"},
                               headers={"X-Request-ID": "e2e-log-1"})
    assert answer.status_code == 200
    (record,) = access_records(server, "e2e-log-1")
    assert record["route"] == "/{handle}/search" and record["handle"] == "cities"
    assert record["status"] == 200 and record["method"] == "GET"
    assert record["ms"] > 0 and 0 <= record["engineMs"] <= record["ms"]
    assert "private" not in server.output()


def test_metrics_count_what_was_served(server_factory: Callable[..., Server]) -> None:
    server = server_factory(sample_config(extra_top="apiKey: metrics-key"))
    auth = {"Authorization": "Bearer metrics-key"}
    for _ in range(2):
        assert server.client.get("/cities/search", headers=auth).status_code == 200
    assert server.client.get("/metrics").status_code == 401
    body = server.client.get("/metrics", headers=auth).text
    line = 'searchport_requests_total{method="GET",route="/{handle}/search",status="200"} 2.0'
    assert line in body.splitlines()
    assert 'searchport_engine_duration_seconds_count{handle="cities",operation="search"} 2.0' in (
        body.splitlines())
    assert "metrics-key" not in body
