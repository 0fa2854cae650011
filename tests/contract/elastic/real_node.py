"""Every search the contract tier's adapter sends, sent again to a real node of its engine.

The scripted engine says what the engine's specification says; the real node says what
users will see. While a test of the contract tier runs, each ``POST .../_search`` the adapter
sends to a double that answers it with success is kept (``keep``); when the test ends,
``check`` sends each one to the session's real node of the double's engine (OpenSearch or
Elasticsearch, ``tests/servers``), to an index made with the mapping the double last served,
and the test fails if the node refuses a search the double accepted.

The index's analyzers are defined as their names say: a shingle or an edge n-gram analyzer
(the Elasticsearch distribution has no edge n-gram filter: there such an analyzer only
lowercases). Searches made without a mapping the adapter could read, and raw queries that
read another index by name, are not sent again: the real node holds only that one index.
Nor are the searches in which the engine embeds the query's text with a model deployed in
it (``embedder: engine``: Elasticsearch's ``knn`` with ``query_vector_builder``,
OpenSearch's ``neural`` query): the tests' nodes run no model (the Elasticsearch node has
no machine-learning module, it answers 400 "unknown named object category
[...QueryVectorBuilder]"; the OpenSearch node has the k-NN plugin but not neural-search,
it answers 400 "unknown query [neural]"), and none is downloaded here; the specifications
still hold them.

Without Java and Maven the nodes cannot run: outside CI the searches are not sent again (the
scripted tests still run); under ``CI`` the test fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.servers import RESENT, elasticsearch, opensearch

Json = dict[str, Any]


@dataclass(frozen=True)
class Kept:
    """One search the double answered with success."""

    engine: str  # elasticsearch or opensearch
    path: str  # as sent: percent-encoded, with its query string
    body: bytes
    mapping: Json  # the double's ``GET /<index>/_mapping`` answer


_KEPT: list[Kept] = []
_LOCK = threading.Lock()
_INDEXES: dict[tuple[str, str], str] = {}  # (engine, the mapping's digest) -> its index


def keep(engine: str, path: str, body: bytes, mapping: Json) -> None:
    """Keep a search for ``check``; one that reads another index by name (a terms lookup
    in a raw query) is left out: the real node holds only the double's one index."""
    decoded = json.loads(body) if body else None
    if _reads_another_index(decoded) or _needs_a_model(decoded):
        return
    with _LOCK:
        _KEPT.append(Kept(engine, path, body, mapping))


def readable_mapping(content: bytes) -> Json | None:
    """A ``GET /<index>/_mapping`` answer as the adapter reads it, or ``None`` when it is
    not one (a broken answer under test)."""
    try:
        answer = json.loads(content)
    except ValueError:
        return None
    if isinstance(answer, dict) and answer and all(
            isinstance(entry, dict) and isinstance(entry.get("mappings"), dict)
            for entry in answer.values()):
        return answer
    return None


def _reads_another_index(node: Any) -> bool:
    if isinstance(node, dict):
        terms = node.get("terms")
        if isinstance(terms, dict) and any(isinstance(v, dict) and "index" in v
                                           for v in terms.values()):
            return True
        return any(_reads_another_index(v) for v in node.values())
    if isinstance(node, list):
        return any(_reads_another_index(v) for v in node)
    return False


def _needs_a_model(node: Any) -> bool:
    """Whether the engine must embed a text to run the search (see the module's
    docstring): a ``query_vector_builder`` or a ``neural`` query anywhere in it."""
    if isinstance(node, dict):
        return "query_vector_builder" in node or "neural" in node or any(
            _needs_a_model(v) for v in node.values())
    if isinstance(node, list):
        return any(_needs_a_model(v) for v in node)
    return False


def _taken(engine: str) -> list[Kept]:
    with _LOCK:
        taken = [search for search in _KEPT if search.engine == engine]
        _KEPT[:] = [search for search in _KEPT if search.engine != engine]
    return taken


def node_url(engine: str, config: pytest.Config) -> str | None:
    """The session's node of ``engine``, or ``None`` where it cannot run outside CI."""
    try:
        if engine == "opensearch":
            opensearch.tools()
            return opensearch.session_server(config).url
        elasticsearch.tools()
        return elasticsearch.session_server(config).url
    except (opensearch.Unavailable, elasticsearch.Unavailable) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{exc}; CI machines have both")
        return None


def check(config: pytest.Config) -> list[str]:
    """Send the searches kept since the last check to the real node; what it refused."""
    refused: list[str] = []
    for engine in ("opensearch", "elasticsearch"):
        kept = _taken(engine)
        url = node_url(engine, config) if kept else None
        if url is not None:
            refused += _send(url, kept)
    return refused


def _send(url: str, kept: list[Kept]) -> list[str]:
    refused: list[str] = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for search in kept:
            index = _index(client, search.engine, search.mapping)
            # a host's path prefix and the index names give way to the real index
            _, _, query = search.path.partition("?")
            answer = client.post(f"/{index}/_search" + (f"?{query}" if query else ""),
                                 content=search.body,
                                 headers={"Content-Type": "application/json"})
            if answer.status_code < 300:
                RESENT[search.engine] += 1
            else:
                refused.append(f"POST {search.path} {search.body.decode()[:2000]}\n"
                               f"  -> {answer.status_code} {answer.text[:1000]}")
    return refused


def _index(client: httpx.Client, engine: str, mapping_answer: Json) -> str:
    """The real node's index with the properties of every index in ``mapping_answer``."""
    properties: Json = {}
    for entry in mapping_answer.values():
        properties.update(((entry or {}).get("mappings") or {}).get("properties") or {})
    mappings = {"properties": properties}
    digest = hashlib.sha256(json.dumps(mappings, sort_keys=True).encode()).hexdigest()[:16]
    name = _INDEXES.get((engine, digest))
    if name is None:
        name = f"contract-{digest}"
        settings: Json = {"number_of_shards": 1, "number_of_replicas": 0,
                          "analysis": _analysis(mappings, edge=engine == "opensearch")}
        if engine == "opensearch" and '"knn_vector"' in json.dumps(mappings):
            settings["knn"] = True  # the k-NN plugin indexes the vectors for its knn query
        body = {"settings": settings, "mappings": mappings}
        created = client.put(f"/{name}", json=body)
        if created.status_code != 200 and "already_exists" not in created.text:
            raise RuntimeError(f"the real node refused the double's mapping: {created.text}")
        _INDEXES[(engine, digest)] = name
    return name


def _analysis(mappings: Json, *, edge: bool) -> Json:
    """Each analyzer the mapping names, defined as its name says."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("analyzer", "search_analyzer") and isinstance(value, str):
                    names.add(value)
                else:
                    walk(value)

    walk(mappings)
    analyzers: Json = {}
    filters: Json = {
        "replay_shingle": {"type": "shingle", "min_shingle_size": 2, "max_shingle_size": 3},
    }
    if edge:
        filters["replay_edge"] = {"type": "edge_ngram", "min_gram": 1, "max_gram": 20}
    for name in names - {"standard", "simple", "whitespace", "keyword", "english"}:
        chain = ["lowercase"]
        if "shingle" in name:
            chain.append("replay_shingle")
        elif edge and ("edge" in name or "ngram" in name or "complete" in name):
            chain.append("replay_edge")
        analyzers[name] = {"type": "custom", "tokenizer": "standard", "filter": chain}
    return {"analyzer": analyzers, "filter": filters}
