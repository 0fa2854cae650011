"""The builtin embedder's packages (the ``semantic`` extra, which the test extra brings):
the tests that run the real model are skipped without them, except in CI (env ``CI``
set), where that is a failure. And the expected rankings of hybrid searches, computed here
from the model's cosines and the fusion's formula written out, apart from searchport's."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from searchport import demo
from searchport.adapters.semantic import settings
from searchport.domain.config import BUILTIN_FLOOR

K = 60  # the rank constant of reciprocal rank fusion
Place = tuple[str, str, str, str]  # id, name, region, description


def require_model() -> None:
    """Skip (fail in CI) when the builtin model cannot be loaded by this install."""
    import importlib.util

    missing = [n for n in settings.REQUIRED if importlib.util.find_spec(n) is None]
    if not missing:
        return
    reason = f"the builtin embedder is not installed ({', '.join(missing)}): {settings.INSTALL}"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def demo_places(count: int) -> list[dict[str, Any]]:
    """The demo's ``count`` most populous places (``src/demo/places.jsonl.gz``: each with
    its description, a ``region`` and an ``id``)."""
    with gzip.open(demo.PLACES, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line, _ in zip(lines, range(count), strict=False)]


def nearest(model: Any, places: Sequence[Place], text: str, region: str | None = None
            ) -> list[tuple[str, float]]:
    """The ids of ``places`` (within ``region`` if given) with their cosine to ``text``,
    nearest first: the model's vectors of each row's "name. description" (the text the
    handles embed)."""
    rows = [p for p in places if region in (None, p[2])]
    vectors = model.embed([f"{n}. {d}" for _, n, _, d in rows])
    query = model.embed([text])[0]
    scores = [float(v @ query) for v in vectors]
    return [(rows[i][0], scores[i])
            for i in sorted(range(len(rows)), key=lambda i: (-scores[i], i))]


def fused(keyword: Sequence[str], meaning: Sequence[tuple[str, float]], share: float,
          floor: float = BUILTIN_FLOOR) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion (k = 60) with its scores, ties in keyword then
    meaning order: ``(1 - share) / (k + r)`` for a record ranked ``r`` by words, plus
    ``share / (k + r)`` for one ranked ``r`` among the records whose cosine passes
    ``floor`` (all of them when ``share`` is 1)."""
    score: dict[str, float] = {}
    if share < 1:
        for rank, key in enumerate(keyword, start=1):
            score[key] = score.get(key, 0.0) + (1 - share) / (K + rank)
    counted = []
    for key, cosine in meaning:
        if share > 0 and (share == 1 or cosine > floor):
            counted.append(key)
            score[key] = score.get(key, 0.0) + share / (K + len(counted))
    order = [key for key, _ in meaning]
    first = {k: (keyword.index(k) if k in keyword and share < 1 else 99,
                 order.index(k) if k in counted else 99) for k in score}
    return sorted(score.items(), key=lambda item: (-item[1], *first[item[0]]))


def ranking_by_meaning(places: Sequence[Place]
                       ) -> Callable[[str, str | None, float | None], list[str]]:
    """The names of ``places`` nearest in meaning to a text first, within a region if
    given (``nearest``), only those whose cosine passes ``above`` if given: the records a
    fused search brings by meaning alone when words find none."""
    require_model()
    from searchport.adapters.semantic.minilm import MiniLM

    model = MiniLM()
    name = {p[0]: p[1] for p in places}

    def rank(text: str, region: str | None = None, above: float | None = None) -> list[str]:
        return [name[doc_id] for doc_id, cosine in nearest(model, places, text, region)
                if above is None or cosine > above]
    return rank
