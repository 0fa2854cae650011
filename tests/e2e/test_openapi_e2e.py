"""Against a real ``searchport serve``: every error answer its OpenAPI document shows is
provoked, and the body the route sends is the documented example, word for word; and bad
parameters and bodies on every route are a 4xx ``{"error": ...}``, never Litestar's own
``{status_code, detail, extra}`` nor a 5xx."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, sample_config

CONCRETE = {"{handle}": "cities", "{field}": "country", "{facet}": "country",
            "{doc_id}": "1796236", "{object_id}": "1796236", "{attribute}": "region"}
EVENT = {"eventType": "click", "eventName": "Hit Clicked", "index": "products",
         "userToken": "u", "objectIDs": ["1"]}
METHODS = ("get", "post")
# the 400 each route answers to a request a client can get wrong
BAD_INPUT: dict[str, tuple[str, str, Any]] = {
    "/{handle}/search": ("get", "/cities/search?filters=%7B", None),
    "/{handle}/facets/{field}": ("get", "/cities/facets/country?filters=%7B", None),
    "/{handle}/autocomplete": ("get", "/cities/autocomplete?perPage=abc", None),
    "/{handle}/query": ("post", "/cities/query", b"x"),
    "/1/indexes/*/queries": ("post", "/1/indexes/*/queries",
                             {"requests": [{"indexName": "cities", "hitsPerPage": "x"}]}),
    "/1/indexes/{handle}/query": ("post", "/1/indexes/cities/query", {"hitsPerPage": "x"}),
    "/1/indexes/{handle}": ("get", "/1/indexes/cities?hitsPerPage=x", None),
    "/1/indexes/{handle}/facets/{facet}/query": (
        "post", "/1/indexes/cities/facets/country/query", {"facetQuery": 1}),
    "/{handle}/instantsearch": ("post", "/cities/instantsearch",
                                {"requests": [{"hitsPerPage": "x"}]}),
    "/1/indexes/{handle}/{object_id}": ("get", "/1/indexes/cities/1796236?attributesToRetrieve=[",
                                        None),
    "/1/indexes/*/objects": ("post", "/1/indexes/*/objects", {"requests": 1}),
    "/1/indexes/*/recommendations": ("post", "/1/indexes/*/recommendations", {"requests": 1}),
    # the sample handle has no semantic section: the 400 that names it
    "/{handle}/documents/{doc_id}/similar": ("get", "/cities/documents/1796236/similar", None),
    "/1/indexes/{handle}/browse": ("get", "/1/indexes/cities/browse?cursor=zz", None),
    "/1/indexes/{handle}/rules/search": ("post", "/1/indexes/cities/rules/search",
                                         {"hitsPerPage": 0}),
}
# the Analytics API: a limit out of its bounds (the status route: no index)
BAD_INPUT.update({
    path: ("get", f"{concrete_path}?index=cities&limit=0", None)
    for path, concrete_path in (
        (p, p.replace("{attribute}", "region")) for p in (
            "/2/searches", "/2/searches/count", "/2/searches/noResults", "/2/searches/noClicks",
            "/2/searches/noResultRate", "/2/searches/noClickRate",
            "/2/clicks/clickThroughRate", "/2/clicks/averageClickPosition",
            "/2/clicks/positions", "/2/conversions/conversionRate", "/2/hits",
            "/2/users/count", "/2/filters", "/2/filters/noResults", "/2/filters/{attribute}"))
})
BAD_INPUT["/2/status"] = ("get", "/2/status", None)
# a missing record instead of a missing handle
MISSING = {"/{handle}/documents/{doc_id}": "/cities/documents/nope",
           "/1/indexes/{handle}/{object_id}": "/1/indexes/cities/nope"}
# answers only a server engine gives (their sentences are checked against the adapters in
# tests/unit/test_openapi_document.py)
ENGINE_ONLY = {502, 504}
ENGINE_REFUSALS = {("/{handle}/documents/{doc_id}", 400), ("/{handle}/mapping", 400)}


def concrete(path: str, handle: str = "cities") -> str:
    for name, value in CONCRETE.items():
        path = path.replace(name, handle if name == "{handle}" else value)
    return path


def body_for(path: str, handle: str) -> Any:
    if path == "/1/events":
        return {"events": [{**EVENT, "index": handle}]}
    if path == "/1/indexes/*/queries":
        return {"requests": [{"indexName": handle}]}
    if path == "/{handle}/instantsearch":
        return {"requests": [{"params": "query=paris"}]}
    if path == "/1/indexes/*/objects":
        return {"requests": [{"indexName": handle, "objectID": "1796236"}]}
    if path == "/1/indexes/*/recommendations":
        return {"requests": [{"indexName": handle, "model": "looking-similar",
                              "objectID": "1796236", "threshold": 0}]}
    return {}


def send(client: httpx.Client, method: str, url: str, body: Any = None,
         **kw: Any) -> httpx.Response:
    if method == "get":
        return client.get(url, **kw)
    if isinstance(body, bytes):
        return client.post(url, content=body, **kw)
    return client.post(url, json=body, **kw)


@pytest.fixture(scope="module")
def servers(server: Server, secured: Server,
            server_factory: Callable[..., Server]) -> dict[str, Server]:
    return {
        "open": server,
        "secured": secured,
        "locked": server_factory(sample_config(extra_index="    rawQuery: false\n")),
        "limited": server_factory(sample_config(
            extra_top="rateLimit:\n  perIp: { limit: 1, window: 3 }\n")),
        "reader": server_factory(sample_config(
            extra_top=f"keys:\n  reader:\n    key: {READER}\n    handles: [cities]\n")),
    }


def documented_errors(doc: dict[str, Any]) -> Iterator[tuple[str, str, int, Any]]:
    for path, item in doc["paths"].items():
        for method in METHODS:
            for code, answer in item.get(method, {}).get("responses", {}).items():
                if int(code) >= 400:
                    example = next(iter(answer["content"]["application/json"]["examples"]
                                        .values()))
                    yield path, method, int(code), example["value"]


def until_limited(server: Server, method: str, url: str, body: Any,
                  expected: Any) -> httpx.Response:
    """The 429 of the limited server, the moment its bucket has just been emptied (the
    wait it names shrinks as the bucket refills)."""
    deadline = time.monotonic() + 15
    while True:
        answer = send(server.client, method, url, body)
        if answer.status_code == 429 and answer.json() == expected:
            return answer
        if time.monotonic() > deadline:
            return answer


READER = "reader-key"  # a named key that reads cities, and no analytics


def provoke(servers: dict[str, Server], path: str, method: str,
            code: int, expected: Any) -> httpx.Response | None:
    url, body = concrete(path), body_for(path, "cities")
    analytics = path.startswith("/2/")
    if analytics and code == 403:
        return servers["reader"].client.get(url, params={"index": "cities"},
                                            headers={"Authorization": f"Bearer {READER}"})
    if analytics and code == 404:
        return servers["open"].client.get(url, params={"index": "products"})
    if path == "/1/events" and code == 403:
        return servers["reader"].client.post(url, json=body_for(path, "products"),
                                             headers={"Authorization": f"Bearer {READER}"})
    if path == "/1/events" and code == 422:
        return servers["open"].client.post(url, json={"events": []})
    if path == "/1/events" and code == 413:
        return servers["open"].client.post(url, content=b"{" + b" " * 2_200_000 + b"}")
    if code == 400 and path in BAD_INPUT:
        method, url, body = BAD_INPUT[path]
        return send(servers["open"].client, method, url, body)
    if code == 401:
        return send(servers["secured"].client, method, url, body)
    if code == 403:
        return send(servers["locked"].client, method, url, body)
    if code == 404:
        url = MISSING.get(path) or concrete(path, "products")
        return send(servers["open"].client, method, url, body_for(path, "products"))
    if code == 413:
        return send(servers["open"].client, method, url, b"{" + b" " * 70_000 + b"}")
    if code == 414:
        separator = "&" if "?" in url else "?"
        return send(servers["open"].client, method, f"{url}{separator}x={'a' * 17_000}", body)
    if code == 429:
        return until_limited(servers["limited"], method, url, body, expected)
    return None


def test_every_documented_error_is_the_body_the_route_sends(
    servers: dict[str, Server],
) -> None:
    doc = servers["open"].client.get("/openapi/json").json()
    checked, unprovoked = 0, set()
    for path, method, code, expected in documented_errors(doc):
        answer = provoke(servers, path, method, code, expected)
        if answer is None:
            unprovoked.add((path, code))
            continue
        assert answer.status_code == code, (method, path, answer.text)
        assert answer.json() == expected, (method, path, code)
        checked += 1
    assert checked >= 80
    assert {(p, c) for p, c in unprovoked if c not in ENGINE_ONLY} == ENGINE_REFUSALS


BAD_VALUES = ["abc", "-1", "{", "[]", '{"x":1}', "a" * 3000, "1e999", "\u00e9\u0000"]
BAD_BODIES = [b"{", b"[]", b"null", b"", b'{"requests": "x"}', b'{"params": 1}',
              b'{"query": 1}', b'{"requests": [{"indexName": 1}]}']


def test_bad_parameters_and_bodies_are_clear_4xx_errors(server: Server) -> None:
    doc = server.client.get("/openapi/json").json()
    sent = 0
    for path, item in doc["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None or path == "/metrics":
                continue
            url = concrete(path)
            names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "query"]
            attempts = [(url, {name: value}, None) for name in names for value in BAD_VALUES]
            if method == "post":
                attempts += [(url, {}, body) for body in BAD_BODIES]
            for target, params, body in attempts:
                answer = (server.client.get(target, params=params) if method == "get" else
                          server.client.post(target, params=params, content=body or b""))
                sent += 1
                assert answer.status_code < 500, (method, target, params, body, answer.text)
                if answer.status_code >= 400 and path == "/1/events":  # Insights' own shape
                    error = answer.json()
                    assert set(error) == {"status", "message"} and error["message"], error
                    assert error["status"] == answer.status_code
                elif answer.status_code >= 400:
                    error = answer.json()
                    assert isinstance(error.get("error"), str) and error["error"], error
                    assert not {"status_code", "detail", "extra"} & set(error), error
    assert sent > 200
