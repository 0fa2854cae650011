"""The Algolia routes' HTTP contract through the real app over fakes: bodies in every form
the clients send, the SearchQuery asked of the engine, the Algolia answer, statuses, auth
and CORS."""

from __future__ import annotations

import json
from typing import Any

import pytest

from searchport.domain.config import Config, DefaultsConfig, FieldConfig, IndexConfig
from searchport.domain.errors import EngineTimeout, EngineUnavailable
from searchport.domain.query import (
    AnyOf,
    FacetValuesQuery,
    GeoBoxFilter,
    GeoPoint,
    GeoPolygonFilter,
    GeoRadiusFilter,
    GeoSort,
    Negated,
    NotFilter,
    RangeFilter,
    SearchQuery,
    TermFilter,
)
from searchport.domain.results import Capabilities, EngineResult, FacetValue, FieldStats, Hit
from tests.fakes import FailingEngine, FakeCache, FakeEngine
from tests.unit.test_http_contract import KEY, ORIGIN, serve

FIELDS = {
    "name": FieldConfig(weight=3, type="text"),
    "region": FieldConfig(field="continent", type="keyword"),
    "pop": FieldConfig(field="population", type="integer"),
    "where": FieldConfig(field="location", type="geo_point"),
}
HITS = [Hit(id=str(i), index="cities", score=1.0,
            source={"name": f"Port & {i}", "continent": "Europe", "population": i},
            highlights={"name": [f"<mark>Port</mark> &amp; {i}"]} if i % 2 == 0 else {})
        for i in range(3)]


def cities_engine() -> FakeEngine:
    return FakeEngine(
        result=EngineResult(hits=list(HITS), total=45, facets={"continent": [
            FacetValue(value="Asia", count=3), FacetValue(value="Europe", count=40)]}),
        facet_values=[FacetValue(value="Europe", count=40), FacetValue(value="Eurasia", count=2)],
    )


def settings(**extra: Any) -> Config:
    index = IndexConfig(engine="tantivy", path="unused", fields=FIELDS,
                        defaults=DefaultsConfig(facets=["region"]))
    return Config(indexes={"cities": index, "towns": index}, **extra)


def engines() -> dict[str, FakeEngine]:
    return {"cities": cities_engine(), "towns": cities_engine()}


def queries(engine: FakeEngine) -> list[SearchQuery]:
    return [q for q in engine.queries if isinstance(q, SearchQuery)]


# ---------------------------------------------------------------- bodies and parameters


@pytest.mark.parametrize("body", [
    {"params": "query=port&page=1&hitsPerPage=2&facets=%5B%22region%22%5D"
               "&numericFilters=%5B%22pop%3E10%22%5D&facetFilters=region%3A-Asia"},
    {"params": {"query": "port", "page": 1, "hitsPerPage": 2, "facets": ["region"],
                "numericFilters": ["pop>10"], "facetFilters": ["region:-Asia"]}},
    {"query": "port", "page": "1", "hitsPerPage": 2, "facets": "region",
     "numericFilters": "pop>10", "facetFilters": "region:-Asia"},
])
def test_params_as_a_string_an_object_or_flat(body: dict[str, Any]) -> None:
    found = engines()
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/query", content=json.dumps(body),
                               headers={"content-type": "application/x-www-form-urlencoded"})
        assert response.status_code == 200, response.text
    (query,) = queries(found["cities"])
    assert (query.text, query.offset, query.limit, query.facets) == ("port", 2, 2, ("continent",))
    assert query.filters == (NotFilter(field="continent", values=("Asia",)),
                             RangeFilter(field="population", min=10, min_exclusive=True))
    assert query.disjunctive_facets is False  # Algolia: counts follow every filter
    answer = response.json()
    assert answer["nbHits"] == 45 and answer["nbPages"] == 23 and answer["page"] == 1
    assert answer["hitsPerPage"] == 2 and answer["index"] == "cities"
    assert answer["facets"] == {"region": {"Europe": 40, "Asia": 3}}
    assert list(answer["facets"]["region"]) == ["Europe", "Asia"]  # by count
    assert answer["exhaustiveNbHits"] is True
    assert answer["exhaustiveFacetsCount"] is False  # the fake is no tantivy engine
    assert "query=port" in answer["params"] and isinstance(answer["processingTimeMS"], int)


def test_hits_carry_object_ids_public_names_and_highlights() -> None:
    with serve(settings(), engines()) as client:
        answer = client.post("/1/indexes/cities/query", json={"params": {
            "query": "port", "highlightPreTag": "__ais-highlight__",
            "highlightPostTag": "__/ais-highlight__"}}).json()
        html = client.post("/1/indexes/cities/query", json={"query": "port"}).json()
    first = answer["hits"][0]
    assert first["objectID"] == "0" and first["region"] == "Europe" and first["pop"] == 0
    # placeholder tags: plain text, as Algolia gives it (the client escapes it)
    assert first["_highlightResult"]["name"] == {
        "value": "__ais-highlight__Port__/ais-highlight__ & 0", "matchLevel": "full",
        "matchedWords": ["port"], "fullyHighlighted": False}
    # HTML tags (the default <em>): the text stays escaped, so the value is safe as HTML
    assert html["hits"][0]["_highlightResult"]["name"]["value"] == "<em>Port</em> &amp; 0"
    assert html["hits"][1]["_highlightResult"]["name"] == {
        "value": "Port &amp; 1", "matchLevel": "none", "matchedWords": []}


def test_hits_per_page_zero_and_clamps() -> None:
    found = engines()
    with serve(settings(), found) as client:
        zero = client.post("/1/indexes/cities/query", json={"hitsPerPage": 0}).json()
        client.post("/1/indexes/cities/query", json={"hitsPerPage": 5000, "page": -3})
        client.post("/1/indexes/cities/query", json={"hitsPerPage": 50, "page": 400})
        huge = client.post("/1/indexes/cities/query", json={"page": 1e300})
        bad = client.post("/1/indexes/cities/query", json={"hitsPerPage": "many"})
    assert zero["hits"] == [] and zero["nbPages"] == 0 and zero["facets"] == {}
    assert huge.status_code == 200 and huge.json()["hits"] == []
    first, clamped, past, _ = queries(found["cities"])
    assert (first.limit, first.highlight) == (0, False)
    assert (clamped.offset, clamped.limit) == (0, 100)
    assert (past.offset, past.limit) == (10_000, 0)  # past the result window: no hits
    assert bad.status_code == 400 and "hitsPerPage" in bad.json()["error"]


def test_facets_star_is_the_configured_default() -> None:
    found = engines()
    with serve(settings(), found) as client:
        client.post("/1/indexes/cities/query", json={"params": "facets=*&maxValuesPerFacet=7"})
    (query,) = queries(found["cities"])
    # the engine is asked for up to 100 values (exact facets_stats); the answer shows 7
    assert query.facets == ("continent",) and query.max_facet_values == 100


def test_max_values_per_facet_cuts_the_answer() -> None:
    found = engines()
    with serve(settings(), found) as client:
        body = client.post("/1/indexes/cities/query",
                           json={"facets": ["region"], "maxValuesPerFacet": 1}).json()
    assert body["facets"] == {"region": {"Europe": 40}}


@pytest.mark.parametrize(("params", "named"), [
    ({"typoTolerance": False}, "typoTolerance"),
    ({"distinct": True}, "distinct"),
    ({"tagFilters": ["x"]}, "tagFilters"),
    ({"aroundLatLng": "1,2"}, "aroundLatLng"),  # Algolia would choose a radius itself
    ({"aroundLatLng": "1,2", "aroundRadius": 1000}, "aroundRadius"),  # no geo_radius here
    ({"filters": "region:"}, "filters"),
    ({"insideBoundingBox": [[1, 2, 3]]}, "insideBoundingBox"),
])
def test_what_would_change_results_is_a_400_naming_it(params: dict[str, Any],
                                                       named: str) -> None:
    with serve(settings(), engines()) as client:
        response = client.post("/1/indexes/cities/query", json={"params": params})
    assert response.status_code == 400
    assert named in response.json()["error"]


def test_filters_across_attributes_and_negated_ranges_reach_the_engine_in_real_names() -> None:
    found = engines()
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/query", json={"params": {
            "filters": "(region:Europe OR pop > 3) AND NOT pop:10 TO 20 "
                       "AND (pop < 1 OR pop > 100)"}})
        assert response.status_code == 200, response.text
    (query,) = queries(found["cities"])
    assert query.filters == (
        AnyOf(filters=(TermFilter(field="continent", values=("Europe",)),
                       RangeFilter(field="population", min=3, min_exclusive=True))),
        Negated(filter=RangeFilter(field="population", min=10, max=20)),
        AnyOf(filters=(RangeFilter(field="population", max=1, max_exclusive=True),
                       RangeFilter(field="population", min=100, min_exclusive=True))),
    )


def test_what_cannot_change_results_is_accepted_and_ignored() -> None:
    with serve(settings(), engines()) as client:
        response = client.post("/1/indexes/cities/query", json={"params": {
            "analytics": False, "clickAnalytics": True, "getRankingInfo": True,
            "analyticsTags": ["a"], "userToken": "u1", "tagFilters": "",
            "attributesToSnippet": [], "distinct": False, "sortFacetValuesBy": "count"}})
    assert response.status_code == 200, response.text


def test_inside_bounding_box_limits_to_the_geo_field() -> None:
    found = engines()
    with serve(settings(), found) as client:
        client.post("/1/indexes/cities/query", json={"insideBoundingBox": "10,20,-5,-30"})
    (query,) = queries(found["cities"])
    assert query.filters == (GeoBoxFilter(field="location", north=10, south=-5, west=-30,
                                          east=20),)
    assert query.geo_grid is None


@pytest.mark.parametrize("boxes", [
    [[10, 20, -5, -30], [50, 1, 40, 2]],
    "[[10, 20, -5, -30], [50, 1, 40, 2]]",
])
def test_several_boxes_are_any_of_them(boxes: Any) -> None:
    found = engines()
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/query", json={"insideBoundingBox": boxes})
    assert response.status_code == 200, response.text
    (query,) = queries(found["cities"])
    assert query.filters == (AnyOf(filters=(
        GeoBoxFilter(field="location", north=10, south=-5, west=-30, east=20),
        GeoBoxFilter(field="location", north=50, south=40, west=1, east=2))),)


@pytest.mark.parametrize(("polygons", "expected"), [
    ([1, 2, 3, 4, 5, 6], 1),
    ("1,2,3,4,5,6", 1),
    ([[1, 2, 3, 4, 5, 6], [10, 20, 30, 40, 50, 60, 10, 25]], 2),
])
def test_inside_polygon_is_one_polygon_filter_per_polygon(polygons: Any, expected: int
                                                          ) -> None:
    found = engines()
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/query", json={"insidePolygon": polygons})
    assert response.status_code == 200, response.text
    (query,) = queries(found["cities"])
    (area,) = query.filters
    shapes = area.filters if isinstance(area, AnyOf) else (area,)
    assert len(shapes) == expected
    assert shapes[0] == GeoPolygonFilter(field="location", points=(
        GeoPoint(lat=1, lon=2), GeoPoint(lat=3, lon=4), GeoPoint(lat=5, lon=6)))


def test_a_polygon_is_ignored_beside_a_box_as_algolia_does() -> None:
    found = engines()
    with serve(settings(), found) as client:
        client.post("/1/indexes/cities/query", json={"insideBoundingBox": [[1, 2, 3, 4]],
                                                     "insidePolygon": [[1, 2, 3, 4, 5, 6]]})
    (query,) = queries(found["cities"])
    assert query.filters == (GeoBoxFilter(field="location", north=3, south=1, west=2,
                                          east=4),)


@pytest.mark.parametrize(("params", "named"), [
    ({"insidePolygon": [[1, 2, 3, 4]]}, "insidePolygon"),
    ({"insidePolygon": [[1, 2, 3, 4, 5]]}, "insidePolygon"),
    ({"insidePolygon": [[1, 2, 3, 4, 95, 6]]}, "insidePolygon"),
    ({"insideBoundingBox": [[1, 2, 3]]}, "insideBoundingBox"),
    ({"insideBoundingBox": [["a", 2, 3, 4]]}, "insideBoundingBox"),
])
def test_a_malformed_shape_is_a_400_naming_it(params: dict[str, Any], named: str) -> None:
    with serve(settings(), engines()) as client:
        response = client.post("/1/indexes/cities/query", json=params)
    assert response.status_code == 400 and named in response.json()["message"]


def test_hits_carry_geoloc_from_the_geo_field() -> None:
    hits = [Hit(id="1", index="cities", source={"name": "A", "location": {"lat": 1.5,
                                                                          "lon": 2.5}}),
            Hit(id="2", index="cities", source={"name": "B"})]
    found = {**engines(), "cities": FakeEngine(result=EngineResult(hits=hits, total=2))}
    with serve(settings(), found) as client:
        got = client.post("/1/indexes/cities/query", json={}).json()["hits"]
    assert got[0]["_geoloc"] == {"lat": 1.5, "lng": 2.5}
    assert "_geoloc" not in got[1]


def geo_engines() -> dict[str, FakeEngine]:
    able = Capabilities(geo_grid=True, geo_radius=True, geo_area=True)
    return {"cities": FakeEngine(name="geo", capabilities=able),
            "towns": FakeEngine(name="geo", capabilities=able)}


@pytest.mark.parametrize("params", [
    {"aroundLatLng": "48.85, 2.35", "aroundRadius": 1500},
    {"params": "aroundLatLng=48.85%2C2.35&aroundRadius=1500"},
    {"aroundLatLng": [48.85, 2.35], "aroundRadius": "1500"},
])
def test_around_lat_lng_and_radius_are_a_radius_filter(params: dict[str, Any]) -> None:
    found = geo_engines()
    body = params if "params" in params else {"params": params}
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/query",
                               json={**body, "facetFilters": ["region:Europe"]})
    assert response.status_code == 200, response.text
    (query,) = queries(found["cities"])
    assert query.filters == (
        TermFilter(field="continent", values=("Europe",)),
        GeoRadiusFilter(field="location", lat=48.85, lon=2.35, radius_m=1500))


def test_the_radius_filters_facet_value_search_too() -> None:
    found = geo_engines()
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/facets/region/query", json={
            "params": {"facetQuery": "eu", "aroundLatLng": "1,2", "aroundRadius": 10}})
    assert response.status_code == 200, response.text
    (asked,) = [q for q in found["cities"].queries if isinstance(q, FacetValuesQuery)]
    assert asked.filters == (GeoRadiusFilter(field="location", lat=1, lon=2, radius_m=10),)


@pytest.mark.parametrize("params", [
    {"aroundLatLng": "1,2", "aroundRadius": "all"},
    {"aroundRadius": "all"},
    # Algolia ignores both when a bounding box or a polygon is given
    {"aroundLatLng": "1,2", "aroundRadius": 10, "insideBoundingBox": "10,20,-5,-30"},
    {"aroundLatLng": "1,2", "aroundRadius": 10, "insidePolygon": "10,20,-5,-30,0,0"},
])
def test_what_sets_no_radius(params: dict[str, Any]) -> None:
    """No radius filter; ``aroundLatLng`` with ``aroundRadius: "all"`` still ranks by
    distance (Algolia's geo criterion), a bounding box turns both off."""
    found = geo_engines()
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/query", json={"params": params})
    assert response.status_code == 200, response.text
    (query,) = queries(found["cities"])
    area = "insideBoundingBox" in params or "insidePolygon" in params
    assert len(query.filters) == (1 if area else 0)
    assert not any(isinstance(f, GeoRadiusFilter) for f in query.filters)
    ranked = "aroundLatLng" in params and not area
    assert query.geo_sort == (GeoSort(field="location", lat=1, lon=2) if ranked else None)


@pytest.mark.parametrize("params", [
    {"aroundLatLng": "48.85, 2.35", "aroundRadius": 1500},
    {"aroundLatLng": [48.85, 2.35], "aroundRadius": "all"},
    {"params": "aroundLatLng=48.85%2C2.35&aroundRadius=all"},
])
def test_around_lat_lng_ranks_by_distance_first(params: dict[str, Any]) -> None:
    """Algolia's geo criterion comes before the words: the engine is asked for the closest
    hits first (then relevance: no sort keys), on the handle's geo field in its real name."""
    found = geo_engines()
    body = params if "params" in params else {"params": params}
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/query", json={**body, "query": "port"})
    assert response.status_code == 200, response.text
    (query,) = queries(found["cities"])
    assert query.geo_sort == GeoSort(field="location", lat=48.85, lon=2.35)
    assert query.sort == () and query.text == "port"


def test_a_cached_distance_ranking_is_served_for_its_centre_only() -> None:
    """With a cache, the same ranked search twice is one engine call; another centre is
    another call (the key itself: ``test_engine_cache``)."""
    found = geo_engines()
    with serve(settings(), found, FakeCache()) as client:
        for centre in ("1,2", "1,2", "3,4"):
            response = client.post("/1/indexes/cities/query", json={
                "aroundLatLng": centre, "aroundRadius": "all"})
            assert response.status_code == 200, response.text
    assert [q.geo_sort for q in queries(found["cities"])] == [
        GeoSort(field="location", lat=1, lon=2), GeoSort(field="location", lat=3, lon=4)]


@pytest.mark.parametrize(("params", "named"), [
    ({"aroundLatLng": "1,2"}, "aroundRadius"),
    ({"aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "-90.5,2", "aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "1,180.1", "aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "1,2,3", "aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "x,2", "aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "nan,2", "aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": {"lat": 1}, "aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "1,2", "aroundRadius": 0}, "aroundRadius"),
    ({"aroundLatLng": "1,2", "aroundRadius": 1.5}, "aroundRadius"),
    ({"aroundLatLng": "1,2", "aroundRadius": "near"}, "aroundRadius"),
])
def test_bad_around_parameters_are_a_400_naming_them(params: dict[str, Any],
                                                      named: str) -> None:
    found = geo_engines()
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/query", json={"params": params})
    assert response.status_code == 400
    assert named in response.json()["error"]
    assert queries(found["cities"]) == []


@pytest.mark.parametrize(("radius", "named"), [(1000, "aroundRadius"),
                                               ("all", "aroundLatLng")])
def test_an_engine_without_geo_radius_refuses_naming_it(radius: int | str, named: str) -> None:
    """Without ``geo_radius`` an engine can neither filter nor rank by distance: with
    ``aroundRadius: "all"`` the ranking alone is refused, never dropped."""
    found = {"cities": FakeEngine(name="plain", capabilities=Capabilities(geo_grid=True)),
             "towns": FakeEngine()}
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/cities/query",
                               json={"aroundLatLng": "1,2", "aroundRadius": radius})
    assert response.status_code == 400
    assert response.json()["error"] == f"{named} is not supported by the plain engine"
    assert queries(found["cities"]) == []


# ---------------------------------------------------------------- multi-queries


def test_multi_queries_answer_each_handle_in_request_order() -> None:
    found = engines()
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/*/queries", json={"requests": [
            {"indexName": "towns", "params": "query=a"},
            {"indexName": "cities", "params": "query=b"},
            {"indexName": "cities", "type": "facet", "facet": "region",
             "params": "facetQuery=eur&facetFilters=%5B%22pop%3A3%22%5D"},
        ]})
    assert response.status_code == 200, response.text
    towns, cities, values = response.json()["results"]
    assert (towns["index"], towns["query"]) == ("towns", "a")
    assert (cities["index"], cities["query"]) == ("cities", "b")
    assert values["facetHits"] == [
        {"value": "Europe", "highlighted": "<em>Eur</em>ope", "count": 40},
        {"value": "Eurasia", "highlighted": "<em>Eur</em>asia", "count": 2}]
    (asked,) = [q for q in found["cities"].queries if isinstance(q, FacetValuesQuery)]
    assert (asked.field, asked.text, asked.limit) == ("continent", "eur", 10)
    assert asked.filters == (TermFilter(field="population", values=("3",)),)


def test_instantsearch_route_uses_the_url_handle() -> None:
    with serve(settings(), engines()) as client:
        ok = client.post("/cities/instantsearch", json={"requests": [
            {"indexName": "cities", "params": {"query": "x"}}, {"params": {"query": "y"}}]})
        other = client.post("/cities/instantsearch", json={"requests": [{"indexName": "towns"}]})
    assert [r["index"] for r in ok.json()["results"]] == ["cities", "cities"]
    assert other.status_code == 400 and "towns" in other.json()["error"]


@pytest.mark.parametrize(("error", "status"), [
    (EngineUnavailable("The engine cannot be reached"), 502),
    (EngineTimeout("The engine did not answer in time"), 504),
])
def test_a_failing_query_fails_the_call_with_its_status(error: Exception, status: int) -> None:
    found = engines()
    found["towns"] = FailingEngine(error)
    with serve(settings(), found) as client:
        response = client.post("/1/indexes/*/queries", json={"requests": [
            {"indexName": "cities"}, {"indexName": "towns"}]})
        unknown = client.post("/1/indexes/*/queries", json={"requests": [{"indexName": "nope"}]})
    assert response.status_code == status
    assert response.json() == {"error": str(error), "message": str(error), "status": status}
    assert unknown.status_code == 404
    assert unknown.json() == {"error": 'Index "nope" not found',
                              "message": 'Index "nope" not found', "status": 404}


@pytest.mark.parametrize("body", [b"", b"{", b"[]", b'{"requests": []}',
                                  b'{"requests": [1]}', b'{"requests": [{}], "strategy": "x"}'])
def test_bad_multi_query_bodies_are_400s(body: bytes) -> None:
    with serve(settings(), engines()) as client:
        response = client.post("/1/indexes/*/queries", content=body)
    assert response.status_code == 400 and "error" in response.json()


# ---------------------------------------------------------------- auth and CORS


@pytest.mark.parametrize("where", ["bearer", "header", "query"])
def test_the_algolia_api_key_is_the_token(where: str) -> None:
    headers = {"bearer": {"Authorization": f"Bearer {KEY}"},
               "header": {"x-algolia-api-key": KEY, "x-algolia-application-id": "anything"},
               "query": {}}[where]
    url = "/1/indexes/cities/query" + (f"?x-algolia-api-key={KEY}&x-algolia-application-id=x"
                                       if where == "query" else "")
    with serve(settings(api_key=KEY), engines()) as client:
        assert client.post(url, json={}, headers=headers).status_code == 200
        assert client.post("/1/indexes/cities/query", json={},
                           headers={"x-algolia-api-key": "wrong"}).status_code == 401
        assert client.post("/1/indexes/cities/query?x-algolia-api-key=wrong",
                           json={}).status_code == 401
        # the key in a query string counts on the Algolia routes only
        assert client.get(f"/cities/search?x-algolia-api-key={KEY}").status_code == 401


def test_cors_preflight_allows_the_algolia_headers() -> None:
    with serve(settings(cors_origins=[ORIGIN], api_key=KEY), engines()) as client:
        preflight = client.options("/1/indexes/*/queries", headers={
            "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-algolia-api-key,x-algolia-application-id"})
        assert preflight.status_code in (200, 204)
        allowed = preflight.headers["access-control-allow-headers"].lower()
        assert "x-algolia-api-key" in allowed and "x-algolia-application-id" in allowed
        body = b'{"requests":[{"indexName":"cities"}]}'
        simple = client.post("/1/indexes/*/queries", content=body,
                             headers={"Origin": ORIGIN, "x-algolia-api-key": KEY,
                                      "content-type": "application/x-www-form-urlencoded"})
        assert simple.status_code == 200
        assert simple.headers["access-control-allow-origin"] == ORIGIN


def test_facets_stats_from_every_value_of_a_numeric_facet() -> None:
    found = engines()
    found["cities"].result = EngineResult(hits=[], total=3, facets={
        "population": [FacetValue(value="10", count=2), FacetValue(value="5", count=1)],
        "continent": [FacetValue(value="7", count=3)]})  # a keyword field: no stats
    with serve(settings(), found) as client:
        body = client.post("/1/indexes/cities/query",
                           json={"facets": ["pop", "region"]}).json()
        shown = client.post("/1/indexes/cities/query",
                            json={"facets": ["pop"], "maxValuesPerFacet": 1}).json()
        found["cities"].result = EngineResult(hits=[], total=300, facets={"population": [
            FacetValue(value=str(i), count=3) for i in range(100)]})
        cut = client.post("/1/indexes/cities/query", json={"facets": ["pop"]}).json()
    assert body["facets_stats"] == {"pop": {"min": 5, "max": 10, "avg": 25 / 3, "sum": 25}}
    # maxValuesPerFacet cuts the values shown, not the values the stats are computed from
    assert shown["facets"] == {"pop": {"10": 2}} and shown["facets_stats"] == body["facets_stats"]
    assert "facets_stats" not in cut  # 100 values, as many as asked: maybe not all of them


def test_facets_stats_of_typed_numeric_facets_come_from_the_engine() -> None:
    found = engines()
    many = [FacetValue(value=str(i), count=3) for i in range(100)]  # not every value
    found["cities"].result = EngineResult(hits=[], total=300, facets={"population": many},
                                          stats={"population": FieldStats(
                                              min=0, max=250, avg=120.5, sum=36150, count=300)})
    with serve(settings(), found) as client:
        body = client.post("/1/indexes/cities/query",
                           json={"facets": ["pop", "region"]}).json()
        found["cities"].result = EngineResult(hits=[], total=300, facets={"population": many},
                                              stats={"population": FieldStats(min=0, max=250)})
        bounds_only = client.post("/1/indexes/cities/query", json={"facets": ["pop"]}).json()
        few = [FacetValue(value="10", count=2), FacetValue(value="5", count=1)]
        found["cities"].result = EngineResult(hits=[], total=3, facets={"population": few},
                                              stats={"population": FieldStats(min=5, max=10)})
        counted = client.post("/1/indexes/cities/query", json={"facets": ["pop"]}).json()
    # only the numeric facets among those requested are asked for stats
    assert [q.stats for q in queries(found["cities"])] == [("population",)] * 3
    assert body["facets_stats"] == {"pop": {"min": 0, "max": 250, "avg": 120.5, "sum": 36150}}
    # min and max alone (Meilisearch): avg and sum left out rather than guessed
    assert bounds_only["facets_stats"] == {"pop": {"min": 0, "max": 250}}
    # ... unless the value counts hold every value: then they give all four exactly
    assert counted["facets_stats"] == {"pop": {"min": 5, "max": 10, "avg": 25 / 3, "sum": 25}}


# ---------------------------------------------------------------- snippets


def test_snippeted_attributes_are_highlighted_by_the_engine_and_snippeted() -> None:
    """``attributesToSnippet`` asks the engine to highlight those attributes too (in real
    names); the hits get ``_snippetResult`` (public names), and an attribute snippeted but
    not in ``attributesToHighlight`` no ``_highlightResult``."""
    found = engines()
    with serve(settings(), found) as client:
        body = client.post("/1/indexes/cities/query", json={
            "query": "port", "attributesToHighlight": ["region"],
            "attributesToSnippet": ["name:1"], "snippetEllipsisText": "..."}).json()
        none = client.post("/1/indexes/cities/query", json={
            "query": "port", "attributesToHighlight": [], "attributesToSnippet": []}).json()
    first, second = queries(found["cities"])
    assert (first.highlight, first.highlight_fields) == (True, ("continent", "name"))
    assert second.highlight is False
    hit = body["hits"][0]
    assert hit["_snippetResult"] == {"name": {"value": "<em>Port</em> ...", "matchLevel": "full"}}
    assert list(hit["_highlightResult"]) == ["region"]
    assert body["hits"][1]["_snippetResult"] == {  # no match: the first word
        "name": {"value": "Port ...", "matchLevel": "none"}}
    assert all("_snippetResult" not in h for h in none["hits"])
