"""The engine table and the adapters' table name the same engines, each with a factory."""

from __future__ import annotations

import pytest

from searchport.adapters.engines import ADAPTERS
from searchport.domain.engines import ENGINE_NAMES, ENGINES, Engine


@pytest.mark.parametrize("engine", ENGINES, ids=lambda engine: engine.name)
def test_every_engine_has_an_adapter_factory(engine: Engine) -> None:
    assert callable(ADAPTERS[engine.name])


def test_every_engine_is_listed_once_and_every_adapter_is_an_engine() -> None:
    assert len(set(ENGINE_NAMES)) == len(ENGINES)
    assert set(ADAPTERS) == set(ENGINE_NAMES)
