"""Engines the conformance suite runs against, each loaded with ``dataset.ROWS``.

A backend is a context manager yielding the ``indexes.<handle>`` settings of a config that
points at the loaded data, and removing the data on exit. tantivy, Typesense, OpenSearch and
Elasticsearch always run (Typesense: the session's ``typesense-server`` from
``tests/typesense_server.py``; OpenSearch and Elasticsearch: the session's real nodes from
``tests/servers``; without the binary, or Java and Maven, skipped on a developer's machine, a
failure in CI). Another Elasticsearch or OpenSearch, and Meilisearch, run when
``SEARCHPORT_TEST_<ENGINE>_URL`` names a server. On a
server engine a uniquely named index is created and loaded through the engine's own API, and
deleted afterwards.

- ``SEARCHPORT_TEST_ELASTICSEARCH_URL`` (with ``SEARCHPORT_TEST_ELASTICSEARCH_ENGINE`` and
  ``..._CA_BUNDLE`` as for ``tests/contract/elastic``),
- ``SEARCHPORT_TEST_OPENSEARCH_URL`` (``https://user:pass@host:9200``; a self-signed
  cluster's CA in ``SEARCHPORT_TEST_OPENSEARCH_CA_BUNDLE``),
- ``SEARCHPORT_TEST_MEILISEARCH_URL`` (and ``SEARCHPORT_TEST_MEILISEARCH_KEY``).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.dataset import FIELDS, KEYWORDS, ROWS
from tests.contract.elastic import live as elastic_live
from tests.contract.meilisearch import live as meili_live
from tests.typesense_server import session_server

IndexSettings = dict[str, Any]


@dataclass(frozen=True)
class Session:
    """What a backend may use: its own temporary folder and the pytest session."""

    tmp: Path
    config: pytest.Config
    tmp_path_factory: pytest.TempPathFactory


Backend = Callable[[Session], AbstractContextManager[IndexSettings]]


@contextmanager
def tantivy(session: Session) -> Iterator[IndexSettings]:
    source = session.tmp / "conformance.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    yield {"engine": "tantivy", "path": str(session.tmp / "index"), "source": str(source),
           "fields": FIELDS}


# ---------------------------------------------------------------- Typesense

TYPESENSE_TYPES = {"text": "string", "keyword": "string", "integer": "int32",
                   "float": "float", "boolean": "bool", "date": "int64",
                   "geo_point": "geopoint"}
TYPESENSE_FACETS = frozenset({*KEYWORDS, "year", "rating", "available", "published"})
TYPESENSE_SORTS = frozenset({"genre", "title"})  # numbers are sortable by default


def typesense_schema(name: str) -> dict[str, Any]:
    """The dataset's fields as a collection schema: keyword arrays are ``string[]``, a field
    some row lacks is optional, keywords and small integers are facets."""
    fields = []
    for field, spec in FIELDS.items():
        kind = TYPESENSE_TYPES[spec["type"]]
        if any(isinstance(row.get(field), list) for row in ROWS):
            kind += "[]"
        entry: dict[str, Any] = {"name": field, "type": kind}
        if field in TYPESENSE_FACETS:
            entry["facet"] = True
        if field in TYPESENSE_SORTS:
            entry["sort"] = True
        if any(field not in row for row in ROWS):
            entry["optional"] = True
        fields.append(entry)
    return {"name": name, "fields": fields}


def unix_seconds(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def typesense_document(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as Typesense stores it: a geopoint is ``[lat, lon]``, a date Unix seconds."""
    doc = dict(row)
    doc["location"] = [row["location"]["lat"], row["location"]["lon"]]
    doc["published"] = unix_seconds(row["published"])
    return doc


@contextmanager
def typesense(session: Session) -> Iterator[IndexSettings]:
    server = session_server(session.config, session.tmp_path_factory)
    name = f"conformance_{uuid.uuid4().hex[:8]}"
    server.create_collection(typesense_schema(name), [typesense_document(r) for r in ROWS])
    try:
        yield {"engine": "typesense", "host": server.url, "apiKey": server.api_key,
               "indexName": name, "timeout": 10, "fields": FIELDS}
    finally:
        server.drop_collection(name)


# ---------------------------------------------------------------- Elasticsearch, OpenSearch

KEYWORD_SUB = {"keyword": {"type": "keyword", "ignore_above": 256}}
ELASTIC_TYPES: dict[str, dict[str, Any]] = {
    "text": {"type": "text", "fields": KEYWORD_SUB},
    "keyword": {"type": "keyword"},
    "integer": {"type": "integer"},
    "float": {"type": "double"},
    "boolean": {"type": "boolean"},
    "date": {"type": "date"},
    "geo_point": {"type": "geo_point"},
}
ELASTIC_MAPPING: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {"id": {"type": "keyword"},
                   **{f: ELASTIC_TYPES[s["type"]] for f, s in FIELDS.items()}},
}


def elastic(find: Callable[[pytest.Config], elastic_live.Target]) -> Backend:
    @contextmanager
    def backend(session: Session) -> Iterator[IndexSettings]:
        where = find(session.config)
        name = f"searchport-conformance-{uuid.uuid4().hex[:12]}"
        with elastic_live._client(where) as http:
            elastic_live._ok(http.put(f"/{name}", json={
                "settings": {"number_of_shards": 1, "number_of_replicas": 0},
                "mappings": ELASTIC_MAPPING,
            }), f"creating index {name}")
            try:
                answer = elastic_live._ok(
                    http.post(f"/{name}/_bulk", content=elastic_live.bulk_body(ROWS),
                              headers={"Content-Type": "application/x-ndjson"}),
                    "bulk indexing")
                if answer.get("errors"):
                    raise RuntimeError(f"bulk indexing failed: {json.dumps(answer)[:1000]}")
                elastic_live._ok(http.post(f"/{name}/_refresh"), "refreshing")
                settings: IndexSettings = {"engine": where.engine, "host": where.url,
                                           "indexName": name, "timeout": 30, "fields": FIELDS}
                if where.ca_bundle:
                    settings["caBundle"] = where.ca_bundle
                yield settings
            finally:
                http.delete(f"/{name}")
    return backend


# ---------------------------------------------------------------- Meilisearch
# Dates as Unix seconds, the field typed ``date`` in FIELDS: what docs/engines.md asks.

MEILI_SETTINGS: dict[str, Any] = {
    "searchableAttributes": ["title", "author"],
    # the primary key too: query rules' promotes and hides filter on it
    "filterableAttributes": sorted(["id", *(f for f, s in FIELDS.items() if s["type"] != "text"
                                            and s["type"] != "geo_point")]),
    "sortableAttributes": ["genre", "rank", "rating", "year"],
    "faceting": {"sortFacetValuesBy": {"*": "count"}, "maxValuesPerFacet": 100},
}


def meilisearch(url: str, key: str) -> Backend:
    @contextmanager
    def backend(session: Session) -> Iterator[IndexSettings]:
        rows = [{**r, "published": unix_seconds(r["published"])} for r in ROWS]
        with meili_live.temporary_index(url, key, MEILI_SETTINGS, rows,
                                        prefix="searchport_conformance") as uid:
            yield {"engine": "meilisearch", "host": url, "indexName": uid, "timeout": 30,
                   "fields": FIELDS, **({"apiKey": key} if key else {})}
    return backend


# ---------------------------------------------------------------- which ones run

def backends(environ: Mapping[str, str] = os.environ) -> dict[str, Backend]:
    found: dict[str, Backend] = {"tantivy": tantivy, "typesense": typesense,
                                 "opensearch": elastic(elastic_live.node_target),
                                 "elasticsearch": elastic(elastic_live.elasticsearch_node_target)}
    es = elastic_live.target(environ)
    if es is not None:
        found[f"{es.engine}-url"] = elastic(lambda _config: es)
    opensearch_url = environ.get("SEARCHPORT_TEST_OPENSEARCH_URL", "").strip()
    if opensearch_url:
        ca_bundle = environ.get("SEARCHPORT_TEST_OPENSEARCH_CA_BUNDLE", "").strip() or None
        named = elastic_live.Target(
            url=opensearch_url, engine="opensearch",
            ca_bundle=str(Path(ca_bundle).resolve()) if ca_bundle else None)
        found["opensearch-url"] = elastic(lambda _config: named)
    meili_url = environ.get(meili_live.URL_VAR, "").strip()
    if meili_url:
        found["meilisearch"] = meilisearch(meili_url, environ.get(meili_live.KEY_VAR, ""))
    return found


BACKENDS = backends()
