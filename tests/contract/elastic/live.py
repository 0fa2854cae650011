"""The live Elasticsearch/OpenSearch suite's ground: which server to use, the books index
(an explicit mapping, documents derived from ``tests/fixtures/books.jsonl``) and its
lifecycle over the server's own REST API, and the plain-Python reading of the same documents
that ``test_live.py`` computes its expectations from.

The servers (``targets``): the session's real OpenSearch and Elasticsearch nodes
(``tests/servers/opensearch`` and ``tests/servers/elasticsearch``, each started by the first
test that needs it), and a server of your own named by the environment:
- ``SEARCHPORT_TEST_ELASTICSEARCH_URL``: ``http(s)://[user:password@]host:port``; unset, only
  the OpenSearch node runs.
- ``SEARCHPORT_TEST_ELASTICSEARCH_ENGINE``: ``elasticsearch`` (default) or ``opensearch``.
- ``SEARCHPORT_TEST_ELASTICSEARCH_CA_BUNDLE``: the PEM file of a self-signed cluster's CA.
"""

from __future__ import annotations

import json
import math
import os
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx
import pytest
import yaml

from tests.servers import elasticsearch, opensearch

URL_VAR = "SEARCHPORT_TEST_ELASTICSEARCH_URL"
ENGINE_VAR = "SEARCHPORT_TEST_ELASTICSEARCH_ENGINE"
CA_VAR = "SEARCHPORT_TEST_ELASTICSEARCH_CA_BUNDLE"
BOOKS = Path(__file__).resolve().parents[2] / "fixtures" / "books.jsonl"
HANDLE = "books"
Doc = dict[str, Any]


@dataclass(frozen=True)
class Target:
    url: str  # as given, credentials included (searchport takes them out of the host)
    engine: str
    ca_bundle: str | None = None


def target(environ: Mapping[str, str] = os.environ) -> Target | None:
    url = environ.get(URL_VAR, "").strip()
    if not url:
        return None
    engine = environ.get(ENGINE_VAR, "").strip().lower() or "elasticsearch"
    if engine not in ("elasticsearch", "opensearch"):
        raise ValueError(f"{ENGINE_VAR} must be elasticsearch or opensearch, not {engine!r}")
    ca_bundle = environ.get(CA_VAR, "").strip() or None
    return Target(url=url, engine=engine,
                  ca_bundle=str(Path(ca_bundle).resolve()) if ca_bundle else None)


def node_target(config: pytest.Config) -> Target:
    """The session's real OpenSearch node (skipped without Java and Maven, failing in CI)."""
    return Target(url=opensearch.session_server(config).url, engine="opensearch")


def elasticsearch_node_target(config: pytest.Config) -> Target:
    """The session's real Elasticsearch node (skipped without Java and Maven, failing in
    CI)."""
    return Target(url=elasticsearch.session_server(config).url, engine="elasticsearch")


def targets(environ: Mapping[str, str] = os.environ) -> dict[str, Callable[[pytest.Config],
                                                                            Target]]:
    """Each server the live tests run against, by name: the OpenSearch and Elasticsearch
    nodes, and the environment's server when one is named."""
    found: dict[str, Callable[[pytest.Config], Target]] = {
        "opensearch-node": node_target, "elasticsearch-node": elasticsearch_node_target}
    named = target(environ)
    if named is not None:
        found[f"{named.engine}-url"] = lambda _config: named
    return found


# --- the index -------------------------------------------------------------------------------

FORMATS = ("Hardcover", "Paperback")  # capitalised: a term on the analysed text misses them
KEYWORD_SUB = {"keyword": {"type": "keyword", "ignore_above": 256}}
MAPPING: Doc = {
    "dynamic": "strict",  # a derived field this mapping forgot fails the bulk request
    "properties": {
        "id": {"type": "keyword"},
        "title": {"type": "text", "fields": KEYWORD_SUB},
        "author": {"type": "text", "fields": KEYWORD_SUB},
        "genre": {"type": "keyword"},
        "tags": {"type": "keyword"},
        "language": {"type": "keyword"},
        "year": {"type": "integer"},
        "pages": {"type": "integer"},
        "price": {"type": "double"},  # a float type that keeps 19.99 as written
        "available": {"type": "boolean"},
        "published": {"type": "date"},
        "location": {"type": "geo_point"},
        "place": {"type": "text"},  # no keyword sub-field: sorting on it is refused
        "isbn": {"type": "keyword"},
        "notes": {"properties": {"shelf": {"type": "integer"}, "signed": {"type": "boolean"}}},
        "copies": {"type": "nested", "properties": {
            "tag": {"type": "keyword"},
            "format": {"type": "text", "fields": KEYWORD_SUB},
            "number": {"type": "integer"},
        }},
    },
}
# Aliases, weights and a configured nestedPath (copies.format's comes from the mapping).
FIELDS: Doc = {
    "title": {"weight": 2},
    "writer": {"field": "author", "searchable": True},
    "kind": {"field": "genre"},
    "copies.tag": {"nestedPath": "copies"},
}
PUBLIC = {"author": "writer", "genre": "kind"}  # real name -> alias


def public(name: str) -> str:
    return PUBLIC.get(name, name)


def real(name: str) -> str:
    return {alias: name for name, alias in PUBLIC.items()}.get(name, name)


def load_rows(path: Path = BOOKS) -> list[Doc]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def document(row: Doc) -> Doc:
    """A fixture row as indexed: the row, plus one nested ``copies`` object per tag (a book
    with three tags has two hardcover copies: a nested facet must count it once)."""
    doc = dict(row)
    tags = row.get("tags") or []
    if tags:
        pages = int(row.get("pages") or 0)
        doc["copies"] = [{"tag": tag, "format": FORMATS[i % 2], "number": pages // (i + 1)}
                         for i, tag in enumerate(tags)]
    return doc


def doc_id(doc: Doc) -> str:
    return str(doc["id"])


def bulk_body(docs: Iterable[Doc]) -> bytes:
    lines = []
    for doc in docs:
        lines.append(json.dumps({"index": {"_id": doc_id(doc)}}))
        lines.append(json.dumps(doc, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")  # NDJSON ends with a newline


def _client(where: Target) -> httpx.Client:
    parts = urlsplit(where.url if "://" in where.url else f"http://{where.url}")
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"
    if parts.port is not None:
        netloc = f"{netloc}:{parts.port}"
    auth = None
    if parts.username is not None:
        auth = (unquote(parts.username), unquote(parts.password or ""))
    base = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    return httpx.Client(base_url=base, auth=auth, timeout=60.0, trust_env=False,
                        verify=where.ca_bundle or True)


def _ok(response: httpx.Response, what: str) -> Any:
    if not response.is_success:
        raise RuntimeError(f"{what}: HTTP {response.status_code}: {response.text[:500]}")
    return response.json()


@contextmanager
def books_index(where: Target, docs: list[Doc]) -> Iterator[str]:
    """A uniquely named index holding ``docs``, searchable on entry, deleted on exit."""
    name = f"searchport-test-{uuid.uuid4().hex[:12]}"
    with _client(where) as http:
        _ok(http.put(f"/{name}", json={
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": MAPPING,
        }), f"creating index {name}")
        try:
            answer = _ok(http.post(f"/{name}/_bulk", content=bulk_body(docs),
                                   headers={"Content-Type": "application/x-ndjson"}),
                         "bulk indexing")
            if answer.get("errors"):
                failed = [item for item in answer["items"]
                          if next(iter(item.values())).get("error")]
                raise RuntimeError(f"bulk indexing failed: {json.dumps(failed[:3])}")
            _ok(http.post(f"/{name}/_refresh"), "refreshing")
            yield name
        finally:
            http.delete(f"/{name}")


def config_yaml(where: Target, index: str) -> str:
    settings: Doc = {"engine": where.engine, "host": where.url, "indexName": index,
                     "timeout": 30, "fields": FIELDS,
                     "defaults": {"suggestField": "title"}}
    if where.ca_bundle:
        settings["caBundle"] = where.ca_bundle
    return yaml.safe_dump({"indexes": {HANDLE: settings}}, allow_unicode=True)


# --- the reference semantics, in plain Python ------------------------------------------------

def values(doc: Doc, path: str) -> list[Any]:
    """A document's non-null values at a dotted path, through objects and arrays of them."""
    found: list[Any] = [doc]
    for part in path.split("."):
        found = [item[part] for node in found
                 for item in (node if isinstance(node, list) else [node])
                 if isinstance(item, dict) and item.get(part) is not None]
    flat: list[Any] = []
    for value in found:
        flat.extend(value if isinstance(value, list) else [value])
    return flat


def words(text: str) -> list[str]:
    """The standard analyzer: lower-cased word runs (an apostrophe inside a word stays), no
    accent folding."""
    return re.findall(r"\w+(?:'\w+)*", text.lower())


def text_matches(doc: Doc, text: str, fields: Iterable[str] = ("title", "author")) -> bool:
    """``bool_prefix``: any word of ``text`` in a searched field, the last one as a prefix."""
    query = words(text)
    if not query:  # a blank query matches everything; one without words, nothing
        return not text.strip()
    whole, last = set(query[:-1]), query[-1]
    return any(word in whole or word.startswith(last)
               for field in fields for value in values(doc, field) for word in words(value))


def instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _equals(cell: Any, wanted: Any) -> bool:
    if isinstance(cell, bool):
        return cell is wanted or str(wanted).lower() == str(cell).lower()
    if isinstance(cell, int | float):
        try:
            return float(cell) == float(wanted)
        except (TypeError, ValueError):
            return False
    return bool(cell == wanted)


def _bound(value: Any, upper: bool) -> Any:
    """A range bound as Elasticsearch reads it: a date-only upper bound is its whole day."""
    if not isinstance(value, str):
        return float(value)
    moment = instant(value)
    return moment + timedelta(days=1, microseconds=-1) if upper and len(value) == 10 else moment


def _in_range(cell: Any, spec: Mapping[str, Any]) -> bool:
    value = instant(cell) if isinstance(cell, str) else float(cell)
    low, high = spec.get("min"), spec.get("max")
    return ((low is None or _bound(low, False) <= value)
            and (high is None or value <= _bound(high, True)))


def matches(doc: Doc, filters: Mapping[str, Any]) -> bool:
    """The filter grammar of docs/filters-and-parameters.md, field names public."""
    for name, wanted in filters.items():
        found = values(doc, real(name))
        if isinstance(wanted, dict) and set(wanted) <= {"min", "max"}:
            ok = any(_in_range(cell, wanted) for cell in found)
        elif isinstance(wanted, dict) and "not" in wanted:
            excluded = wanted["not"] if isinstance(wanted["not"], list) else [wanted["not"]]
            ok = not any(_equals(cell, w) for cell in found for w in excluded)
        elif isinstance(wanted, dict):
            ok = bool(found) == wanted["exists"]
        else:
            options = wanted if isinstance(wanted, list) else [wanted]
            ok = any(_equals(cell, w) for cell in found for w in options)
        if not ok:
            return False
    return True


def facet_text(cell: Any) -> str:
    if isinstance(cell, bool):
        return "true" if cell else "false"
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    return str(cell)


def facet(docs: Iterable[Doc], name: str, contains: str = "") -> list[dict[str, Any]]:
    """Documents per value (once per document), by count then value, as the API lists them."""
    counts: Counter[str] = Counter()
    for doc in docs:
        counts.update({facet_text(c) for c in values(doc, real(name))})
    needle = contains.casefold()
    ordered = sorted((v for v in counts.items() if needle in v[0].casefold()),
                     key=lambda kv: (-kv[1], kv[0]))
    return [{"value": value, "count": count} for value, count in ordered]


def point(doc: Doc) -> tuple[float, float] | None:
    value = doc.get("location")
    if isinstance(value, dict):
        return float(value["lat"]), float(value["lon"])
    if isinstance(value, str):
        lat, lon = value.split(",")
        return float(lat), float(lon)
    return None


def tile(lat: float, lon: float, zoom: int) -> str:
    """The ``z/x/y`` key of the web-map tile holding a point."""
    n = 2**zoom
    x = int((lon + 180.0) / 360.0 * n)
    y = int((1.0 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2.0 * n)
    return f"{zoom}/{min(x, n - 1)}/{min(y, n - 1)}"


def sort_key(doc: Doc, sort: Mapping[str, str]) -> tuple[Any, ...]:
    """Elasticsearch's order: per key the smallest value ascending, the largest descending;
    a document without the field after all others in either direction."""
    key: list[Any] = []
    for name, order in sort.items():
        found = values(doc, real(name))
        if not found:
            key.append((1, 0))
            continue
        cells = [comparable(real(name), c) for c in found]
        if order == "asc":
            key.append((0, Ascending(min(cells))))
        else:
            key.append((0, Descending(max(cells))))
    return tuple(key)


def mapped_type(path: str) -> str:
    node: Doc = MAPPING
    for part in path.split("."):
        node = node["properties"][part]
    return str(node.get("type", "object"))


def comparable(path: str, cell: Any) -> Any:
    """A value as the engine orders it: keywords as text (``46`` is ``"46"``), dates as
    instants, numbers as numbers."""
    kind = mapped_type(path)
    if kind in ("keyword", "text"):
        return str(cell)
    if kind == "date":
        return instant(cell)
    return cell


@dataclass(frozen=True)
class Ascending:
    value: Any

    def __lt__(self, other: Ascending) -> bool:
        return bool(self.value < other.value)


@dataclass(frozen=True)
class Descending:
    value: Any

    def __lt__(self, other: Descending) -> bool:
        return bool(self.value > other.value)


def shaped(doc: Doc, index: str, keep: Callable[[str], bool] = lambda name: True) -> Doc:
    """A stored document as searchport returns it: metadata, then public field names."""
    return {"objectID": doc_id(doc), "_index": index,
            **{public(k): v for k, v in doc.items() if keep(public(k))}}
