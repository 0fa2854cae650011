"""HTTP caching over fakes of the ports: ETag, 304 on If-None-Match, Cache-Control, Vary,
and cached answers served as the stored bytes."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from searchport.domain.config import IndexCacheConfig
from tests.fakes import EchoEngine, FakeCache
from tests.unit.test_http_contract import KEY, PUBLIC, bearer, config, index, serve

CACHEABLE = ["/cities/search?q=city", "/cities/facets/region?q=eu", "/cities/autocomplete?q=ci",
             "/cities/documents/1", "/cities/mapping"]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Any]]:
    with serve() as opened:
        yield opened


@pytest.fixture(scope="module")
def locked() -> Iterator[TestClient[Any]]:
    with serve(config(api_key=KEY)) as opened:
        yield opened


def strong_etag(body: bytes) -> str:
    """The body's length and CRC-32, in hex."""
    return f'"{len(body):x}-{zlib.crc32(body):08x}"'


@pytest.mark.parametrize("path", CACHEABLE)
def test_cacheable_answers_carry_a_strong_etag_of_their_bytes(
    client: TestClient[Any], path: str
) -> None:
    response = client.get(path, headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200
    assert response.headers["etag"] == strong_etag(response.content)
    assert response.headers["cache-control"] == PUBLIC
    again = client.get(path, headers={"Accept-Encoding": "identity"})
    assert again.headers["etag"] == response.headers["etag"]


@pytest.mark.parametrize("path", CACHEABLE)
def test_if_none_match_gives_a_304_without_a_body(client: TestClient[Any], path: str) -> None:
    first = client.get(path, headers={"Accept-Encoding": "identity"})
    etag = first.headers["etag"]
    for sent in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        response = client.get(path, headers={"If-None-Match": sent,
                                             "Accept-Encoding": "identity"})
        assert response.status_code == 304, sent
        assert response.content == b""
        assert response.headers["etag"] in (etag, f"W/{etag}")
        assert response.headers["cache-control"] == PUBLIC
        assert "Accept-Encoding" in response.headers["vary"]


def test_a_stale_etag_gets_the_full_answer(client: TestClient[Any]) -> None:
    response = client.get("/cities/search", headers={"If-None-Match": '"not-this-one"'})
    assert response.status_code == 200 and response.json()["totalHits"] == 42


@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_a_compressed_answer_has_a_weak_etag_that_still_matches(
    client: TestClient[Any], encoding: str
) -> None:
    plain = client.get("/cities/search", headers={"Accept-Encoding": "identity"})
    packed = client.get("/cities/search", headers={"Accept-Encoding": encoding})
    assert packed.headers["content-encoding"] == encoding
    assert packed.headers["etag"] == f"W/{plain.headers['etag']}"
    again = client.get("/cities/search", headers={"Accept-Encoding": encoding,
                                                  "If-None-Match": packed.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/cities/query"), ("GET", "/nope/search"), ("GET", "/cities/documents/404"),
    ("GET", "/cities/search?page=x"), ("GET", "/health"), ("GET", "/indexes"),
])
def test_no_etag_and_no_shared_caching_elsewhere(
    client: TestClient[Any], method: str, path: str
) -> None:
    response = client.request(method, path, content=b"{}", headers={"If-None-Match": "*"})
    assert response.status_code != 304
    assert "etag" not in response.headers
    assert "public" not in response.headers.get("cache-control", "")


@pytest.mark.parametrize("path", CACHEABLE)
def test_with_a_key_answers_and_304s_are_private(locked: TestClient[Any], path: str) -> None:
    response = locked.get(path, headers=bearer())
    assert response.status_code == 200
    control = response.headers["cache-control"]
    assert control.startswith("private") and "public" not in control
    assert "Authorization" in response.headers["vary"]
    revalidated = locked.get(path, headers={**bearer(), "If-None-Match": response.headers["etag"]})
    assert revalidated.status_code == 304
    assert revalidated.headers["cache-control"] == control
    assert "Authorization" in revalidated.headers["vary"]


def test_with_a_key_a_matching_etag_without_token_is_still_401(locked: TestClient[Any]) -> None:
    etag = locked.get("/cities/search", headers=bearer()).headers["etag"]
    response = locked.get("/cities/search", headers={"If-None-Match": etag})
    assert response.status_code == 401 and "etag" not in response.headers


def test_a_cached_answer_is_the_same_bytes_and_skips_the_engine() -> None:
    echo = EchoEngine()
    settings = config(indexes={"cities": index()})
    with serve(settings, {"cities": echo}, FakeCache()) as opened:
        first = opened.get("/cities/search", params={"q": "x", "sort": '{"name":"asc"}'})
        second = opened.get("/cities/search", params={"q": "x", "sort": '{"name":"asc"}'})
        other = opened.get("/cities/search", params={"q": "x", "sort": '{"name":"desc"}'})
    assert first.status_code == second.status_code == other.status_code == 200
    assert second.content == first.content and second.headers["etag"] == first.headers["etag"]
    assert other.content != first.content
    assert len(echo.queries) == 2


def test_documents_are_cached_only_when_the_index_says_so() -> None:
    for documents, calls in ((False, 3), (True, 1)):
        echo = EchoEngine()
        settings = config(indexes={"cities": index(cache=IndexCacheConfig(documents=documents))})
        with serve(settings, {"cities": echo}, FakeCache()) as opened:
            bodies = {opened.get("/cities/documents/7").content for _ in range(3)}
        assert len(echo.queries) == calls
        assert len(bodies) == calls  # the echo engine counts its calls in the document


def test_health_reports_the_memory_cache() -> None:
    with serve(cache=FakeCache(status="memory")) as opened:
        assert opened.get("/health").json()["cache"] == "memory"
