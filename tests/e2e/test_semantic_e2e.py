"""Search by meaning through a real ``searchport serve``: the parent builds the index and
its vectors (with the embedding progress on its output) before the worker starts, the
worker loads the model and answers hybrid searches; a second start reuses everything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import start_server
from tests.integration.test_tantivy_hybrid import PLACES
from tests.semantic_model import require_model

pytestmark = pytest.mark.e2e

CONFIG = """analytics: {backend: none}
indexes:
  places:
    engine: tantivy
    path: index/places
    source: places.jsonl
    fields:
      name: {type: text, weight: 3}
      description: {type: text, searchable: true}
      region: {type: keyword}
    semantic:
      fields: [name, description]
"""


def test_serve_builds_the_vectors_and_answers_by_meaning(tmp_path: Path) -> None:
    require_model()
    (tmp_path / "places.jsonl").write_text("".join(
        json.dumps({"id": i, "name": n, "region": r, "description": d}) + "\n"
        for i, n, r, d in PLACES), "utf-8")
    server = start_server(CONFIG, tmp_path, timeout=180)
    try:
        output = server.output()
        assert "places: computed the vectors of 10 records" in output
        assert "embedding places" in output
        words = server.client.get("/places/search", params={"q": "where are movies made"})
        hybrid = server.client.get("/places/search", params={
            "q": "where are movies made", "semantic": "0.5", "facets": "region"})
        assert words.json()["totalHits"] == 0
        assert hybrid.status_code == 200, hybrid.text
        assert hybrid.json()["hits"][0]["name"] == "Mumbai"
        assert "x-searchport-semantic" not in hybrid.headers
    finally:
        server.stop()
    again = start_server(CONFIG, tmp_path, timeout=180)
    try:
        assert "computed the vectors" not in again.output()
        response = again.client.get("/places/search", params={"q": "oxford", "semantic": "1"})
        assert response.json()["hits"][0]["name"] == "Oxford"
    finally:
        again.stop()
