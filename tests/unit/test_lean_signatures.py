"""``LeanParameters`` against Litestar over generated handler signatures.

Each example declares a handler from a generated list of parameters (query, header and path
parameters of str, int, float or bool, optional or not, lists in the query, with or without
a ``QueryParameter``/``HeaderParameter``/``PathParameter``, an alias, constraints, ``required``
and a default) and registers it twice: read by the hook, and read by Litestar. Generated
requests (repeated names, blank and wrong values, aliases and field names, headers in any
case) must get the same status and body from both. A signature with one feature the reader
does not read must stop the app from being made.
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass, field
from typing import Annotated, Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar import Litestar, Request, Response, get
from litestar.di import Provide
from litestar.params import CookieParameter, HeaderParameter, PathParameter, QueryParameter

from searchport.entrypoints.controllers.lean_parameters import (
    LeanParameters,
    UnsupportedSignature,
)

NO_DEFAULT: Any = inspect.Parameter.empty
FITTING = {str: "abc", int: 4, float: 4.0, bool: True}  # fits every constraint below
# sets that can go together (msgspec refuses gt with ge, lt with le)
CONSTRAINTS: dict[type, list[tuple[tuple[str, Any], ...]]] = {
    str: [(("min_length", 1),), (("max_length", 3),), (("pattern", "^[a-z]+$"),),
          (("min_length", 2), ("max_length", 3))],
    int: [(("ge", -1),), (("le", 10), ("gt", -5)), (("multiple_of", 2),),
          (("ge", 0), ("lt", 5), ("multiple_of", 2))],
    float: [(("ge", -1.5),), (("lt", 10),), (("gt", -2), ("multiple_of", 2))],
    bool: [],
}
VALUES = ["", "1", "4", "-3", "abc", "ABC", "abcd", "1.5", " 2", "+1", "1e3", "nan", "true",
          "False", "0", "é", "%FF", "%C3%A9", "a%20b", "%2B4", "99999999999999999999"]
KWARGS = {"query": QueryParameter, "header": HeaderParameter, "path": PathParameter}


@dataclass(frozen=True)
class Declared:
    """One generated parameter of a handler."""

    name: str
    kind: str  # query, header, path or request
    item: type = str
    optional: bool = False
    listed: bool = False
    kwarg: bool = True  # declared with a Litestar parameter class (else inferred)
    alias: str | None = None
    constraints: tuple[tuple[str, Any], ...] = ()
    required: bool | None = None
    default: Any = NO_DEFAULT
    extra: dict[str, Any] = field(default_factory=dict)  # anything else the kwarg gets

    def annotation(self) -> Any:
        if self.kind == "request":
            return Request[Any, Any, Any]
        base: Any = list[self.item] if self.listed else self.item  # type: ignore[name-defined]
        if self.optional:
            base = base | None
        if not self.kwarg:
            return base
        kwarg = KWARGS[self.kind](name=self.alias, required=self.required,
                                  **dict(self.constraints), **self.extra)
        return Annotated[base, kwarg]

    @property
    def source(self) -> str:
        name = self.alias or self.name
        return name.lower() if self.kind == "header" else name


def _declared(kind: str, name: str) -> st.SearchStrategy[Declared]:
    """A parameter the reader reads (so the comparison must hold)."""

    @st.composite
    def one(draw: st.DrawFn) -> Declared:
        if kind == "path":  # its type comes from the route's path (below)
            return Declared(name, "path", item=draw(st.sampled_from([str, int, float])),
                            kwarg=draw(st.booleans()))
        item = draw(st.sampled_from([str, int, float, bool]))
        listed = kind == "query" and draw(st.booleans())
        optional = draw(st.booleans())
        kwarg = kind == "header" or draw(st.booleans())
        alias = draw(st.sampled_from([None, "perPage", "zz", "Q", "x-Token"])) if kwarg else None
        constraints: tuple[tuple[str, Any], ...] = ()
        if kwarg and not listed and CONSTRAINTS[item] and draw(st.booleans()):
            constraints = draw(st.sampled_from(CONSTRAINTS[item]))
        required = draw(st.sampled_from([None, True, False])) if kwarg else None
        if listed:
            default = draw(st.sampled_from([NO_DEFAULT, None])) if optional else NO_DEFAULT
        else:
            choices = [NO_DEFAULT, FITTING[item], *([None] if optional else [])]
            default = draw(st.sampled_from(choices))
        if required is False and default is NO_DEFAULT and not optional:
            required = None  # it would be None, which its type refuses: see the refusals
        return Declared(name, kind, item=item, optional=optional, listed=listed, kwarg=kwarg,
                        alias=alias, constraints=constraints, required=required,
                        default=default)

    return one()


@st.composite
def signatures(draw: st.DrawFn) -> list[Declared]:
    names = draw(st.lists(st.sampled_from(["a", "b", "page", "per_page", "q", "ids", "flag"]),
                          unique=True, max_size=5))
    declared = [draw(_declared(draw(st.sampled_from(["query", "query", "header"])), name))
                for name in names]
    declared += [draw(_declared("path", name))
                 for name in draw(st.lists(st.sampled_from(["p", "doc"]), unique=True))]
    if draw(st.booleans()):
        declared.insert(draw(st.integers(0, len(declared))), Declared("request", "request"))
    # two parameters never read the same name of the same source (the reader refuses it)
    seen: set[tuple[str, str]] = set()
    unique = []
    for one in declared:
        if (one.kind, one.source) not in seen:
            seen.add((one.kind, one.source))
            unique.append(one)
    return unique


def _path(declared: list[Declared]) -> str:
    kinds = {str: "str", int: "int", float: "float"}
    return "/r" + "".join(f"/{{{d.name}:{kinds[d.item]}}}" for d in declared
                          if d.kind == "path")


def _handler(declared: list[Declared], hook: LeanParameters | None) -> Any:
    async def handler(**kwargs: Any) -> Response[Any]:
        return Response({name: "request" if name == "request" else [type(v).__name__, v]
                         for name, v in kwargs.items()})

    parameters = [inspect.Parameter(d.name, inspect.Parameter.KEYWORD_ONLY, default=d.default,
                                    annotation=d.annotation()) for d in declared]
    handler.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        parameters, return_annotation=Response)
    handler.__annotations__ = {**{d.name: d.annotation() for d in declared},
                               "return": Response}
    return get(_path(declared), before_request=hook)(handler)


def _app(declared: list[Declared], hook: LeanParameters | None, **layers: Any) -> Litestar:
    return Litestar([_handler(declared, hook)], openapi_config=None, logging_config=None,
                    **layers)


def _apps(declared: list[Declared], **layers: Any) -> tuple[Litestar, Litestar]:
    hook = LeanParameters()
    lean = _app(declared, hook, **layers)
    hook.prepare(lean)
    return lean, _app(declared, None, **layers)


Asked = tuple[str, list[tuple[str, str]]]


async def _answers(app: Litestar, asked: list[Asked]) -> list[tuple[int, Any]]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        answers = []
        for url, headers in asked:
            answer = await client.get(url, headers=headers)
            answers.append((answer.status_code, answer.json()))
        return answers


@st.composite
def requests(draw: st.DrawFn, declared: list[Declared]) -> tuple[str, list[tuple[str, str]]]:
    path = "/r"
    for d in declared:
        if d.kind == "path":
            pool = {str: ["abc", "12", "x%20y", "-3"], int: ["5", "-2", "0"],
                    float: ["1.5", "2", "-0.5"]}[d.item]
            path += "/" + draw(st.sampled_from(pool))
    names = [d.source for d in declared if d.kind == "query"]
    names += [d.name for d in declared] + ["other"]
    pairs = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(VALUES)),
                          max_size=8))
    query = "&".join(f"{name}={value}" for name, value in pairs)
    headers = []
    for d in declared:
        if d.kind == "header" and draw(st.booleans()):
            spelled = draw(st.sampled_from([d.source, d.source.upper(), d.source.title()]))
            for value in draw(st.lists(st.sampled_from(VALUES[:9]), min_size=1, max_size=2)):
                headers.append((spelled, value))
    return f"{path}?{query}" if query else path, headers


def _missing_required(declared: list[Declared], detail: str) -> str | None:
    """The kind of missing required parameter a 400 names, when it names one (Litestar picks
    one among several of that kind in no fixed order)."""
    prefix = "Missing required "
    if not detail.startswith(prefix):
        return None
    kind, _, rest = detail[len(prefix):].partition(" parameter ")
    return kind if rest.split("'")[1] in {d.alias or d.name for d in declared
                                          if d.kind == kind} else None


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), declared=signatures())
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_generated_signatures_are_read_as_litestar_reads_them(
    data: st.DataObject, declared: list[Declared],
) -> None:
    lean, modelled = _apps(declared)
    asked = [data.draw(requests(declared)) for _ in range(6)]
    answers = zip(asyncio.run(_answers(lean, asked)), asyncio.run(_answers(modelled, asked)),
                  strict=True)
    for request, (mine, theirs) in zip(asked, answers, strict=True):
        assert mine[0] == theirs[0], (request, mine, theirs)
        if mine == theirs:
            continue
        # two required parameters of one kind missing: each names one of them
        kind = _missing_required(declared, mine[1]["detail"])
        assert kind is not None, (request, mine, theirs)
        assert kind == _missing_required(declared, theirs[1]["detail"]), (request, mine, theirs)


def _refused(declared: list[Declared], why: str, **layers: Any) -> None:
    """Litestar reads this signature; the hook refuses it when the app is made."""
    _app(declared, None, **layers)
    hook = LeanParameters()
    app = _app(declared, hook, **layers)
    with pytest.raises(UnsupportedSignature, match=why):
        hook.prepare(app)


UNREAD = [
    (Declared("c", "query", extra={"min_items": 1}, item=int, listed=True), "min_items"),
    (Declared("c", "query", item=int, constraints=(("ge", 5),), default=1), "default 1"),
    (Declared("c", "query", item=int, default=None, kwarg=False), "default None"),
    (Declared("c", "query", item=int, required=False), "default None"),
    (Declared("c", "query", item=int, listed=True, default=()), "list's default"),
    (Declared("c", "query", item=bool, constraints=(("ge", 1),)), "cannot constrain"),
    (Declared("c", "query", item=str, constraints=(("ge", 1),)), "cannot constrain"),
    (Declared("c", "header", item=int, listed=True), "only a query parameter"),
    (Declared("c", "query", item=bytes), "is not read"),
    (Declared("c", "query", extra={"lower_case": True}), "lower_case"),
    (Declared("scope", "query", kwarg=False), "reserved"),
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(("unread", "why"), UNREAD, ids=[why for _, why in UNREAD])
@given(declared=signatures())
@settings(max_examples=5, deadline=None)
def test_a_signature_with_one_unread_feature_stops_the_app(
    declared: list[Declared], unread: Declared, why: str,
) -> None:
    _refused([d for d in declared if d.name != unread.name] + [unread], why)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@given(declared=signatures())
@settings(max_examples=10, deadline=None)
def test_a_cookie_a_layer_dependency_or_a_layer_parameter_stops_the_app(
    declared: list[Declared],
) -> None:
    lean = LeanParameters()

    @get("/cookie", before_request=lean)
    async def with_cookie(c: Annotated[str, CookieParameter()] = "") -> Response[Any]:
        return Response(c)

    with pytest.raises(UnsupportedSignature, match="cookie parameter"):
        lean.prepare(Litestar([with_cookie], openapi_config=None))
    _refused([*declared, Declared("c", "query")], "dependencies",
             dependencies={"c": Provide(lambda: "x", sync_to_thread=False)})
    _refused(declared, "parameters declared on a layer",
             parameters={"zz": QueryParameter(annotation=int, required=False)})
