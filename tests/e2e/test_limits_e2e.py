"""Size limits of a real ``searchport serve`` process: each a clear 4xx, never a 5xx."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.e2e.conftest import Server, sample_config


def test_a_long_query_string_is_a_414_even_before_auth_is_fine(
    server_factory: Callable[..., Server],
) -> None:
    server = server_factory(sample_config(
        extra_top="apiKey: limit-key\nlimits: {maxQueryBytes: 2048}"))
    auth = {"Authorization": "Bearer limit-key"}
    fits = server.client.get("/cities/search", params={"q": "x" * 1500}, headers=auth)
    assert fits.status_code == 200
    too_long = server.client.get("/cities/search", params={"q": "x" * 2100}, headers=auth)
    assert too_long.status_code == 414
    assert too_long.json() == {"error": "The query string is longer than 2048 bytes; send "
                                        "fewer or shorter parameters"}
    # auth first: without a token the same request is a 401
    assert server.client.get("/cities/search", params={"q": "x" * 2100}).status_code == 401


def test_a_histogram_with_far_too_many_buckets_is_a_400(server: Server) -> None:
    response = server.client.get("/cities/search", params={
        "histogram": '{"population": 1}', "perPage": "1"})
    assert response.status_code == 400, response.text
    assert "too many buckets" in response.json()["error"]
    assert "Limit" not in response.json()["error"]  # no engine internals
    fine = server.client.get("/cities/search", params={
        "histogram": '{"population": 1000000}', "perPage": "1"})
    assert fine.status_code == 200


@pytest.mark.parametrize("path", ["/cities/query", "/1/indexes/cities/query",
                                  "/1/indexes/*/queries", "/cities/instantsearch",
                                  "/1/indexes/*/objects", "/1/indexes/cities/browse"])
def test_after_a_413_the_client_goes_on(server: Server, path: str) -> None:
    """The unread rest of a too-large body leaves the connection unusable: the 413 says
    ``Connection: close``, so a client keeping connections alive opens a new one instead of
    losing its next request (before, the Algolia routes' next request was cut off)."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for _ in range(3):
            refused = client.post(path, content=b"{" + b" " * 70_000 + b"}")
            assert refused.status_code == 413, refused.text
            assert refused.headers["connection"] == "close"
            assert refused.json()["error"] == "The request body is too large"
            after = client.post("/cities/query", json={"query": "*", "limit": 1})
            assert after.status_code == 200 and after.json()["count"] >= 1
