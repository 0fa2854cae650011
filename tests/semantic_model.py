"""The builtin embedder's packages (the ``semantic`` extra, which the test extra brings):
the tests that run the real model are skipped without them, except in CI (env ``CI``
set), where that is a failure."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import pytest

from searchport.adapters.semantic import settings


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


def ranking_by_meaning(places: Sequence[tuple[str, str, str, str]]
                       ) -> Callable[[str, str | None], list[str]]:
    """The names of ``places`` (id, name, region, description), nearest in meaning to a
    text first, within a region if given: the builtin model's cosines over each row's
    "name. description" (the text the handles embed), computed here, apart from searchport's
    ranking."""
    require_model()
    from searchport.adapters.semantic.minilm import MiniLM

    model = MiniLM()
    vectors = model.embed([f"{n}. {d}" for _, n, _, d in places])

    def rank(text: str, region: str | None = None) -> list[str]:
        query = model.embed([text])[0]
        scores = [float(v @ query) for v in vectors]
        order = sorted(range(len(places)), key=lambda i: (-scores[i], i))
        return [places[i][1] for i in order if region in (None, places[i][2])]
    return rank
