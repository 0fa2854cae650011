"""The routes' lean parameter reading answers exactly as Litestar's own modelling does.

``LeanParameters`` (the ``before_request`` hook of the index GET routes) reads a handler's
declared parameters itself. The twin app below is built with ``http.leanParameters: false``,
so Litestar models the parameters and calls the handler; every request, valid or not, must
get the same status, headers and bytes from both. ``test_lean_signatures`` does the same over
generated signatures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated, Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar import Litestar, Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.handlers import HTTPRouteHandler
from litestar.params import Body, CookieParameter, FromQuery, QueryParameter
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.domain.config import Config, ConfigError, HttpConfig, IndexConfig
from searchport.domain.results import EngineResult, FacetValue, Hit
from searchport.entrypoints.controllers import params
from searchport.entrypoints.controllers.lean_parameters import (
    MEMO_SIZE,
    LeanParameters,
    UnsupportedSignature,
)
from searchport.entrypoints.http.app import create_app
from tests.fakes import FakeEngine, fake_container

HITS = [Hit(id=str(i), index="cities", score=1.0 + i, source={"name": f"City {i}"},
            highlights={"name": [f"<mark>City</mark> {i}"]}) for i in range(3)]
VOLATILE = {"x-request-id", "server-timing"}

NAMES = ["q", "page", "perPage", "per_page", "sort", "facets", "filters", "highlight", "fields",
         "suggest", "boosts", "histogram", "geoGrid", "maxValues", "maxFacetsPerField", "other"]
VALUES = ["", "1", "2", "-3", "abc", "1.5", " 2", "+1", "0x10", "1_0", "99999999999999999999",
          "true", "false", "name", '{"name":"asc"}', '{"name":3}', "[1]", "%FF", "%C3%A9", "é",
          "a" * 2049, "a%20b", "%2B1"]
PATHS = ["/cities/search", "/cities/autocomplete", "/cities/facets/name", "/cities/documents/1",
         "/cities/mapping", "/nope/search"]


def _engine() -> FakeEngine:
    return FakeEngine(
        result=EngineResult(hits=list(HITS), total=3,
                            facets={"name": [FacetValue(value="City 1", count=1)]}),
        facet_values=[FacetValue(value="City 1", count=1)],
        documents={"1": HITS[1]},
    )


def _app(lean: bool = True) -> Any:
    config = Config(indexes={"cities": IndexConfig(engine="tantivy", path="unused")},
                    http=HttpConfig(lean_parameters=lean))
    return create_app(fake_container(config, {"cities": _engine()}))


@pytest.fixture(scope="module")
def clients() -> Iterator[tuple[TestClient[Any], TestClient[Any]]]:
    with TestClient(_app()) as one, TestClient(_app(lean=False)) as other:
        yield one, other


LEAN_ROUTES = {"search", "facets", "autocomplete", "documents", "mapping"}


def _index_get_handlers(app: Any) -> list[HTTPRouteHandler]:
    return [handler for route in app.routes if isinstance(route, HTTPRoute)
            and route.path.startswith("/{handle:str}/")
            and route.path.split("/")[2] in LEAN_ROUTES for handler in route.route_handlers
            if "GET" in handler.http_methods]


def _answer(client: TestClient[Any], url: str, headers: dict[str, str]) -> tuple[Any, ...]:
    response = client.get(url, headers=headers)
    kept = sorted((k, v) for k, v in response.headers.items() if k not in VOLATILE)
    return response.status_code, kept, response.content


pairs = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(VALUES)), max_size=6)


@given(path=st.sampled_from(PATHS), query=pairs,
       if_none_match=st.sampled_from([None, "", "*", '"nope"', 'W/"x", "y"']))
@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_request_gets_what_litestars_modelling_gave(
    clients: tuple[TestClient[Any], TestClient[Any]], path: str,
    query: list[tuple[str, str]], if_none_match: str | None,
) -> None:
    lean, modelled = clients
    # values are sent as written: some are already escaped, some are raw UTF-8
    url = path + "?" + "&".join(f"{name}={quote(value, safe='%+{}:,[]')}"
                                for name, value in query)
    headers = {} if if_none_match is None else {"If-None-Match": if_none_match}
    assert _answer(lean, url, headers) == _answer(modelled, url, headers)


def test_the_lean_reading_is_what_answers(
    clients: tuple[TestClient[Any], TestClient[Any]],
) -> None:
    """The comparison above compares two ways, not one way with itself: the lean app never
    builds Litestar's kwargs (a handler parameter Litestar would refuse is not read)."""
    lean, _ = clients
    response = lean.get("/cities/search?q=city&page=2&perPage=1")
    assert response.status_code == 200
    body = response.json()
    assert (body["page"], body["perPage"]) == (2, 1)
    wrong = lean.get("/cities/search?page=x&perPage=y")
    assert wrong.status_code == 400
    assert wrong.json()["details"] == [
        "Invalid value for parameter 'page': expected `int`, got `str`",
        "Invalid value for parameter 'perPage': expected `int`, got `str`",
    ]


def test_every_reader_is_made_when_the_app_is_created() -> None:
    """Before any request: each index GET route has the hook and its reader; with
    ``http.leanParameters: false`` none has a hook and Litestar reads them."""
    lean_handlers = _index_get_handlers(_app())
    assert len(lean_handlers) == 5
    hooks = {id(handler.resolve_before_request()) for handler in lean_handlers}
    assert len(hooks) == 1
    hook = lean_handlers[0].resolve_before_request()
    assert isinstance(hook, LeanParameters)
    assert {id(h) for h in hook.handlers} == {id(h) for h in lean_handlers}
    modelled = _index_get_handlers(_app(lean=False))
    assert len(modelled) == 5
    assert [h.resolve_before_request() for h in modelled] == [None] * 5


def test_the_switch_is_read_from_the_config() -> None:
    assert parse_config("{}", {}).http.lean_parameters is True
    assert parse_config("http: {leanParameters: false}", {}).http.lean_parameters is False
    with pytest.raises(ConfigError, match="http"):
        parse_config("http: {leanParameter: false}", {})


def test_create_app_fails_on_a_signature_the_reader_cannot_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A route whose parameter the reader does not read stops ``create_app``, naming the
    parameter; Litestar itself reads it when the switch is off."""
    monkeypatch.setattr(params, "PAGE", CookieParameter(name="page"))
    with pytest.raises(UnsupportedSignature, match="parameter 'page': a cookie parameter"):
        _app()
    with TestClient(_app(lean=False), cookies={"page": "2"}) as client:
        assert client.get("/cities/search").json()["page"] == 2


# ------------------------------------------------ the differences this reader once had


Hook = LeanParameters | None
Handler = Callable[[Hook], HTTPRouteHandler]


def _lean(handler: Handler, **layers: Any) -> Litestar:
    """An app whose handler's parameters are read by a ``LeanParameters``."""
    hook = LeanParameters()
    app = Litestar([handler(hook)], **layers)
    hook.prepare(app)
    return app


def _litestar(handler: Handler, **layers: Any) -> Litestar:
    return Litestar([handler(None)], **layers)


def _required(hook: Hook) -> HTTPRouteHandler:
    @get("/required", before_request=hook)
    async def required(q: FromQuery[str],
                       page: Annotated[int, QueryParameter(required=True)]) -> Response[Any]:
        return Response({"q": q, "page": page})

    return required


def test_a_missing_required_parameter_is_litestars_400() -> None:
    for app in (_lean(_required), _litestar(_required)):
        with TestClient(app) as client:
            missing = client.get("/required?page=2")
            assert missing.status_code == 400
            assert missing.json()["detail"] == (
                "Missing required query parameter 'q' for path /required?page=2")
            assert client.get("/required?q=").status_code == 400
            assert client.get("/required?q=&page=3").json() == {"q": "", "page": 3}


def _listed(hook: Hook) -> HTTPRouteHandler:
    @get("/listed", before_request=hook)
    async def listed(ids: FromQuery[list[int]], tag: Annotated[list[str] | None,
                                                    QueryParameter(name="tags")] = None,
                     last: FromQuery[str] = "") -> Response[Any]:
        return Response({"ids": ids, "tags": tag, "last": last})

    return listed


def test_a_list_parameter_keeps_every_value() -> None:
    for app in (_lean(_listed), _litestar(_listed)):
        with TestClient(app) as client:
            answer = client.get("/listed?ids=3&last=a&ids=1&tags=x&last=b&ids=2&tags=")
            assert answer.json() == {"ids": [3, 1, 2], "tags": ["x", ""], "last": "b"}
            assert client.get("/listed?ids=4").json() == {"ids": [4], "tags": None, "last": ""}
            wrong = client.get("/listed?ids=1&ids=x")
            assert wrong.status_code == 400
            assert wrong.json()["extra"] == [{"message": "Expected `int`, got `str`",
                                              "key": "ids", "source": "query"}]


def _limited(hook: Hook) -> HTTPRouteHandler:
    @get("/limited", before_request=hook)
    async def limited(limit: int) -> Response[Any]:  # inferred: a dependency by its name
        return Response({"limit": limit})

    return limited


def _named(hook: Hook) -> HTTPRouteHandler:
    @get("/limited", before_request=hook)
    async def limited(limit: NamedDependency[int]) -> Response[Any]:
        return Response({"limit": limit})

    return limited


@pytest.mark.filterwarnings("ignore:.*Inferred dependency field")
@pytest.mark.parametrize("handler", [_limited, _named], ids=["inferred", "named"])
def test_a_layer_dependency_is_never_read_from_the_query(
    handler: Handler,
) -> None:
    """Litestar provides ``limit`` from the app's dependencies: the reader refuses the route
    when the app is built rather than reading ``limit`` from the query string."""
    layers = {"dependencies": {"limit": Provide(lambda: 3, sync_to_thread=False)}}
    with TestClient(_litestar(handler, **layers)) as client:
        assert client.get("/limited?limit=7").json() == {"limit": 3}
    with pytest.raises(UnsupportedSignature, match=r"parameter 'limit'.*dependencies"):
        _lean(handler, **layers)


def _with_body(hook: Hook) -> HTTPRouteHandler:
    @post("/body", before_request=hook)
    async def with_body(data: Annotated[dict[str, Any], Body()]) -> Response[Any]:
        return Response(data)

    return with_body


def _with_items(hook: Hook) -> HTTPRouteHandler:
    @get("/constrained", before_request=hook)
    async def with_items(ids: Annotated[list[int], QueryParameter(min_items=1)]) -> Response[Any]:
        return Response(ids)

    return with_items


def _with_sync(hook: Hook) -> HTTPRouteHandler:
    @get("/sync", before_request=hook, sync_to_thread=False)
    def with_sync(q: FromQuery[str] = "") -> Response[Any]:
        return Response(q)

    return with_sync


def _with_dict(hook: Hook) -> HTTPRouteHandler:
    @get("/dict", before_request=hook)
    async def with_dict(q: FromQuery[str] = "") -> dict[str, str]:
        return {}  # false: Litestar would call the handler again

    return with_dict


def _plain(hook: Hook) -> HTTPRouteHandler:
    @get("/plain", before_request=hook)
    async def plain(request: Request[Any, Any, Any],
                    q: Annotated[str, QueryParameter(max_length=9)] = "") -> Response[Any]:
        return Response(q)

    return plain


@pytest.mark.parametrize(("handler", "refused"), [
    (_with_body, "parameter 'data'"), (_with_items, "min_items= is not read"),
    (_with_sync, "only an async handler"), (_with_dict, "must answer a response"),
])
def test_a_handler_the_reader_cannot_read_is_refused(handler: Handler, refused: str) -> None:
    _litestar(handler)  # Litestar itself takes it
    with pytest.raises(UnsupportedSignature, match=refused):
        _lean(handler)


def test_request_and_constrained_parameters_are_read() -> None:
    with TestClient(_lean(_plain)) as client:
        assert client.get("/plain?q=abc").text == "abc"
        assert client.get("/plain?q=" + "a" * 10).json()["extra"] == [{
            "message": "Expected `str` of length <= 9", "key": "q", "source": "query"}]


def _kept(hook: Hook) -> HTTPRouteHandler:
    @get("/kept", before_request=hook)
    async def kept(page: Annotated[int, QueryParameter(ge=1)] = 1, flag: bool | None = None,
                   ids: Annotated[list[int] | None, QueryParameter()] = None) -> Response[Any]:
        answer = Response({"page": page, "flag": flag, "ids": ids})
        if ids is not None:
            ids.append(-1)  # a handler changing what it was given changes no other request
        return answer

    return kept


def test_conversions_kept_for_the_next_requests_answer_as_litestar() -> None:
    """A text converted once is not converted again (numbers, truth values): the same
    answers as Litestar's modelling, a wrong value still refused after a right one, a list
    never shared between requests, and no more kept than ``MEMO_SIZE`` per parameter."""
    urls = ["/kept?page=2&flag=true", "/kept?page=2&flag=true", "/kept?page=0&flag=1",
            "/kept?page=x", "/kept?page=2&flag=maybe", "/kept?ids=1&ids=2",
            "/kept?ids=1&ids=2", "/kept?flag=FALSE", "/kept?flag=false&page=2"]
    hook = LeanParameters()
    app = Litestar([_kept(hook)])
    hook.prepare(app)
    with TestClient(app) as lean, TestClient(_litestar(_kept)) as modelled:
        for url in urls:
            assert _answer(lean, url, {}) == _answer(modelled, url, {}), url
        assert lean.get("/kept?ids=1&ids=2").json()["ids"] == [1, 2, -1]  # its own list
        for n in range(MEMO_SIZE + 50):
            assert lean.get(f"/kept?page={n + 1}").json()["page"] == n + 1
    ((_, reader),) = hook._readers.values()
    assert 0 < len(reader._converted["page"]) <= MEMO_SIZE
    assert reader._converted["ids"] == {}
