"""Size limits of a real ``searchport serve`` process: each a clear 4xx, never a 5xx."""

from __future__ import annotations

from collections.abc import Callable

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
