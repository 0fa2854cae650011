"""The rule for query-string names on searchport's own routes: a name the route does not
declare is a 400 naming it (docs/http-api.md), as the Algolia routes refuse theirs, so a
typo (``limit=2`` for ``perPage=2``) is never a silent answer to another question.

``unknown_names_refused()`` makes a ``before_request`` hook, Litestar's documented place for
work before a handler: it runs before Litestar reads the parameters, and takes the declared
names from the handler's signature as Litestar parsed it (``parsed_fn_signature``), so the
signature stays the one declaration of a route's parameters (and of its OpenAPI entry).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Set
from typing import Any

from litestar import Request
from litestar.enums import ParamType
from litestar.handlers import HTTPRouteHandler
from litestar.params import ParameterKwarg

from searchport.domain.errors import InvalidRequest

# the names Litestar fills itself rather than from the query string
RESERVED = frozenset({"request", "socket", "state", "scope", "headers", "cookies", "query",
                      "body", "data"})


def declared_names(handler: HTTPRouteHandler, path_names: Set[str]) -> tuple[str, ...]:
    """The query-string names ``handler`` reads, in the order it declares them."""
    dependencies = handler.resolve_dependencies()
    names = []
    for name, field in handler.parsed_fn_signature.parameters.items():
        if name in RESERVED or name in path_names or name in dependencies:
            continue
        kwarg = field.kwarg_definition
        if kwarg is None:
            names.append(name)
        elif isinstance(kwarg, ParameterKwarg) and kwarg.param_type is ParamType.QUERY:
            names.append(kwarg.name or name)
    return tuple(names)


def _refusal(name: str, declared: tuple[str, ...]) -> str:
    takes = f"takes {', '.join(declared)}" if declared else "takes no query parameters"
    return f"Unknown parameter '{name}': this route {takes}"


def unknown_names_refused() -> Callable[[Request[Any, Any, Any]], Awaitable[None]]:
    """The hook of one app's routes. A handler's names are read on its first request and
    kept, by handler: reading a signature costs more than the rest of the check."""
    declared: dict[int, tuple[HTTPRouteHandler, tuple[str, ...]]] = {}

    async def refuse_unknown_names(request: Request[Any, Any, Any]) -> None:
        """A 400 naming each query-string name the route does not declare (a CORS
        preflight, whose body no client reads, is left to Litestar's CORS answer)."""
        if not request.scope["query_string"] or request.method == "OPTIONS":
            return
        handler = request.route_handler
        known = declared.get(id(handler))
        if known is None:  # the handler is kept with its names, so its id stays its own
            known = declared[id(handler)] = (
                handler, declared_names(handler, request.path_params.keys()))
        names = known[1]
        unknown = [name for name in dict.fromkeys(request.query_params) if name not in names]
        if unknown:
            details = [_refusal(name, names) for name in unknown]
            raise InvalidRequest(details[0], details if len(details) > 1 else None)

    return refuse_unknown_names
