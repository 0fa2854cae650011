"""One declared parameter of a handler, as ``lean_parameters`` reads it, or refused.

What Litestar would read from a parameter is worked out here from the parameter itself
(``inspect.Parameter``, its resolved annotation, the ``ParameterKwarg`` in its ``Annotated``):
where it comes from and under which name, its type with its constraints, whether it is
required and its default. Whatever this cannot reproduce exactly is refused with
``UnsupportedSignature``, which names the parameter and what to change.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Set
from typing import Annotated, Any, Union

import msgspec
from litestar.enums import ParamType
from litestar.params import KwargDefinition, ParameterKwarg

_SCALARS = (str, int, float, bool)
_NUMBER = ("gt", "ge", "lt", "le", "multiple_of")
_TEXT = ("pattern", "min_length", "max_length")
# a ParameterKwarg's fields read here (name, required, the constraints), and those that only
# document the parameter (its OpenAPI entry); any other one set is refused
_UNDERSTOOD = frozenset({"name", "required", *_NUMBER, *_TEXT, "examples", "external_docs",
                         "content_encoding", "title", "description", "schema_extra",
                         "schema_component_key", "include_in_schema"})
# the names Litestar fills itself, besides ``request``
_RESERVED = frozenset({"socket", "state", "headers", "cookies", "query", "scope", "body",
                       "data"})
_ACCEPTED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_NO_HINT: Any = object()


class UnsupportedSignature(TypeError):
    """A handler's parameters cannot be read here exactly as Litestar reads them."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message} (or set http.leanParameters: false to have Litestar "
                         "read every route's parameters)")


def _optional_member(annotation: Any) -> Any:
    """``T`` of ``T | None``; ``_NO_HINT`` for any other union; the annotation otherwise."""
    if typing.get_origin(annotation) not in (Union, types.UnionType):
        return annotation
    members = [a for a in typing.get_args(annotation) if a is not type(None)]
    return members[0] if len(members) == 1 else _NO_HINT


class Parameter:
    """One declared parameter: where it comes from, under which name, as which type."""

    __slots__ = ("alias", "declared_type", "default", "kind", "name", "plain", "required",
                 "sequence", "source", "type")

    def __init__(self, where: str, name: str, declared: inspect.Parameter, hint: Any,
                 path_names: Set[str], dependencies: Set[str]) -> None:
        def refuse(why: str) -> UnsupportedSignature:
            return UnsupportedSignature(f"{where}: {why}")

        self.name = name
        self.kind = ""
        self.alias: str = name
        self.source: str | bytes = name  # a header's is its lower-case name in bytes
        self.type: Any = Any
        self.default: Any = None
        self.declared_type: ParamType | None = None
        self.required = self.plain = self.sequence = False
        if declared.kind not in _ACCEPTED:
            raise refuse("*args, **kwargs and positional-only parameters are not read")
        if name == "request":  # Litestar's reserved name for the request itself
            self.kind = "request"
            return
        if name in _RESERVED:
            raise refuse(f"Litestar's reserved {name!r} is not read")
        if name in dependencies:
            raise refuse("it is provided by a layer's dependencies, which are not read")
        if hint is _NO_HINT:
            raise refuse("it has no annotation")
        kwarg: ParameterKwarg | None = None
        annotation = hint
        if typing.get_origin(hint) is Annotated:
            annotation, *metadata = typing.get_args(hint)
            if len(metadata) != 1 or not isinstance(metadata[0], ParameterKwarg):
                raise refuse("only one QueryParameter, HeaderParameter or PathParameter may "
                             "annotate it")
            kwarg = metadata[0]
            for field in dataclasses.fields(kwarg):
                value = getattr(kwarg, field.name)
                if field.name not in _UNDERSTOOD and value is not field.default:
                    raise refuse(f"{field.name}= is not read")
        default = declared.default
        if isinstance(default, KwargDefinition):
            raise refuse("declare it in Annotated[...], not as its default")
        self._place(name, kwarg, path_names, refuse)
        self._typed(annotation, kwarg, refuse)
        # Litestar's rule, from its own definitions of a required field and parameter
        has_default = default is not inspect.Parameter.empty and default is not Ellipsis
        value = default if has_default else None
        required = kwarg.required if kwarg is not None and kwarg.required is not None \
            else not has_default
        optional = _optional_member(annotation) is not annotation
        self.required = required and value is None and not optional
        if not self.required:
            if self.sequence and value is not None:
                raise refuse("a list's default can only be None")
            try:  # Litestar converts a default as it converts a value
                self.default = msgspec.convert(value, self.type, strict=False)
            except msgspec.ValidationError:
                raise refuse(f"its default {value!r} is not a valid {annotation}") from None

    def _place(self, name: str, kwarg: ParameterKwarg | None, path_names: Set[str],
               refuse: Any) -> None:
        param_type = kwarg.param_type if kwarg is not None else ParamType.QUERY
        self.alias = (kwarg.name if kwarg is not None else None) or name
        self.declared_type = param_type if kwarg is not None else None
        if name in path_names:
            if (kwarg is not None and param_type != ParamType.PATH) or self.alias != name:
                raise refuse("a path parameter is declared plainly or with PathParameter(), "
                             "under its own name")
            self.kind, self.source = "path", name
        elif param_type == ParamType.QUERY:
            self.kind, self.source = "query", self.alias
        elif param_type == ParamType.HEADER:
            self.kind, self.source = "header", self.alias.lower().encode("latin-1")
        else:
            raise refuse(f"a {param_type.value} parameter is not read (a path parameter must "
                         "be in the route's path)")

    def _typed(self, annotation: Any, kwarg: ParameterKwarg | None, refuse: Any) -> None:
        inner = _optional_member(annotation)
        optional = inner is not annotation
        self.sequence = inner is list or typing.get_origin(inner) is list
        members = typing.get_args(inner)
        item = (members[0] if len(members) == 1 else _NO_HINT) if self.sequence else inner
        if item not in _SCALARS:
            raise refuse(f"{annotation} is not read: str, int, float or bool, a list of one "
                         "(query only), each may be optional")
        if self.sequence and self.kind != "query":
            raise refuse("only a query parameter may be a list")
        constraints = {c: getattr(kwarg, c) for c in (*_NUMBER, *_TEXT)
                       if kwarg is not None and getattr(kwarg, c) is not None}
        if not constraints:
            self.type = annotation
            self.plain = self.kind != "path" and annotation in (str, str | None)
            return
        fits = _NUMBER if item in (int, float) else _TEXT if item is str else ()
        if self.sequence or not set(constraints) <= set(fits):
            raise refuse(f"{', '.join(constraints)} cannot constrain {annotation}")
        # as Litestar builds it: the constraints on the type, None stays allowed
        constrained: Any = Annotated[item, msgspec.Meta(**constraints)]
        self.type = constrained | None if optional else constrained
