"""One table from domain errors to HTTP statuses, and the ``{"error": ...}`` bodies (with
Algolia's ``message`` and ``status`` on the Algolia routes: ``error_bodies``)."""

from __future__ import annotations

import logging

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from searchport.domain import errors
from searchport.entrypoints.http.error_bodies import error_body
from searchport.entrypoints.http.request_context import REQUEST_ID_KEY

logger = logging.getLogger("searchport")

STATUS_BY_ERROR: tuple[tuple[type[errors.SearchportError], int], ...] = (
    (errors.InvalidRequest, 400),
    (errors.Forbidden, 403),
    (errors.NotFound, 404),
    (errors.PayloadTooLarge, 413),
    (errors.Unprocessable, 422),
    (errors.EngineUnavailable, 502),
    (errors.AnalyticsUnavailable, 503),
    (errors.EngineTimeout, 504),
)

HTTP_MESSAGES = {
    404: "No such route",
    405: "Method not allowed on this route",
    413: "The request body is too large",
}


def _json(
    request: Request,  # type: ignore[type-arg]
    status: int,
    sentence: str,
    headers: dict[str, str] | None = None,
    *,
    details: list[str] | msgspec.UnsetType = msgspec.UNSET,
    request_id: str | msgspec.UnsetType = msgspec.UNSET,
) -> Response[bytes]:
    body = error_body(status, sentence, request.scope["path"], details=details,
                      request_id=request_id)
    return Response(
        content=body,
        status_code=status,
        media_type="application/json",
        headers={"cache-control": "no-store", **(headers or {})},
    )


def _camel(name: str) -> str:
    """Parameters are declared in snake_case and sent in camelCase (per_page -> perPage)."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def status_of(exc: errors.SearchportError) -> int:
    for kind, status in STATUS_BY_ERROR:
        if isinstance(exc, kind):
            return status
    return 500


def domain_error(request: Request, exc: errors.SearchportError) -> Response[bytes]:  # type: ignore[type-arg]
    details = exc.details or msgspec.UNSET
    return _json(request, status_of(exc), exc.message, details=details)


def validation_error(request: Request, exc: ValidationException) -> Response[bytes]:  # type: ignore[type-arg]
    details = []
    for item in exc.extra if isinstance(exc.extra, list) else []:
        if isinstance(item, dict):
            key, message = item.get("key"), str(item.get("message", "invalid value"))
            message = (message[:1].lower() + message[1:]).replace(" | null", "")
            key = _camel(key) if isinstance(key, str) else key
            details.append(f"Invalid value for parameter '{key}': {message}" if key else message)
    if not details:
        detail = str(exc.detail or "The request is not valid")
        details.append(detail.split(" for path ")[0])
    extra = details if len(details) > 1 else msgspec.UNSET
    return _json(request, 400, details[0], details=extra)


ALGOLIA_ANSWERS = ("it answers searches (query, queries, facet values), browse, getObject, "
                   "getObjects, getSettings and listIndices")
ALGOLIA_UNSUPPORTED = (f"searchport does not support this Algolia call: {ALGOLIA_ANSWERS}, and "
                       "never changes records, settings or indices (it is read-only)")
ALGOLIA_READ_ONLY = ("searchport is read-only: it never changes records, settings or indices, "
                     f"so this Algolia call is not supported; {ALGOLIA_ANSWERS}")
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def http_error(request: Request, exc: HTTPException) -> Response[bytes]:  # type: ignore[type-arg]
    status = exc.status_code
    if status >= 500:
        return internal_error(request, exc)
    message = HTTP_MESSAGES.get(status) or (exc.detail if exc.detail else "Bad request")
    if request.scope["path"].startswith("/1/"):
        # an Algolia client's call searchport has no route for: say so in the client's words
        if status == 405 and request.method in WRITE_METHODS:
            message = ALGOLIA_READ_ONLY
        elif status == 404:
            message = ALGOLIA_UNSUPPORTED
    headers = dict(exc.headers or {})
    if status == 405:
        headers = {name: _with_head(value) if name.lower() == "allow" else value
                   for name, value in headers.items()}
    if status == 413:
        # the rest of the body is never read, so the connection cannot carry another request:
        # say so, or a client reusing it would see its next request cut off
        headers["connection"] = "close"
    return _json(request, status, str(message), headers)


def _with_head(allow: str) -> str:
    """A 405's ``Allow`` names ``HEAD`` wherever it names ``GET`` (``http/head.py``)."""
    methods = [m.strip() for m in allow.split(",") if m.strip()]
    if "GET" in methods and "HEAD" not in methods:
        methods.insert(methods.index("GET") + 1, "HEAD")
    return ", ".join(methods)


INTERNAL_ERROR = "Internal server error; quote the request id when reporting it"


def log_internal(exc: Exception, method: str, path: str, request_id: str) -> None:
    logger.error("unhandled %s on %s %s (request %s)", type(exc).__name__, method, path,
                 request_id, exc_info=exc)


def internal_error(request: Request, exc: Exception) -> Response[bytes]:  # type: ignore[type-arg]
    request_id = str(request.scope.get(REQUEST_ID_KEY, ""))
    log_internal(exc, request.method, request.url.path, request_id)
    return _json(request, 500, INTERNAL_ERROR, request_id=request_id or msgspec.UNSET)


EXCEPTION_HANDLERS = {
    errors.SearchportError: domain_error,
    ValidationException: validation_error,
    HTTPException: http_error,
    Exception: internal_error,
}
