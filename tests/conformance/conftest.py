"""One real app per engine, over the same conformance dataset, its handle carrying the
query rules and replicas of ``merchandising``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.conformance.backends import BACKENDS, Session
from tests.conformance.merchandising import REPLICAS, RULES

HANDLE = "books"


@pytest.fixture(scope="session", params=sorted(BACKENDS))
def api(request: pytest.FixtureRequest,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Any]]:
    name: str = request.param
    tmp = tmp_path_factory.mktemp(f"conformance-{name}")
    with BACKENDS[name](Session(tmp, request.config, tmp_path_factory)) as settings:
        handle = {**settings, "rules": RULES}
        config = parse_config(yaml.safe_dump({"indexes": {HANDLE: handle, **REPLICAS}}), {})
        app = create_app(create_container(config, tmp))
        with TestClient(app) as client:
            client.engine_name = settings["engine"]  # type: ignore[attr-defined]
            yield client
