"""The builtin embedder's packages (the ``semantic`` extra, which the test extra brings):
the tests that run the real model are skipped without them, except in CI (env ``CI``
set), where that is a failure."""

from __future__ import annotations

import os

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
