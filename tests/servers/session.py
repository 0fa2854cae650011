"""What the real nodes share within a test session: one node per engine, started by the
first test that asks, stopped (and its folder removed) when the session ends, and skipped
without the tools it needs on a developer's machine, failing instead under ``CI``."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import pytest

from tests.servers.by_hand import Node

N = TypeVar("N", bound=Node)
_NODES: dict[str, Node] = {}


def missing(reason: str) -> NoReturn:
    """Skip the test on a developer's machine; fail it under ``CI``, which has the tools."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI machines have it")
    pytest.skip(reason)


def session_node(config: pytest.Config, engine: str, make: Callable[[Path], N]) -> N:
    """The session's node of ``engine``, made in a temporary folder of its own."""
    node = _NODES.get(engine)
    if node is None:
        home = Path(tempfile.mkdtemp(prefix=f"searchport-{engine}-"))
        try:
            made = make(home)
            made.start()
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            raise

        def stop() -> None:
            made.stop()
            shutil.rmtree(home, ignore_errors=True)

        config.add_cleanup(stop)
        _NODES[engine] = node = made
    return node  # type: ignore[return-value]
