"""The HTTP API of a Typesense server: ``EngineApi`` with its API key header and its
errors.

Typesense answers errors as ``{"message": "..."}`` with the HTTP status; inside a
``multi_search`` answer each failed search is ``{"code": 400, "error": "..."}`` in a 200.
Both are read by ``engine_error``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from searchport.adapters.network.api import EngineApi, EngineError, folded
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig
from searchport.domain.errors import SearchportError

logger = logging.getLogger("searchport.typesense")

ENGINE = "typesense"
API_KEY_HEADER = "X-TYPESENSE-API-KEY"
# A 404 about a field (facet, sort, filter, query_by) is a bad query, not a missing collection.
FIELD_NOT_FOUND = "could not find a"
OVERLOADED = (429, 503)  # 503: not ready, or lagging behind its writes


def engine_error(status: int, message: Any) -> EngineError:
    reason = folded(message if isinstance(message, str) else "")
    return EngineError(
        reason=reason, bad_query=status == 404 and reason.lower().startswith(FIELD_NOT_FOUND)
    )


def read_error(status: int, answer: Any) -> EngineError:
    return engine_error(status, answer.get("message") if isinstance(answer, Mapping) else None)


def open_api(*, handle: str, config: IndexConfig, resources: EngineResources) -> EngineApi:
    headers = {API_KEY_HEADER: config.api_key} if config.api_key else {}
    return EngineApi(handle=handle, engine=ENGINE, missing="collection", config=config,
                     resources=resources, headers=headers, read_error=read_error,
                     logger=logger, overloaded=OVERLOADED)


def search_failure(api: EngineApi, code: Any, message: Any) -> SearchportError:
    """One failed search of a ``multi_search`` answer."""
    status = code if isinstance(code, int) and not isinstance(code, bool) else 500
    said = engine_error(status, message)
    logger.warning("%s: a search of multi_search answered %s %s", api.handle, status,
                   said.reason)
    return api.error_for(status, said)
