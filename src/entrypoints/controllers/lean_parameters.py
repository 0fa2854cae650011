"""A route's parameters read once, by one small reader made from the handler's own signature.

Litestar models a handler's parameters on every request: a kwargs model builds a dict per
source (query, path, headers: a ``Headers`` object), then a signature model converts all of
them into a msgspec struct and back into a dict. On the search route that was the largest
single cost of the framework (bench/RESULTS.md, "Parameters read once"). The signature stays
the one declaration of a route's parameters (the OpenAPI document is generated from it), and
``lean_parameters``, the route's ``before_request`` hook, reads what the signature declares
and calls the same handler with it, so Litestar's own modelling never runs:

- the query string is parsed as Litestar parses it (``parse_qsl`` of its latin-1 text, blank
  values kept, the last value of a repeated name wins), headers are matched without regard
  to case (the first one wins), path parameters come converted from the router;
- a value is converted to its declared type by msgspec, as lax as Litestar
  (``strict=False``), with the declared constraints (``max_length``...);
- a wrong value is Litestar's ``ValidationException``, with one message per wrong parameter
  in declaration order, in Litestar's words, so the 400 says exactly what it said before.

Only parameters of the query, path and headers, and ``request``, are read: a handler
declaring anything else (a body, a dependency) is refused when the reader is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import parse_qsl

import msgspec
from litestar import Request
from litestar.enums import ParamType
from litestar.exceptions import ValidationException
from litestar.handlers import HTTPRouteHandler
from litestar.params import KwargDefinition
from litestar.typing import FieldDefinition

Req = Request[Any, Any, Any]
_CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of", "pattern", "min_length", "max_length")
_UNSUPPORTED = ("const", "enum", "min_items", "max_items", "lower_case", "upper_case")
_MISSING: Any = object()
# the other names Litestar fills itself
_RESERVED = ("socket", "state", "headers", "cookies", "query", "scope", "body", "data")


class _Parameter:
    """One declared parameter: where it comes from, under which name, as which type."""

    __slots__ = ("default", "kind", "name", "plain", "source", "type")

    def __init__(self, name: str, field: FieldDefinition) -> None:
        self.name = name
        self.type: Any = Any
        kwarg = field.kwarg_definition
        self.default = field.default if field.has_default else None
        if name == "request":  # Litestar's reserved name for the request itself
            self.kind, self.source, self.plain = "request", "", True
            return
        if name in _RESERVED:
            raise TypeError(f"parameter {name!r}: Litestar's {name!r} is not supported")
        if kwarg is not None and not isinstance(kwarg, KwargDefinition):
            raise TypeError(f"parameter {name!r}: only query, path and header parameters "
                            "can be read without Litestar's modelling")
        param_type = getattr(kwarg, "param_type", ParamType.QUERY)
        alias = (getattr(kwarg, "name", None) or name) if kwarg is not None else name
        if param_type == ParamType.PATH:
            self.kind, self.source = "path", alias
        elif param_type == ParamType.HEADER:
            self.kind, self.source = "header", alias.lower()
        elif param_type == ParamType.QUERY:
            self.kind, self.source = "query", alias
        else:
            raise TypeError(f"parameter {name!r}: a {param_type} parameter is not supported")
        constraints = {}
        if kwarg is not None:
            for unsupported in _UNSUPPORTED:
                if getattr(kwarg, unsupported, None) is not None:
                    raise TypeError(f"parameter {name!r}: {unsupported} is not supported")
            constraints = {c: getattr(kwarg, c) for c in _CONSTRAINTS
                           if getattr(kwarg, c, None) is not None}
        annotation = field.annotation
        self.type = (Annotated[annotation, msgspec.Meta(**constraints)] if constraints
                     else annotation)
        # text taken as it is: no conversion can fail or change it
        self.plain = not constraints and annotation in (str, str | None)

    def convert(self, value: Any) -> Any:
        if self.plain or value is None:
            return value
        return msgspec.convert(value, self.type, strict=False)


class LeanReader:
    """Reads one handler's declared parameters from a request into its keyword arguments."""

    def __init__(self, handler: HTTPRouteHandler) -> None:
        self.parameters = tuple(
            _Parameter(name, field)
            for name, field in handler.parsed_fn_signature.parameters.items()
        )
        self._query = any(p.kind == "query" for p in self.parameters)
        self._headers = {p.source.encode("latin-1") for p in self.parameters
                         if p.kind == "header"}

    def read(self, request: Req) -> dict[str, Any]:
        scope = request.scope
        query: dict[str, str] = {}
        if self._query:
            # Litestar's own reading of a query string: the last value of a name wins
            query = dict(parse_qsl(scope["query_string"].decode("latin-1"),
                                   keep_blank_values=True, separator="&"))
        headers: dict[str, str] = {}
        if self._headers:
            for raw_name, raw_value in scope["headers"]:
                if raw_name in self._headers:
                    headers.setdefault(raw_name.decode("latin-1"), raw_value.decode("latin-1"))
        sources = {"query": query, "header": headers, "path": scope["path_params"]}
        kwargs: dict[str, Any] = {}
        for parameter in self.parameters:
            if parameter.kind == "request":
                kwargs[parameter.name] = request
                continue
            value = sources[parameter.kind].get(parameter.source, _MISSING)
            if value is _MISSING:
                kwargs[parameter.name] = parameter.default
                continue
            try:
                kwargs[parameter.name] = parameter.convert(value)
            except msgspec.ValidationError:
                raise self._invalid(sources) from None
        return kwargs

    def _invalid(self, sources: dict[str, dict[str, Any]]) -> ValidationException:
        """Every wrong parameter, in declaration order, worded as Litestar words them."""
        messages: list[dict[str, str]] = []
        for parameter in self.parameters:
            value = sources.get(parameter.kind, {}).get(parameter.source, _MISSING)
            if value is _MISSING:
                continue
            try:
                parameter.convert(value)
            except msgspec.ValidationError as exc:
                messages.append({"message": str(exc).split(" - ", maxsplit=1)[0],
                                 "key": parameter.name, "source": parameter.kind})
        return ValidationException(detail="Validation failed", extra=messages)


READER = "searchport.lean_reader"  # where a handler keeps its reader (its ``opt``)


def reader_of(handler: HTTPRouteHandler) -> LeanReader:
    """The handler's reader, made on its first request (kept with the handler it was made
    for: an ``opt`` dict shared by two handlers never hands one's reader to the other)."""
    known: tuple[HTTPRouteHandler, LeanReader] | None = handler.opt.get(READER)
    if known is None or known[0] is not handler:
        known = handler.opt[READER] = (handler, LeanReader(handler))
    return known[1]


async def lean_parameters(request: Req) -> Any:
    """A route's ``before_request`` hook: its handler called with its parameters read here,
    and its answer sent as the route's (Litestar then skips its own parameter modelling)."""
    handler: HTTPRouteHandler = request.route_handler
    fn: Callable[..., Any] = handler.fn
    return await fn(**reader_of(handler).read(request))
