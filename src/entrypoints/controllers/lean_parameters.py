"""A route's parameters read by one small reader per handler, made when the app is created.

Litestar models a handler's parameters on every request: a kwargs model builds a dict per
source (query, path, headers: a ``Headers`` object), then a signature model converts all of
them into a msgspec struct and back into a dict. On the search route that was the largest
single cost of the framework (bench/RESULTS.md, "Parameters read once"). The signature stays
the one declaration of a route's parameters (the OpenAPI document is generated from it).
``LeanParameters`` is a route's ``before_request`` hook: it reads what the handler's signature
declares and answers with the handler called on it, so Litestar's own modelling never runs.

``prepare(app)`` makes the reader of every route the hook is set on, from the handler's own
function (``inspect.signature``, ``typing.get_type_hints``) and Litestar's public parameter
classes (``QueryParameter``, ``HeaderParameter``, ``PathParameter``). A signature it cannot
read exactly as Litestar reads it is refused there, so ``create_app`` fails, never a request
(``http.leanParameters: false`` hands the reading back to Litestar). What is read is read as
Litestar reads it:

- a query string as ``parse_qsl`` of its latin-1 text, blank values kept; the last value of a
  repeated name wins, except for a list parameter, which keeps every value in order; headers
  by name without regard to case (the first one wins); path parameters as the router
  converted them;
- a value converted to its declared type by msgspec, as lax as Litestar (``strict=False``),
  with the declared constraints (``ge``, ``max_length``...); a missing parameter gets its
  default, or is Litestar's 400 when it is required (headers, then path, then query);
- a wrong value is Litestar's ``ValidationException``, one message per wrong parameter in
  declaration order, in Litestar's words.
"""

from __future__ import annotations

import inspect
import re
import typing
from typing import Any
from urllib.parse import parse_qsl

import msgspec
from litestar import Litestar, Request
from litestar.datastructures import URL
from litestar.enums import ParamType
from litestar.exceptions import ValidationException
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute

from searchport.entrypoints.controllers.lean_signature import Parameter, UnsupportedSignature

__all__ = ("LeanParameters", "LeanReader", "UnsupportedSignature")

Req = Request[Any, Any, Any]
_MISSING: Any = object()
_PATH_PARAMETER = re.compile(r"{([^:}]+):[^}]*}")
_MISSING_ORDER = ("header", "path", "query")  # the order Litestar looks for missing ones
# Litestar's own location of a conversion error inside a value (``$.field``)
_ERROR_AT = re.compile(r"`\$\.(.+)`$")
_IMMUTABLE = frozenset({bool, int, float, str, type(None)})  # converted values kept as they are
MEMO_TEXT = 64  # characters of a text whose conversion is kept
MEMO_SIZE = 256  # conversions kept per parameter (all forgotten past it)


def _where(request: Req) -> str:
    """The request's path and query string, as Litestar names them in its messages."""
    url = request.url
    return str(URL.from_components(path=url.path, query=url.query))


class LeanReader:
    """Reads one handler's declared parameters from a request into its keyword arguments."""

    def __init__(self, handler: HTTPRouteHandler, path_names: frozenset[str]) -> None:
        self.path_names = path_names
        fn = handler.fn
        where = f"handler {handler.handler_name!r}"
        if not inspect.iscoroutinefunction(fn):
            raise UnsupportedSignature(f"{where}: only an async handler can be read")
        try:
            hints = typing.get_type_hints(fn, localns=handler.resolve_signature_namespace(),
                                          include_extras=True)
        except Exception as exc:
            raise UnsupportedSignature(f"{where}: its annotations cannot be resolved") from exc
        answer = hints.get("return")
        answer_class = typing.get_origin(answer) or answer  # Response[T]: Response
        # Litestar calls the handler itself when the hook's answer is false: only an
        # instance of a class without __bool__ or __len__ is always true
        if not isinstance(answer_class, type) or any(hasattr(answer_class, m)
                                                     for m in ("__bool__", "__len__")):
            raise UnsupportedSignature(f"{where}: it must answer a response (an instance of a "
                                       f"class that is always true), not {answer!r}")
        if handler.resolve_layered_parameters():
            raise UnsupportedSignature(f"{where}: parameters declared on a layer "
                                       "(parameters=...) are not read here")
        dependencies = handler.dependency_name_set
        self.parameters = tuple(
            Parameter(f"{where}: parameter {name!r}", name, declared, hints.get(name, _MISSING),
                      path_names, dependencies)
            for name, declared in inspect.signature(fn).parameters.items()
        )
        seen: set[tuple[str, Any]] = set()
        for parameter in self.parameters:
            if parameter.kind != "request":
                if (parameter.kind, parameter.source) in seen:
                    raise UnsupportedSignature(f"{where}: two parameters read the {parameter.kind}"
                                               f" {parameter.alias!r}")
                seen.add((parameter.kind, parameter.source))
        self._query = any(p.kind == "query" for p in self.parameters)
        # by parameter, texts already converted to a value that cannot change (a number, a
        # truth value, a text): the same value again, without msgspec's conversion
        self._converted: dict[str, dict[str, Any]] = {p.name: {} for p in self.parameters}
        self._lists = frozenset(p.source for p in self.parameters if p.sequence)
        self._headers = frozenset(p.source for p in self.parameters if p.kind == "header")

    def read(self, request: Req) -> dict[str, Any]:
        scope = request.scope
        query: dict[str, Any] = {}
        if self._query:
            pairs = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True,
                              separator="&")
            if self._lists:
                for name, value in pairs:
                    if name in self._lists:
                        query.setdefault(name, []).append(value)
                    else:
                        query[name] = value
            else:
                query = dict(pairs)
        headers: dict[bytes, str] = {}
        if self._headers:
            for raw_name, raw_value in scope["headers"]:
                lower = raw_name.lower()
                if lower in self._headers and lower not in headers:
                    headers[lower] = raw_value.decode("latin-1")
        sources: dict[str, Any] = {"query": query, "header": headers, "path": scope["path_params"]}
        kwargs: dict[str, Any] = {}
        wrong = False
        for parameter in self.parameters:
            if parameter.kind == "request":
                kwargs[parameter.name] = request
                continue
            value = sources[parameter.kind].get(parameter.source, _MISSING)
            if value is _MISSING:
                if parameter.required:
                    raise self._missing(request, sources)
                kwargs[parameter.name] = parameter.default
            elif parameter.plain and value.__class__ is str:
                kwargs[parameter.name] = value
            else:
                memo = self._converted[parameter.name]
                known = memo.get(value, _MISSING) if value.__class__ is str else _MISSING
                if known is not _MISSING:
                    kwargs[parameter.name] = known
                    continue
                try:
                    converted = msgspec.convert(value, parameter.type, strict=False)
                except msgspec.ValidationError:
                    wrong = True
                    continue
                kwargs[parameter.name] = converted
                if (value.__class__ is str and len(value) <= MEMO_TEXT
                        and converted.__class__ in _IMMUTABLE):
                    if len(memo) >= MEMO_SIZE:
                        memo.clear()
                    memo[value] = converted
        if wrong:
            raise self._invalid(request, sources)
        return kwargs

    def _missing(self, request: Req, sources: dict[str, Any]) -> ValidationException:
        for kind in _MISSING_ORDER:
            for parameter in self.parameters:
                if (parameter.kind == kind and parameter.required
                        and parameter.source not in sources[kind]):
                    return ValidationException(f"Missing required {kind} parameter "
                                               f"{parameter.alias!r} for path {_where(request)}")
        raise AssertionError("no required parameter is missing")  # pragma: no cover

    def _invalid(self, request: Req, sources: dict[str, Any]) -> ValidationException:
        """Every wrong parameter, in declaration order, worded and placed as Litestar does
        (a name sent in the query string places it there, whatever its declared source)."""
        sent = {name for name, _ in parse_qsl(request.scope["query_string"].decode("latin-1"),
                                              keep_blank_values=True, separator="&")}
        messages: list[dict[str, Any]] = []
        for parameter in self.parameters:
            value = sources.get(parameter.kind, {}).get(parameter.source, _MISSING)
            if value is _MISSING:
                continue  # a default: checked when the reader was made
            try:
                msgspec.convert(value, parameter.type, strict=False)
            except msgspec.ValidationError as exc:
                text = str(exc)
                at = _ERROR_AT.search(text)
                key = f"{parameter.name}.{at.group(1)}" if at else parameter.name
                message: dict[str, Any] = {"message": text.split(" - ", maxsplit=1)[0],
                                           "key": key}
                if key in sent:
                    message["source"] = ParamType.QUERY
                elif key in sources["path"]:
                    message["source"] = ParamType.PATH
                elif key == parameter.name and parameter.declared_type is not None:
                    message["source"] = parameter.declared_type
                messages.append(message)
        return ValidationException(
            detail=f"Validation failed for {request.method} {_where(request)}", extra=messages)


class LeanParameters:
    """The ``before_request`` hook of the routes whose parameters are read here; ``prepare``
    makes their readers when the app is created."""

    def __init__(self) -> None:
        self._readers: dict[int, tuple[HTTPRouteHandler, LeanReader]] = {}

    # Litestar copies a controller's handlers with everything they hold: the copies share
    # this one hook, which holds the readers of them all
    def __copy__(self) -> LeanParameters:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> LeanParameters:
        return self

    def prepare(self, app: Litestar) -> None:
        """Make the reader of every route of ``app`` this hook is set on (``UnsupportedSignature``
        for a handler whose parameters it cannot read as Litestar does)."""
        for route in app.routes:
            if not isinstance(route, HTTPRoute):
                continue
            path_names = frozenset(n.strip() for n in _PATH_PARAMETER.findall(route.path))
            for handler in route.route_handlers:
                hook: object = handler.resolve_before_request()
                if hook is not self:
                    continue
                known = self._readers.get(id(handler))
                if known is None:
                    self._readers[id(handler)] = (handler, LeanReader(handler, path_names))
                elif known[1].path_names != path_names:
                    raise UnsupportedSignature(f"handler {handler.handler_name!r}: its paths "
                                               "declare different path parameters")

    @property
    def handlers(self) -> tuple[HTTPRouteHandler, ...]:
        """The handlers whose readers are made."""
        return tuple(handler for handler, _ in self._readers.values())

    async def __call__(self, request: Req) -> Any:
        handler: HTTPRouteHandler = request.route_handler
        known = self._readers.get(id(handler))
        if known is None:  # a programming error: create_app prepares every route
            raise RuntimeError(f"no reader for {handler.handler_name!r}: prepare(app) first")
        return await handler.fn(**known[1].read(request))

