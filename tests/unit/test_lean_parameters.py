"""The routes' lean parameter reading answers exactly as Litestar's own modelling did.

``lean_parameters`` (the ``before_request`` hook of the index GET routes) reads a handler's
declared parameters itself. The twin app below has the hook answer nothing, so Litestar models
the parameters and calls the handler as it always did; every request, valid or not, must get
the same status, headers and bytes from both.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar import Litestar, Request, get, post
from litestar.params import Body, QueryParameter
from litestar.testing import TestClient

from searchport.domain.config import Config, IndexConfig
from searchport.domain.results import EngineResult, FacetValue, Hit
from searchport.entrypoints.controllers import index_routes
from searchport.entrypoints.controllers.lean_parameters import LeanReader
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


def _app() -> Any:
    config = Config(indexes={"cities": IndexConfig(engine="tantivy", path="unused")})
    return create_app(fake_container(config, {"cities": _engine()}))


@pytest.fixture(scope="module")
def clients() -> Iterator[tuple[TestClient[Any], TestClient[Any]]]:
    lean = _app()
    with pytest.MonkeyPatch.context() as patch:
        # a hook that answers nothing: Litestar models the parameters and calls the handler
        patch.setattr(index_routes, "lean_parameters", lambda request: None)
        modelled = _app()
    with TestClient(lean) as one, TestClient(modelled) as other:
        yield one, other


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


def test_a_handler_that_needs_more_than_parameters_is_refused() -> None:
    @post("/body", sync_to_thread=False)
    def with_body(data: Annotated[dict[str, Any], Body()]) -> None:
        return None

    @get("/constrained", sync_to_thread=False)
    def with_items(ids: Annotated[list[int], QueryParameter(min_items=1)]) -> None:
        return None

    @get("/plain", sync_to_thread=False)
    def plain(request: Request[Any, Any, Any],
              q: Annotated[str, QueryParameter(max_length=9)] = "") -> None:
        return None

    Litestar([with_body, with_items, plain])  # registers them (parses their signatures)
    with pytest.raises(TypeError, match="data"):
        LeanReader(with_body)
    with pytest.raises(TypeError, match="min_items"):
        LeanReader(with_items)
    assert [p.name for p in LeanReader(plain).parameters] == ["request", "q"]
