"""The HTTP API of a Meilisearch server: ``EngineApi`` with its bearer key and its
error bodies ``{message, code, type, link}`` (the message for the client when it rejected
the query, the code for the log)."""

from __future__ import annotations

import logging
from typing import Any

from searchport.adapters.meilisearch.parse import error_code, error_message
from searchport.adapters.network.api import EngineApi, EngineError, folded
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig

logger = logging.getLogger("searchport.meilisearch")

ENGINE = "meilisearch"


def read_error(status: int, answer: Any) -> EngineError:
    code = error_code(answer)
    # any other 404 (a route, a document) is not about the configured index
    return EngineError(reason=folded(error_message(answer)), code=code,
                       missing_target=code == "index_not_found")


def open_api(*, handle: str, config: IndexConfig, resources: EngineResources) -> EngineApi:
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    return EngineApi(handle=handle, engine=ENGINE, missing="index", config=config,
                     resources=resources, headers=headers, read_error=read_error,
                     logger=logger)
