"""The books and awkward collections of the integration tests, in the session's real
``typesense-server`` (``tests/typesense_server.py``: started on free loopback ports, skipped
without the binary on a developer's machine, failing in CI).

The books collection's schema is derived from ``books.jsonl``: strings that look like
categories are facets, numbers are facets and sortable, ``published`` becomes Unix seconds
(``int64``, so date ranges work) and ``location`` a ``geopoint``. ``typesense_rows``
converts the rows the same way, so tests compute their expectations from what was loaded.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.domain.config import Config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.fakes import in_memory_analytics
from tests.typesense_server import TypesenseServer, session_server

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BOOKS = FIXTURES / "books.jsonl"
COLLECTION = "books"

BOOKS_SCHEMA: dict[str, Any] = {
    "name": COLLECTION,
    "fields": [
        {"name": "title", "type": "string", "sort": True},
        {"name": "author", "type": "string", "facet": True, "optional": True},
        {"name": "genre", "type": "string", "facet": True, "optional": True},
        {"name": "tags", "type": "string[]", "facet": True, "optional": True},
        {"name": "language", "type": "string", "facet": True, "optional": True},
        {"name": "place", "type": "string", "facet": True, "optional": True},
        {"name": "isbn", "type": "string", "optional": True},
        {"name": "year", "type": "int32", "facet": True, "optional": True},
        {"name": "pages", "type": "int32", "facet": True, "optional": True},
        {"name": "price", "type": "float", "facet": True, "optional": True},
        {"name": "available", "type": "bool", "facet": True, "optional": True},
        {"name": "published", "type": "int64", "optional": True},
        {"name": "location", "type": "geopoint", "optional": True},
    ],
}


# ---------------------------------------------------------------- the books, as loaded


def epoch_seconds(text: str) -> int:
    value = datetime.fromisoformat(text)
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value
    return int(value.timestamp())


def lat_lon(value: Any) -> list[float] | None:
    if isinstance(value, dict):
        return [float(value["lat"]), float(value["lon"])]
    if isinstance(value, str):
        lat, lon = value.split(",")
        return [float(lat), float(lon)]
    return None


def typesense_row(row: dict[str, Any]) -> dict[str, Any]:
    """A books.jsonl row as loaded: string id, Unix-seconds date, [lat, lon] point."""
    doc = dict(row)
    doc["id"] = str(row["id"])
    if "published" in row:
        doc["published"] = epoch_seconds(row["published"])
    if "location" in row:
        doc["location"] = lat_lon(row["location"])
    return doc


def typesense_rows() -> list[dict[str, Any]]:
    lines = BOOKS.read_text("utf-8").splitlines()
    return [typesense_row(json.loads(line)) for line in lines if line.strip()]


# ---------------------------------------------------------------- awkward filter values

AWKWARD = "awkward"
AWKWARD_SCHEMA: dict[str, Any] = {
    "name": AWKWARD,
    "fields": [
        {"name": "v", "type": "string", "facet": True},
        {"name": "vs", "type": "string[]", "facet": True},
    ],
}
# Filter syntax in values: backticks, commas, brackets, parentheses, && and ||, quotes,
# backslashes, colons, operators; some differ only in symbols or case (equal for Typesense).
AWKWARD_VALUES = [
    "plain", "Plain", "a`b", "a,b", "ab", "a && b", "a || b", "x` || v:!=`zz", "[br]", "(p",
    "p)", 'q"uote', "it's", "back\\slash", "end\\", "`", "``", "", " sp ", "a:=b", "!=x",
    "<lt>", "a` `b", "comma, `tick`", "]`,[`", "x`]) || (v:=`y", "&&", "||", "a&&b", "tab\tsep",
    "line\nbreak", "zz", "ZZ top", "-neg", "*", "{j}", "%20", "a\\`b",
]
# Ids that are also route names or need URL escaping.
AWKWARD_IDS = ["export", "search", "a/b", "x y", "?q=1", "a+b", "..", "é"]


def awkward_docs() -> list[dict[str, Any]]:
    docs = []
    for i, value in enumerate(AWKWARD_VALUES):
        doc_id = AWKWARD_IDS[i] if i < len(AWKWARD_IDS) else f"w{i:02d}"
        partner = AWKWARD_VALUES[(i * 7 + 3) % len(AWKWARD_VALUES)]
        docs.append({"id": doc_id, "v": value, "vs": [value, partner, "shared"]})
    return docs


def tokens(text: str) -> tuple[str, ...]:
    """Typesense's view of a string in text queries, filters and facets (default locale,
    no ``symbols_to_index``): words split at spaces and line breaks, lower-cased, accents and
    symbols dropped (``Jean-Luc Café`` is ``jeanluc cafe``). A tab is a symbol to 0.24.1, not
    a separator: ``tab<TAB>sep`` is the one word ``tabsep`` (seen on the real server)."""
    folded = unicodedata.normalize("NFKD", text.lower())
    words = ("".join(c for c in word if c.isascii() and c.isalnum())
             for word in re.split(r"[ \n]", folded))
    return tuple(w for w in words if w)


@contextmanager
def app_client(indexes: dict[str, dict[str, Any]], **settings: Any) -> Iterator[TestClient[Any]]:
    """The real app (container, use cases, HTTP) over the given typesense handles;
    ``settings``: other top-level config keys (``resilience``...)."""
    config = msgspec.convert({"indexes": indexes, **settings}, Config)
    container = in_memory_analytics(create_container(config, Path(".")))
    with TestClient(create_app(container)) as client:
        yield client


# ---------------------------------------------------------------- one server per session

def shared_server(request: pytest.FixtureRequest,
                  tmp_path_factory: pytest.TempPathFactory) -> TypesenseServer:
    """The session's server with the books and awkward collections, loaded by the first
    module that asks."""
    server = session_server(request.config, tmp_path_factory)
    if not server.has_collection(COLLECTION):
        server.create_collection(BOOKS_SCHEMA, typesense_rows())
        server.create_collection(AWKWARD_SCHEMA, awkward_docs())
    return server


def index_settings(server: TypesenseServer, collection: str = COLLECTION,
                   **settings: Any) -> dict[str, Any]:
    return {"engine": "typesense", "host": server.url, "apiKey": server.api_key,
            "indexName": collection, "timeout": 5, **settings}
