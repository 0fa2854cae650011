"""The HTTP exchange of a Meilisearch server: ``EngineHttp`` with its bearer key and its
error bodies ``{message, code, type, link}`` (the message for the client when it rejected
the query, the code for the log)."""

from __future__ import annotations

import logging
from typing import Any

from searchport.adapters.engine_http import EngineError, EngineHttp, EngineLink, folded
from searchport.adapters.meilisearch.parse import error_code, error_message

logger = logging.getLogger("searchport.meilisearch")

ENGINE = "meilisearch"


def read_error(status: int, answer: Any) -> EngineError:
    code = error_code(answer)
    # any other 404 (a route, a document) is not about the configured index
    return EngineError(reason=folded(error_message(answer)), code=code,
                       missing_target=code == "index_not_found")


def transport(*, handle: str, link: EngineLink, api_key: str | None) -> EngineHttp:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return EngineHttp(handle=handle, engine=ENGINE, missing="index", link=link,
                      headers=headers, read_error=read_error, logger=logger)
