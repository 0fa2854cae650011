"""The domain's exception tree; the HTTP layer maps each class to one status code.

    SearchportError
    ├── InvalidRequest          400  bad input a client can fix
    │   ├── UnsupportedFeature  400  the handle's engine cannot do this
    │   └── InvalidQuery        400  the engine rejected the query it was given
    ├── Forbidden               403  a feature switched off for this handle
    ├── NotFound                404
    │   ├── IndexNotFound
    │   └── DocumentNotFound
    ├── PayloadTooLarge         413
    ├── Unprocessable           422  well-formed, but not what the route takes (an event)
    ├── EngineUnavailable       502  engine unreachable, failing or refusing our credentials
    ├── AnalyticsUnavailable    503  the analytics store cannot be reached or used
    └── EngineTimeout           504
"""

from __future__ import annotations


class SearchportError(Exception):
    """Base class: ``message`` is one sentence a user can act on."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []


class InvalidRequest(SearchportError):
    pass


class UnsupportedFeature(InvalidRequest):
    def __init__(self, feature: str, engine: str) -> None:
        super().__init__(f"{feature} is not supported by the {engine} engine")
        self.feature = feature
        self.engine = engine


class InvalidQuery(InvalidRequest):
    pass


class Forbidden(SearchportError):
    pass


class NotFound(SearchportError):
    pass


class IndexNotFound(NotFound):
    def __init__(self, handle: str) -> None:
        super().__init__(f'Index "{handle}" not found')
        self.handle = handle


class DocumentNotFound(NotFound):
    def __init__(self) -> None:
        super().__init__("Document not found")


class PayloadTooLarge(SearchportError):
    pass


class Unprocessable(SearchportError):
    pass


class EngineUnavailable(SearchportError):
    pass


class EngineTimeout(SearchportError):
    pass


class AnalyticsUnavailable(SearchportError):
    pass
