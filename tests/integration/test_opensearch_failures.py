"""What searchport answers when a real OpenSearch node fails, through the real app.

A node of this module's own (``tests/servers/opensearch``), so that pausing and stopping it
disturbs no other test: an index that does not exist, a ``text`` field asked for as a facet,
malformed raw queries, a node paused with SIGSTOP (it keeps its sockets and answers nothing),
and a node stopped while searches are under way and started again on the same port and data.
Each answer is the one docs/errors.md promises, a slow or gone node is answered within the
handle's timeout plus 100 ms, and searchport serves again within a second of the node's
return (the circuit breaker's ``coolDown`` set below that).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.servers import opensearch

TIMEOUT = 1.0  # the handles' timeout, in seconds
SLACK = 0.1  # what an answer may take beyond it
COOL_DOWN = 0.5  # the circuit breaker's, in seconds
ROWS = [{"title": f"lantern {i}", "kind": f"kind-{i % 3}", "rank": i} for i in range(30)]
Client = TestClient[Any]


@pytest.fixture(scope="module")
def node() -> Iterator[opensearch.OpenSearchServer]:
    try:
        opensearch.tools()
    except opensearch.Unavailable as exc:
        opensearch.missing(str(exc))
    home = Path(tempfile.mkdtemp(prefix="searchport-opensearch-failures-"))
    server = opensearch.OpenSearchServer(home)
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            http.put("/lanterns", json={
                "settings": {"number_of_shards": 1, "number_of_replicas": 0},
                "mappings": {"properties": {"title": {"type": "text"},
                                            "kind": {"type": "keyword"},
                                            "rank": {"type": "integer"}}},
            }).raise_for_status()
            lines = "".join(json.dumps({"index": {"_id": str(i)}}) + "\n" + json.dumps(row)
                            + "\n" for i, row in enumerate(ROWS))
            http.post("/lanterns/_bulk", params={"refresh": "true"}, content=lines,
                      headers={"Content-Type": "application/x-ndjson"}).raise_for_status()
        yield server
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def api(node: opensearch.OpenSearchServer,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    config = parse_config(f"""
resilience:
  retries: 0
  circuitBreaker: {{failures: 5, coolDown: {COOL_DOWN}}}
indexes:
  lanterns: {{engine: opensearch, host: "{node.url}", indexName: lanterns, timeout: {TIMEOUT}}}
  ghost: {{engine: opensearch, host: "{node.url}", indexName: ghost, timeout: {TIMEOUT}}}
""", {})
    app = create_app(create_container(config, tmp_path_factory.mktemp("failures")))
    with TestClient(app) as client:
        yield client


def expected_titles(words: str) -> set[str]:
    return {r["title"] for r in ROWS if set(words.split()) <= set(r["title"].split())}


def test_a_search_answers_from_the_node(api: Client) -> None:
    answer = api.get("/lanterns/search", params={"q": "lantern 7"}).json()
    assert {hit["title"] for hit in answer["hits"]} >= expected_titles("lantern 7")
    assert answer["hits"][0]["title"] == "lantern 7"


def test_an_index_that_does_not_exist_is_a_502_saying_so(api: Client) -> None:
    response = api.get("/ghost/search", params={"q": "x"})
    assert response.status_code == 502, response.text
    assert response.json() == {
        "error": "The index configured for this handle does not exist in the opensearch engine"}


def test_a_text_field_as_a_facet_is_a_400_naming_the_field(api: Client) -> None:
    response = api.get("/lanterns/search", params={"facets": "title"})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error.startswith("The opensearch engine rejected the query: Text fields are not ")
    assert "[title]" in error and "keyword" in error
    assert "127.0.0.1" not in error


@pytest.mark.parametrize(("body", "reason"), [
    ({"query": {"match": {"title": {"query": "lantern", "bogus": 1}}}}, "bogus"),
    ({"query": {"no_such_query": {}}}, "no_such_query"),
    ({"query": {"range": {"rank": {"gte": "many"}}}}, "many"),
])
def test_a_malformed_raw_query_is_a_400_with_the_engines_reason(
    api: Client, body: dict[str, Any], reason: str
) -> None:
    response = api.post("/lanterns/query", json=body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error.startswith("The opensearch engine rejected the query: ")
    assert reason in error


def test_a_paused_node_is_a_504_within_the_timeout_and_serves_at_once_when_resumed(
    api: Client, node: opensearch.OpenSearchServer
) -> None:
    node.pause()
    try:
        began = time.monotonic()
        response = api.get("/lanterns/search", params={"q": "lantern 3"})
        took = time.monotonic() - began
    finally:
        node.resume()
    assert response.status_code == 504, response.text
    assert response.json() == {
        "error": f"The opensearch engine did not answer within {TIMEOUT:g} s"}
    assert TIMEOUT <= took <= TIMEOUT + SLACK, took
    began = time.monotonic()
    assert api.get("/lanterns/search", params={"q": "lantern 3"}).status_code == 200
    assert time.monotonic() - began < 1.0


def test_a_node_stopped_under_load_and_started_again(
    api: Client, node: opensearch.OpenSearchServer
) -> None:
    stop = threading.Event()
    answers: list[tuple[int, float, float, str]] = []  # status, took, finished at, body

    def load() -> None:
        while not stop.is_set():
            began = time.monotonic()
            response = api.get("/lanterns/search", params={"q": "lantern"})
            finished = time.monotonic()
            answers.append((response.status_code, finished - began, finished, response.text))

    with ThreadPoolExecutor(4) as pool:
        for _ in range(4):
            pool.submit(load)
        time.sleep(0.5)
        node.stop()  # SIGTERM: the node closes its sockets and exits
        time.sleep(1.0)
        node.start()  # the same port and data
        returned = time.monotonic()
        time.sleep(2.0)
        stop.set()

    statuses = {status for status, *_ in answers}
    assert statuses <= {200, 502, 504}, statuses
    assert 502 in statuses  # while the node was gone
    slow = [took for _, took, _, _ in answers if took > TIMEOUT + SLACK]
    assert not slow, slow
    for status, _, _, text in answers:
        if status != 200:
            error = json.loads(text)["error"]
            assert "127.0.0.1" not in error and str(node.port) not in error
    served_again = [finished for status, _, finished, _ in answers
                    if status == 200 and finished > returned]
    assert served_again and min(served_again) - returned < 1.0
    hits = api.get("/lanterns/search", params={"q": "lantern 12"}).json()["hits"]
    assert hits[0]["title"] == "lantern 12"
