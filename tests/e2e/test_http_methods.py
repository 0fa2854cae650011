"""What a curious client tries past the documented calls, over real HTTP against a real
``searchport serve`` on the sample cities: ``HEAD`` on every ``GET`` route, Algolia's search
with its parameters in the URL, and the requests the HTTP server itself refuses before
searchport sees them (docs/errors.md says which, and why their answer has no body)."""

from __future__ import annotations

import json
import re
import secrets
import socket
import time
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from tests.e2e.conftest import Server

Rows = list[dict[str, Any]]
# what differs between two answers to the same GET: when and how long, and counters
PER_ANSWER = {"date", "x-request-id", "server-timing"}
# the routes not in the OpenAPI document, and one that is not a route at all
UNLISTED = ("/", "/ui", "/ui/analytics", "/ui/assets/app.js", "/openapi", "/openapi/json",
            "/no/such/route")


def get_routes(server: Server, rows: Rows) -> list[str]:
    """Every GET route of the OpenAPI document, its path parameters filled in, then the
    routes it leaves out."""
    document = server.client.get("/openapi/json").json()
    values = {"handle": "cities", "field": "country", "doc_id": rows[0]["id"],
              "object_id": rows[0]["id"], "attribute": "region"}
    paths = []
    for path, operations in document["paths"].items():
        if "get" not in operations:
            continue
        path = re.sub(r"\{(\w+)\}", lambda m: quote(str(values[m.group(1)])), path)
        paths.append(path + ("?index=cities" if path.startswith("/2/") else ""))
    assert len(paths) > 20
    return [*paths, *UNLISTED]


def test_head_answers_every_get_route_as_the_get_without_a_body(
    server: Server, rows: Rows
) -> None:
    for path in get_routes(server, rows):
        got = server.client.get(path)
        head = server.client.head(path)
        assert head.status_code == got.status_code != 405, path
        assert head.content == b"", path
        headers = {k: v for k, v in head.headers.items() if k not in PER_ANSWER}
        expected = {k: v for k, v in got.headers.items() if k not in PER_ANSWER}
        if path.startswith(("/metrics", "/2/status")):  # counters move between the two
            headers.pop("content-length"), expected.pop("content-length")
        if path.startswith("/1/indexes/"):  # its processingTimeMS may differ in digits
            assert abs(int(headers.pop("content-length"))
                       - int(expected.pop("content-length"))) <= 8, path
        assert headers == expected, path
    # the access log says HEAD, and names the route it matched
    deadline = time.monotonic() + 5
    while '"method":"HEAD","route":"/health"' not in server.output():
        assert time.monotonic() < deadline, server.output()[-2000:]
        time.sleep(0.05)


def test_a_method_a_route_does_not_take_lists_head_beside_get(server: Server) -> None:
    refused = server.client.delete("/health")
    assert refused.status_code == 405
    assert {m.strip() for m in refused.headers["allow"].split(",")} == {"GET", "HEAD", "OPTIONS"}
    assert refused.json() == {"error": "Method not allowed on this route"}
    posted_only = server.client.head("/cities/query")
    assert posted_only.status_code == 405 and "HEAD" not in posted_only.headers["allow"]


def test_head_on_a_search_is_its_etag_and_length(server: Server) -> None:
    plain = {"accept-encoding": "identity"}
    got = server.client.get("/cities/search", params={"q": "paris"}, headers=plain)
    head = server.client.head("/cities/search", params={"q": "paris"}, headers=plain)
    assert head.headers["etag"] == got.headers["etag"]
    assert int(head.headers["content-length"]) == len(got.content)
    unchanged = server.client.head("/cities/search", params={"q": "paris"},
                                   headers={"if-none-match": got.headers["etag"]})
    assert unchanged.status_code == 304 and unchanged.content == b""


# -- GET /1/indexes/{indexName}: Algolia's search with its parameters in the URL ----------------


@pytest.mark.parametrize("params", [
    {"query": "san", "hitsPerPage": "3", "page": "1", "facets": '["region","country"]',
     "facetFilters": '["region:Europe"]', "attributesToRetrieve": "name,country"},
    {"query": "san", "hitsPerPage": "3", "page": "1", "facets": "region,country",
     "facetFilters": "region:Europe", "attributesToRetrieve": '["name","country"]'},
])
def test_algolia_search_in_the_url_answers_as_the_post(
    server: Server, rows: Rows, params: dict[str, str]
) -> None:
    posted = server.client.post("/1/indexes/cities/query", content=json.dumps({
        "params": urlencode(params)}))
    assert posted.status_code == 200, posted.text
    got = server.client.get("/1/indexes/cities", params=params)
    assert got.status_code == 200, got.text
    answer, reference = got.json(), posted.json()
    for moving in ("processingTimeMS", "params"):
        answer.pop(moving), reference.pop(moving)
    assert answer == reference
    europe = [r for r in rows if r["continent"] == "Europe"]
    assert answer["facets"]["region"] == {"Europe": len(europe)} or answer["nbHits"] < len(europe)
    assert all(set(hit) <= {"objectID", "name", "country", "_highlightResult"}
               for hit in answer["hits"])
    assert answer["hitsPerPage"] == 3 and answer["page"] == 1


def test_algolia_search_in_the_url_takes_params_and_leaves_the_key_out(server: Server) -> None:
    everything = server.client.get("/1/indexes/cities", params={"hitsPerPage": "0"}).json()
    assert everything["nbHits"] > 0 and everything["hits"] == []
    inner = server.client.get("/1/indexes/cities", params={
        "params": "query=zzyzx&hitsPerPage=1", "x-algolia-api-key": "k",
        "X-Algolia-Application-Id": "app", "x-algolia-agent": "Algolia for JavaScript"})
    assert inner.status_code == 200, inner.text
    assert inner.json()["query"] == "zzyzx" and inner.json()["hitsPerPage"] == 1
    unknown = server.client.get("/1/indexes/cities", params={"hitsperpage": "2"})
    assert unknown.status_code == 400
    assert unknown.json()["message"] == "hitsperpage is not a supported Algolia search parameter"
    missing = server.client.get("/1/indexes/nope", params={"query": "x"})
    assert missing.status_code == 404 and missing.json()["status"] == 404


# -- what the HTTP server refuses before searchport sees it (docs/errors.md) ---------------------


def raw_request(server: Server, target: bytes, request_id: str) -> tuple[bytes, bytes]:
    """The status line and headers, and the body, of one request sent byte for byte."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: searchport\r\n"
                           b"X-Request-ID: " + request_id.encode() + b"\r\n"
                           b"Connection: close\r\n\r\n")
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return head, body


def logged(server: Server, request_id: str) -> bool:
    """Whether the access log has a line for the request sent with this id."""
    return f'"requestId":"{request_id}"' in server.output()


@pytest.mark.parametrize("target", [
    b'/cities/search?filters={"region":"Europe"}', b"/cities/search?q=<b>", b"/cities/se<a>rch",
])
def test_the_server_refuses_a_url_with_a_raw_quote_or_angle_bracket_without_a_body(
    server: Server, target: bytes
) -> None:
    # granian's HTTP parser answers these itself; searchport never sees them, so the answer
    # cannot be JSON and no access-log line is written (docs/errors.md says so)
    refused = f"refused-{secrets.token_hex(4)}"
    head, body = raw_request(server, target, refused)
    assert head.startswith(b"HTTP/1.1 400 ")
    headers = dict(line.lower().split(b": ", 1) for line in head.split(b"\r\n")[1:])
    assert headers[b"content-length"] == b"0" and body == b""
    assert headers[b"connection"] == b"close"
    # the same URL encoded, as browsers and curl's --data-urlencode send it: searchport's JSON
    encoded = re.sub(rb'["<>{}]', lambda m: b"%%%02X" % m.group()[0], target)
    answered = f"answered-{secrets.token_hex(4)}"
    head, body = raw_request(server, encoded, answered)
    assert head.startswith((b"HTTP/1.1 200 ", b"HTTP/1.1 404 ")), head
    assert isinstance(json.loads(body), dict)
    deadline = time.monotonic() + 5
    while not logged(server, answered):
        assert time.monotonic() < deadline, "the encoded request was not logged"
        time.sleep(0.05)
    assert not logged(server, refused)
