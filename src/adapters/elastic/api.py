"""The HTTP API of an Elasticsearch-compatible server: ``EngineApi`` with its
authentication, its product check and its error bodies (``error.reason`` for the client,
``error.type`` for the log)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from searchport.adapters.elastic.parse import error_reason, error_type
from searchport.adapters.network.api import EngineApi, EngineError, folded
from searchport.adapters.network.exchange import Answer
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig

logger = logging.getLogger("searchport.elastic")


def read_error(status: int, answer: Any) -> EngineError:
    return EngineError(reason=folded(error_reason(answer)), code=error_type(answer))


def open_api(*, handle: str, engine: str, config: IndexConfig, resources: EngineResources,
             headers: Mapping[str, str], on_response: Callable[[Answer], None]) -> EngineApi:
    """``engine`` is the product's name (elasticsearch, opensearch)."""
    return EngineApi(handle=handle, engine=engine, missing="index", config=config,
                     resources=resources, headers=headers, read_error=read_error,
                     logger=logger, on_response=on_response)
