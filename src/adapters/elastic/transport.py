"""The HTTP exchange of an Elasticsearch-compatible server: ``EngineHttp`` with its
authentication, its product check and its error bodies (``error.reason`` for the client,
``error.type`` for the log)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from searchport.adapters.elastic.parse import error_reason, error_type
from searchport.adapters.engine_http import EngineError, EngineHttp, EngineLink, folded
from searchport.adapters.exchange import Answer

logger = logging.getLogger("searchport.elastic")


def read_error(status: int, answer: Any) -> EngineError:
    return EngineError(reason=folded(error_reason(answer)), code=error_type(answer))


def transport(*, handle: str, engine: str, link: EngineLink, headers: Mapping[str, str],
              on_response: Callable[[Answer], None]) -> EngineHttp:
    """``engine`` is the product's name (elasticsearch, opensearch)."""
    return EngineHttp(handle=handle, engine=engine, missing="index", link=link,
                      headers=headers, read_error=read_error, logger=logger,
                      on_response=on_response)
