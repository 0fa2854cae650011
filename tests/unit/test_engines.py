"""The engine table names, for every engine, an adapter factory that exists."""

from __future__ import annotations

import pytest

from searchport.domain.engines import ENGINE_NAMES, ENGINES, Engine
from searchport.entrypoints.container import engine_factory


@pytest.mark.parametrize("engine", ENGINES, ids=lambda engine: engine.name)
def test_every_engine_names_a_factory_that_exists(engine: Engine) -> None:
    assert callable(engine_factory(engine.name))


def test_every_engine_is_listed_once() -> None:
    assert len(set(ENGINE_NAMES)) == len(ENGINES)
