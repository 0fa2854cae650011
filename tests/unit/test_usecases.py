"""Every use case against hand-written fakes of the ports."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from typing import Any, TypeVar

import msgspec
import pytest

from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import DefaultsConfig, FieldConfig, IndexConfig
from searchport.domain.errors import (
    DocumentNotFound,
    Forbidden,
    IndexNotFound,
    InvalidQuery,
    InvalidRequest,
    PayloadTooLarge,
    UnsupportedFeature,
)
from searchport.domain.query import FacetValuesQuery, SearchQuery, TermFilter
from searchport.domain.responses import (
    AutocompleteResponse,
    FacetSearchResponse,
    GeoCluster,
    IndexListResponse,
    SearchResponse,
)
from searchport.domain.results import (
    Bucket,
    Capabilities,
    EngineGeoCluster,
    EngineResult,
    FacetValue,
    Hit,
)
from searchport.domain.search_request import SearchRequest
from searchport.domain.usecases.autocomplete import Autocomplete, AutocompleteRequest
from searchport.domain.usecases.clear_cache import ClearCache
from searchport.domain.usecases.facet_search import FacetSearch, FacetSearchRequest
from searchport.domain.usecases.get_document import GetDocument, GetDocumentRequest
from searchport.domain.usecases.get_mapping import GetMapping, GetMappingRequest
from searchport.domain.usecases.health import Health
from searchport.domain.usecases.list_indexes import ListIndexes
from searchport.domain.usecases.raw_query import RawQuery, RawQueryRequest
from searchport.domain.usecases.search import Search
from searchport.ports.cache import CachePort
from searchport.ports.engine import SearchEnginePort
from tests.fakes import FakeCache, FakeEngine, FieldFacetEngine, UnreachableCache

T = TypeVar("T")

FIELDS = {
    "name": FieldConfig(weight=3),
    "country": FieldConfig(searchable=True),
    "region": FieldConfig(field="continent"),
    "pop": FieldConfig(field="population"),
    "where": FieldConfig(field="location"),
}
SECRETS = {
    "host": "https://es.internal.example:9200",
    "api_key": "es-secret-key",
    "username": "svc-reader",
    "password": "hunter2",
    "index_name": "prod-cities-v7",
}


def run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def answer(kind: type[T], awaitable: Awaitable[Any]) -> T:
    """Run a use case and read its answer back as ``kind``, as the HTTP layer encodes it."""
    return msgspec.json.decode(msgspec.json.encode(run(awaitable)), type=kind)


def index(**config: Any) -> IndexConfig:
    config.setdefault("fields", FIELDS)
    return IndexConfig(**{"engine": "tantivy", "path": "unused", **config})


def catalog(engine: FakeEngine, **config: Any) -> Catalog:
    return Catalog({"cities": IndexEntry("cities", index(**config), engine)})


def hit(doc_id: str, **source: Any) -> Hit:
    return Hit(id=doc_id, index="cities", score=1.0, source=source)


def test_fakes_conform_to_the_ports() -> None:
    engine: SearchEnginePort = FakeEngine()
    cache: CachePort = FakeCache()
    assert engine.name == "fake" and cache.status == "memory"


# -- Search --------------------------------------------------------------------------------


def test_search_shapes_hits_facets_and_pages() -> None:
    engine = FakeEngine(
        result=EngineResult(
            hits=[hit("1", name="Paris", continent="Europe", objectID="stored")],
            total=41,
            facets={
                "continent": [
                    FacetValue(value="Asia", count=2),
                    FacetValue(value="Europe", count=9),
                ]
            },
        )
    )
    response = answer(SearchResponse, Search(catalog=catalog(engine))(
        SearchRequest(handle="cities", q="par", facets="region", per_page=20)
    ))
    assert response.hits == [
        {"objectID": "1", "_index": "cities", "_score": 1.0, "_highlights": {},
         "name": "Paris", "region": "Europe"}
    ]
    assert (response.total_hits, response.page, response.per_page) == (41, 1, 20)
    assert response.total_pages == 3
    assert response.facets == {
        "region": [FacetValue(value="Europe", count=9), FacetValue(value="Asia", count=2)]
    }
    assert response.suggestions == []
    body = msgspec.json.decode(msgspec.json.encode(response))
    assert set(body) == {
        "hits", "totalHits", "page", "perPage", "totalPages", "facets", "suggestions"
    }
    (query,) = engine.queries
    assert isinstance(query, SearchQuery) and query.facets == ("continent",)


@pytest.mark.parametrize(
    ("total", "per_page", "pages"), [(0, 20, 0), (1, 20, 1), (20, 20, 1), (21, 20, 2), (99, 1, 99)]
)
def test_total_pages(total: int, per_page: int, pages: int) -> None:
    engine = FakeEngine(result=EngineResult(hits=[], total=total))
    response = answer(SearchResponse, Search(catalog=catalog(engine))(
        SearchRequest(handle="cities", per_page=per_page)
    ))
    assert response.total_pages == pages == math.ceil(total / per_page)


@pytest.mark.parametrize(
    ("total", "per_page", "window", "pages"),
    [(34_006, 20, 10_000, 500), (34_006, 30, 10_000, 333), (10_000, 20, 10_000, 500),
     (9_999, 20, 10_000, 500), (120, 20, 50, 2), (30, 20, 50, 2)],
)
def test_total_pages_stop_at_the_result_window(
    total: int, per_page: int, window: int, pages: int
) -> None:
    # the last page counted is one that can be fetched, and the one after it cannot
    engine = FakeEngine(result=EngineResult(hits=[], total=total))
    searches = catalog(engine, max_result_window=window)
    response = answer(SearchResponse, Search(catalog=searches)(
        SearchRequest(handle="cities", per_page=per_page)
    ))
    reachable = [p for p in range(1, math.ceil(total / per_page) + 1) if p * per_page <= window]
    assert response.total_pages == pages == len(reachable)
    if pages:
        answer(SearchResponse, Search(catalog=searches)(
            SearchRequest(handle="cities", per_page=per_page, page=pages)))
    if pages < math.ceil(total / per_page):
        with pytest.raises(InvalidRequest, match=f"past the last page, {pages}:"):
            answer(SearchResponse, Search(catalog=searches)(
                SearchRequest(handle="cities", per_page=per_page, page=pages + 1)))


def test_search_histograms_are_filled_and_keyed_by_the_name_sent() -> None:
    engine = FakeEngine(result=EngineResult(
        hits=[], total=3,
        histograms={"population": [Bucket(key=3000.0, count=1), Bucket(key=0.0, count=2)]},
    ))
    response = answer(SearchResponse, Search(catalog=catalog(engine))(
        SearchRequest(handle="cities", histogram='{"pop": 1000}')
    ))
    assert response.histograms == {
        "pop": [Bucket(key=0, count=2), Bucket(key=1000, count=0),
                Bucket(key=2000, count=0), Bucket(key=3000, count=1)]
    }


def test_search_histogram_without_engine_buckets_is_an_empty_list() -> None:
    response = answer(SearchResponse, Search(catalog=catalog(FakeEngine()))(
        SearchRequest(handle="cities", histogram='{"pop": 10}')
    ))
    assert response.histograms == {"pop": []}


def test_search_geo_clusters_only_when_asked() -> None:
    engine = FakeEngine(result=EngineResult(
        hits=[], total=2,
        geo_clusters=[EngineGeoCluster(lat=1.0, lng=2.0, count=2, key="1/1/0",
                                       hit=hit("9", continent="Africa"))],
    ))
    search = Search(catalog=catalog(engine))
    plain = answer(SearchResponse, search(SearchRequest(handle="cities")))
    assert plain.geo_clusters is msgspec.UNSET and plain.histograms is msgspec.UNSET
    asked = answer(SearchResponse, search(
        SearchRequest(handle="cities", geo_grid='{"field":"where","precision":1}')
    ))
    assert asked.geo_clusters == [
        GeoCluster(lat=1.0, lng=2.0, count=2, key="1/1/0",
                   hit={"objectID": "9", "_index": "cities", "_score": 1.0, "_highlights": {},
                        "region": "Africa"})
    ]


def test_search_passes_suggestions_through() -> None:
    engine = FakeEngine(result=EngineResult(hits=[], total=0, suggestions=["paris france"]))
    search = Search(catalog=catalog(engine, defaults=DefaultsConfig(suggest_field="name")))
    response = answer(
        SearchResponse, search(SearchRequest(handle="cities", q="pari", suggest="true"))
    )
    assert response.suggestions == ["paris france"]
    assert engine.queries[-1].suggest_field == "name"


def test_search_on_an_unknown_handle() -> None:
    with pytest.raises(IndexNotFound, match='"nope"'):
        run(Search(catalog=catalog(FakeEngine()))(SearchRequest(handle="nope")))


def test_search_refuses_unsupported_features_before_calling_the_engine() -> None:
    engine = FakeEngine(capabilities=Capabilities(geo_grid=False))
    with pytest.raises(UnsupportedFeature, match="geoGrid is not supported by the fake engine"):
        run(Search(catalog=catalog(engine))(
            SearchRequest(handle="cities", geo_grid='{"field":"where","precision":1}')
        ))
    assert engine.queries == []


# -- FacetSearch ---------------------------------------------------------------------------


def test_facet_search_answers_under_the_name_sent_and_orders_values() -> None:
    values = [FacetValue(value=v, count=c) for v, c in [("b", 1), ("a", 5), ("c", 5)]]
    engine = FakeEngine(facet_values=values)
    response = answer(FacetSearchResponse, FacetSearch(catalog=catalog(engine))(FacetSearchRequest(
        handle="cities", field="region", q="  eu ", filters='{"pop": {"min": 5}, "country": "FR"}'
    )))
    assert response.field == "region"
    assert [(v.value, v.count) for v in response.values] == [("a", 5), ("c", 5), ("b", 1)]
    (query,) = engine.queries
    assert isinstance(query, FacetValuesQuery)
    assert (query.field, query.text, query.limit) == ("continent", "eu", 20)
    assert [f.field for f in query.filters] == ["population", "country"]


@pytest.mark.parametrize(("sent", "limit"), [(None, 20), (0, 1), (-3, 1), (7, 7), (100, 100),
                                             (1000, 100)])
def test_facet_search_limit_is_clamped(sent: int | None, limit: int) -> None:
    values = [FacetValue(value=f"v{i:03}", count=i) for i in range(150)]
    engine = FakeEngine(facet_values=values)
    response = answer(FacetSearchResponse, FacetSearch(catalog=catalog(engine))(
        FacetSearchRequest(handle="cities", field="country", max_values=sent)
    ))
    assert engine.queries[0].limit == limit
    assert [v.count for v in response.values] == list(range(149, 149 - limit, -1))


@pytest.mark.parametrize("filters", ["{bad", '{"country": null}', "[]"])
def test_facet_search_rejects_bad_filters(filters: str) -> None:
    engine = FakeEngine()
    with pytest.raises(InvalidRequest, match="filters"):
        run(FacetSearch(catalog=catalog(engine))(
            FacetSearchRequest(handle="cities", field="country", filters=filters)
        ))
    assert engine.queries == []


def test_facet_search_on_an_unknown_handle() -> None:
    with pytest.raises(IndexNotFound):
        run(FacetSearch(catalog=catalog(FakeEngine()))(
            FacetSearchRequest(handle="other", field="country")
        ))


# -- Autocomplete --------------------------------------------------------------------------


def test_autocomplete_defaults() -> None:
    engine = FakeEngine(result=EngineResult(hits=[hit("1", continent="Europe")], total=1))
    response = answer(AutocompleteResponse, Autocomplete(catalog=catalog(engine))(
        AutocompleteRequest(handle="cities", q="pa")
    ))
    assert response.hits == [{"objectID": "1", "_index": "cities", "_score": 1.0,
                              "_highlights": {}, "region": "Europe"}]
    assert response.total_hits == 1
    assert response.facets is msgspec.UNSET
    assert msgspec.json.decode(msgspec.json.encode(response)).keys() == {"hits", "totalHits"}
    (query,) = engine.queries
    assert query.limit == 5 and query.text == "pa" and query.prefix_last_word
    assert {w.field: w.weight for w in query.search_fields} == {"name": 3.0, "country": 1.0}


@pytest.mark.parametrize(("sent", "limit"), [(None, 5), (0, 1), (-1, 1), (12, 12), (20, 20),
                                             (21, 20)])
def test_autocomplete_per_page_is_clamped(sent: int | None, limit: int) -> None:
    engine = FakeEngine()
    run(Autocomplete(catalog=catalog(engine))(AutocompleteRequest(handle="cities", per_page=sent)))
    assert engine.queries[0].limit == limit


@pytest.mark.parametrize(("sent", "limit"), [(None, 4), (0, 1), (3, 3), (20, 20), (99, 20)])
def test_autocomplete_facets_per_field_is_clamped(sent: int | None, limit: int) -> None:
    values = [FacetValue(value=f"v{i:02}", count=30 - i) for i in range(30)]
    engine = FieldFacetEngine(values_by_field={"country": values})
    response = answer(AutocompleteResponse, Autocomplete(catalog=catalog(engine))(
        AutocompleteRequest(handle="cities", q="v", facets="country", max_facets_per_field=sent)
    ))
    assert isinstance(response.facets, dict)
    assert [v.value for v in response.facets["country"]] == [f"v{i:02}" for i in range(limit)]
    lookups = [q for q in engine.queries if isinstance(q, FacetValuesQuery)]
    assert [(q.field, q.text, q.limit) for q in lookups] == [("country", "v", limit)]


def test_autocomplete_facets_only_with_values_keyed_as_sent() -> None:
    engine = FieldFacetEngine(values_by_field={
        "continent": [FacetValue(value="Europe", count=3), FacetValue(value="Eurasia", count=4)],
        "country": [],
    })
    response = answer(AutocompleteResponse, Autocomplete(catalog=catalog(engine))(
        AutocompleteRequest(handle="cities", q=" eu ", facets="region, country,region")
    ))
    assert response.facets == {
        "region": [FacetValue(value="Eurasia", count=4), FacetValue(value="Europe", count=3)]
    }
    lookups = [q for q in engine.queries if isinstance(q, FacetValuesQuery)]
    assert sorted((q.field, q.text) for q in lookups) == [("continent", "eu"), ("country", "eu")]


def test_autocomplete_on_an_unknown_handle() -> None:
    with pytest.raises(IndexNotFound):
        run(Autocomplete(catalog=catalog(FakeEngine()))(AutocompleteRequest(handle="x")))


# -- GetDocument, GetMapping ---------------------------------------------------------------


def test_get_document() -> None:
    engine = FakeEngine(documents={
        "7": Hit(id="7", index="cities",
                 source={"continent": "Asia", "_index": "x", "name": "Pune"})
    })
    document = answer(dict, GetDocument(catalog=catalog(engine))(GetDocumentRequest(handle="cities",
                                                                           id="7")))
    assert document == {"objectID": "7", "_index": "cities", "region": "Asia", "name": "Pune"}


def test_missing_document_is_document_not_found() -> None:
    with pytest.raises(DocumentNotFound) as caught:
        run(GetDocument(catalog=catalog(FakeEngine()))(GetDocumentRequest(handle="cities",
                                                                          id="nope")))
    assert caught.value.message == "Document not found"


def test_get_mapping_returns_the_engine_mapping_unmodified() -> None:
    mapping = answer(
        dict, GetMapping(catalog=catalog(FakeEngine()))(GetMappingRequest(handle="cities"))
    )
    assert mapping == {"fake": {"mappings": {}}}
    with pytest.raises(IndexNotFound):
        run(GetMapping(catalog=catalog(FakeEngine()))(GetMappingRequest(handle="x")))


# -- RawQuery ------------------------------------------------------------------------------


def raw(body: bytes, engine: FakeEngine | None = None, limit: int = 65_536, **config: Any) -> Any:
    use_case = RawQuery(catalog=catalog(engine or FakeEngine(), **config), max_body_bytes=limit)
    return run(use_case(RawQueryRequest(handle="cities", body=body)))


def test_raw_query_passes_the_object_through_and_returns_engine_bytes() -> None:
    engine = FakeEngine()
    result = raw(b'{"query": {"match_all": {}}, "size": 1}', engine)
    assert msgspec.json.decode(result) == {"echo": {"query": {"match_all": {}}, "size": 1}}
    assert engine.queries == [{"query": {"match_all": {}}, "size": 1}]


def test_raw_query_switched_off_is_forbidden_even_for_bad_bodies() -> None:
    engine = FakeEngine()
    with pytest.raises(Forbidden):
        raw(b"x" * 100_000, engine, raw_query=False)
    assert engine.queries == []


def test_raw_query_on_an_engine_without_it_is_unsupported() -> None:
    with pytest.raises(UnsupportedFeature, match="not supported by the fake engine"):
        raw(b"{}", FakeEngine(capabilities=Capabilities(raw_query=False)))


def test_raw_query_body_size_limit() -> None:
    body = b'{"q":"' + b"x" * 1000 + b'"}'
    assert raw(body, limit=len(body))
    with pytest.raises(PayloadTooLarge, match=str(len(body) - 1)):
        raw(body, limit=len(body) - 1)


@pytest.mark.parametrize("body", [b"[]", b'"text"', b"1", b"null", b"", b"{bad", b"{} {}"])
def test_raw_query_body_must_be_a_json_object(body: bytes) -> None:
    engine = FakeEngine()
    with pytest.raises(InvalidRequest, match="JSON object"):
        raw(body, engine)
    assert engine.queries == []


def test_raw_query_deeply_nested_body_is_a_400() -> None:
    with pytest.raises(InvalidRequest):
        raw(b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}")


def test_raw_query_engine_rejection_is_invalid_query() -> None:
    with pytest.raises(InvalidQuery, match="bad"):
        raw(b'{"bad": 1}')


# -- Health, ListIndexes, ClearCache -------------------------------------------------------


@pytest.mark.parametrize("status", ["disabled", "memory", "connected", "error"])
def test_health_reports_the_cache_status_and_version(status: str) -> None:
    response = run(Health(cache=FakeCache(status=status), version="9.8.7")())
    assert (response.status, response.cache, response.version) == ("ok", status, "9.8.7")


def test_list_indexes_reports_capabilities_without_secrets() -> None:
    entries = {
        "books": IndexEntry(
            "books",
            index(engine="elasticsearch", path=None, defaults=DefaultsConfig(suggest_field="t"),
                  **SECRETS),
            FakeEngine(name="elasticsearch", capabilities=Capabilities(
                suggest=True, histogram=True, geo_grid=True, geo_radius=True, nested=True,
                multi_index=True)),
        ),
        "cities": IndexEntry(
            "cities", index(raw_query=False),
            FakeEngine(name="tantivy", capabilities=Capabilities(suggest=True, boosts=False)),
        ),
    }
    response = run(ListIndexes(catalog=Catalog(entries))())
    assert isinstance(response, IndexListResponse)
    body = msgspec.json.decode(msgspec.json.encode(response))
    assert body == {"indexes": [
        {"handle": "books", "engine": "elasticsearch", "capabilities": {
            "suggest": True, "boosts": True, "histogram": True, "geoGrid": True,
            "geoRadius": True, "nested": True, "multiIndex": True, "rawQuery": True,
            "semantic": False}},
        {"handle": "cities", "engine": "tantivy", "capabilities": {
            # suggest needs a suggestField; rawQuery: false in the config turns it off
            "suggest": False, "boosts": False, "histogram": False, "geoGrid": False,
            "geoRadius": False, "nested": False, "multiIndex": False, "rawQuery": False,
            "semantic": False}},
    ]}
    text = msgspec.json.encode(response).decode()
    for secret in SECRETS.values():
        assert secret not in text


def test_clear_cache() -> None:
    cache = FakeCache()
    run(cache.set("k1", b"v", 60))
    run(cache.set("k2", b"v", 60))
    cleared = run(ClearCache(cache=cache)())
    assert (cleared.cleared, cleared.removed) == (True, 2)
    assert cache.entries == {}


def test_clear_cache_without_a_cache() -> None:
    cleared = run(ClearCache(cache=FakeCache(status="disabled"))())
    assert cleared.cleared is False and cleared.removed is msgspec.UNSET
    assert isinstance(cleared.message, str) and cleared.message


def test_clear_cache_when_the_cache_is_unreachable() -> None:
    cleared = run(ClearCache(cache=UnreachableCache())())
    assert cleared.cleared is False and cleared.removed is msgspec.UNSET


def test_search_filters_reach_the_engine_in_real_names() -> None:
    engine = FakeEngine()
    run(Search(catalog=catalog(engine))(SearchRequest(handle="cities",
                                                      filters='{"region": ["Asia", "Europe"]}')))
    assert engine.queries[0].filters == (TermFilter(field="continent", values=("Asia", "Europe")),)
