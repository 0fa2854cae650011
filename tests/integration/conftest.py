"""Shared fixtures of the integration tier: a real tantivy index of ``books.jsonl``, and a
plain-Python reading of the same rows that tests compute their expectations from."""

from __future__ import annotations

import asyncio
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from searchport.adapters.tantivy import TantivyEngine, build_index
from searchport.adapters.tantivy.builder import index_folder
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.schema import IndexLayout
from searchport.domain.config import IndexConfig
from tests.edit_distance import edit_distance
from tests.redis_server import RedisServer

if TYPE_CHECKING:
    from tests.typesense_server import TypesenseServer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BOOKS = FIXTURES / "books.jsonl"

BOOK_FIELDS: dict[str, Any] = {
    "title": {"type": "text", "weight": 2},
    "author": {"type": "text"},
    "genre": {"type": "keyword"},
    "tags": {"type": "keyword"},
    "language": {"type": "keyword"},
    "year": {"type": "integer"},
    "pages": {"type": "integer"},
    "price": {"type": "float"},
    "available": {"type": "boolean"},
    "published": {"type": "date"},
    "location": {"type": "geo_point"},
    "writer": {"field": "author"},  # an alias without a type: nothing more to index
}
TEXT_FIELDS = ("title", "author")
KEYWORD_FIELDS = ("genre", "tags", "language")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def books_config(path: Path, source: Path = BOOKS, **fields: Any) -> IndexConfig:
    return msgspec.convert(
        {"engine": "tantivy", "path": str(path), "source": str(source),
         "fields": fields or BOOK_FIELDS},
        IndexConfig,
    )


def open_books_index(base: Path) -> OpenIndex:
    """The books' index built in ``base`` and opened as the engine reads it (for the tests
    of the reader's own parts)."""
    config = books_config(base / "index")
    build_index("books", config, base)
    folder = index_folder("books", config, base)
    meta = folder.read_meta()
    assert meta is not None
    return OpenIndex("books", folder.generation_path(meta), IndexLayout(config),
                     meta.stored_fields)


def books_index_with_vocabulary(base: Path) -> OpenIndex:
    """``open_books_index`` once its vocabulary (the typo ways' word lists) is read."""
    index = open_books_index(base)
    index.vocabulary.wait(30)
    assert index.vocabulary.ready
    return index


@pytest.fixture(scope="session")
def books_engine(tmp_path_factory: pytest.TempPathFactory) -> TantivyEngine:
    """One index for every read-only test (building per test would only cost time)."""
    base = tmp_path_factory.mktemp("books")
    engine = TantivyEngine("books", books_config(base / "index"), base)
    asyncio.run(engine.start())
    return engine


def load_rows(path: Path = BOOKS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def rows() -> list[dict[str, Any]]:
    return load_rows()


# --- the reference semantics, in plain Python -------------------------------------------

def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """Lower-cased, accent-free runs of letters and digits (what the index analyses)."""
    return re.findall(r"[^\W_]+", fold(text))


def listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def doc_id(row: dict[str, Any]) -> str:
    return str(row["id"])


def ids(rows: Iterable[dict[str, Any]]) -> set[str]:
    return {doc_id(row) for row in rows}


def allowed_typos(word: str, one_from: int = 5, two_from: int = 9) -> int:
    """The default typo rule: one typo from 5 letters, two from 9."""
    return 2 if len(word) >= two_from else 1 if len(word) >= one_from else 0


def word_matches(word: str, query: str, as_prefix: bool, typos: int) -> bool:
    """A document word matched by a query word: equal, within ``typos`` edits, and for the
    word being typed, starting with it or with a word within ``typos`` edits of it."""
    if word == query or (as_prefix and word.startswith(query)):
        return True
    if typos == 0:
        return False
    if as_prefix:
        return any(edit_distance(word[:end], query) <= typos for end in range(len(word) + 1))
    return edit_distance(word, query) <= typos


def text_matches(row: dict[str, Any], text: str, fields: Iterable[str] = TEXT_FIELDS,
                 keywords: Iterable[str] = KEYWORD_FIELDS, prefix: bool = True,
                 typos: bool = True) -> bool:
    """Any word of ``text`` in a searched text field (the last one also as a prefix), with
    the typos the default rule allows (``typos``), or the whole text or one of its words
    equal to a keyword, ignoring case and accents."""
    query = words(text)
    if not query:
        return False
    last = query[-1] if prefix and text[-1].isalnum() else None
    allowed = {q: allowed_typos(q) if typos else 0 for q in query}
    for field in fields:
        for value in listed(row.get(field)):
            for word in words(value):
                if any(word_matches(word, q, q == last, allowed[q]) for q in query):
                    return True
    wanted = {fold(text.strip()), *(fold(w) for w in text.split())}
    return any(fold(v) in wanted for f in keywords for v in listed(row.get(f)))


def parse_date(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def tile(lat: float, lon: float, zoom: int) -> tuple[int, int]:
    """The standard slippy-map tile of a point (OpenStreetMap wiki formula)."""
    n = 2**zoom
    x = int((lon + 180.0) / 360.0 * n)
    y = int((1.0 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2.0 * n)
    return min(x, n - 1), min(y, n - 1)


def point(row: dict[str, Any]) -> tuple[float, float] | None:
    value = row.get("location")
    if isinstance(value, dict):
        return float(value["lat"]), float(value["lon"])
    if isinstance(value, str):
        lat, lon = value.split(",")
        return float(lat), float(lon)
    return None


@pytest.fixture(scope="session")
def ref() -> SimpleNamespace:
    """The helpers above, for tests (a namespace, so no test imports conftest)."""
    return SimpleNamespace(
        fold=fold, words=words, listed=listed, doc_id=doc_id, ids=ids,
        text_matches=text_matches, edit_distance=edit_distance,
        allowed_typos=allowed_typos, word_matches=word_matches, parse_date=parse_date,
        tile=tile, point=point,
        config=books_config, load_rows=load_rows, text_fields=TEXT_FIELDS,
        keyword_fields=KEYWORD_FIELDS, books=BOOKS,
    )


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh redis-server of this test's own (about 20 ms to start)."""
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> TypesenseServer:
    """The session's real Typesense server holding the books and awkward collections, for
    the Typesense modules (a module with collections of its own defines its ``server``)."""
    from tests.integration.typesense_server import shared_server

    return shared_server(request, tmp_path_factory)
