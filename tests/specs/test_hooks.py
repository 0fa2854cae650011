"""The hooks that hold the suite's exchanges against the specifications are in place and
catch a refused exchange at each layer: the scripted engines' recorder, the network of the
server engines (Typesense), and the HTTP clients reading searchport's Algolia answers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping

import httpx

from searchport.adapters.network import pools
from searchport.adapters.network.exchange import Answer
from tests.conftest import CheckedExchange
from tests.contract.scripted import OffSpec, Recorder, ScriptedEngine
from tests.specs.exchanges import TYPESENSE_ORIGINS, VIOLATIONS


class OpenSearchDouble(ScriptedEngine):
    engine = "opensearch"


def test_the_recorder_holds_requests_and_answers_to_the_engine_s_specification() -> None:
    double = OpenSearchDouble().on("POST", "/c/_search", (200, {"took": "fast"}))
    client = httpx.Client(transport=httpx.MockTransport(Recorder(double)),
                          base_url="http://es.test")
    VIOLATIONS.take()
    client.post("/c/_search", json={"qeury": {"match_all": {}}})
    found = "\n".join(VIOLATIONS.take())
    assert "opensearch request POST /c/_search" in found and "qeury" in found
    assert "opensearch answer 200" in found and "took" in found


def test_an_off_spec_reply_is_the_one_way_to_skip_the_check() -> None:
    double = OpenSearchDouble().on("POST", "/c/_search", OffSpec((200, {"took": "fast"})))
    client = httpx.Client(transport=httpx.MockTransport(Recorder(double)),
                          base_url="http://es.test")
    VIOLATIONS.take()
    client.post("/c/_search", json={"qeury": {}})
    assert VIOLATIONS.take() == []


class Canned:
    """An engine network answering every exchange with one body."""

    def __init__(self, body: object) -> None:
        self.body = json.dumps(body).encode()

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        return Answer(200, {}, self.body)

    async def aclose(self) -> None:
        return None


def test_the_engines_network_is_checked_for_typesense() -> None:
    assert pools.network.__name__ == "checked_network"
    exchange = CheckedExchange(Canned({"results": "none"}))
    TYPESENSE_ORIGINS.add("http://127.0.0.1:8108")
    VIOLATIONS.take()
    asyncio.run(exchange.exchange(
        "POST", "http://127.0.0.1:8108/multi_search?per_page=ten", {},
        json.dumps({"searches": [{"collection": "b", "q": "x", "num_typos": 0}]}).encode(),
        1.0))
    found = "\n".join(VIOLATIONS.take())
    assert "typesense request POST /multi_search" in found
    assert "num_typos" in found and "per_page" in found
    assert "typesense answer 200" in found and "results" in found


def test_answers_on_the_algolia_routes_are_checked() -> None:
    def searchport(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"hits": [], "nbHits": "none"})

    client = httpx.Client(transport=httpx.MockTransport(searchport),
                          base_url="http://searchport.test")
    VIOLATIONS.take()
    client.post("/1/indexes/cities/query", json={"query": "x"})
    found = "\n".join(VIOLATIONS.take())
    assert "/1/indexes/cities/query" in found and "nbHits" in found
    client.post("/cities/search", json={})  # not an Algolia route: not checked
    assert VIOLATIONS.take() == []
