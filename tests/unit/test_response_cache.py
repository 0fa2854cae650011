"""The response cache of the domain: keys, TTLs, encode-once and single flight, over fakes."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import weakref
from collections.abc import Awaitable
from typing import Any, TypeVar

import msgspec
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import CacheConfig, FieldConfig, IndexCacheConfig, IndexConfig
from searchport.domain.errors import DocumentNotFound, InvalidQuery, SearchportError
from searchport.domain.query import (
    AnyOf,
    FacetValuesQuery,
    GeoSort,
    Negated,
    NotFilter,
    RangeFilter,
    SearchQuery,
    TermFilter,
)
from searchport.domain.response_cache import FORMAT, ResponseCache, Summary
from searchport.domain.responses import SearchResponse
from searchport.domain.results import FacetValue
from searchport.domain.search_request import SearchRequest
from searchport.domain.usecases.autocomplete import Autocomplete, AutocompleteRequest
from searchport.domain.usecases.facet_search import FacetSearch, FacetSearchRequest
from searchport.domain.usecases.get_document import GetDocument, GetDocumentRequest
from searchport.domain.usecases.get_mapping import GetMapping, GetMappingRequest
from searchport.domain.usecases.search import Search
from tests.fakes import EchoEngine, FailingEngine, FakeCache, FakeEngine

T = TypeVar("T")

FIELDS = {
    "name": FieldConfig(weight=3),
    "country": FieldConfig(searchable=True),
    "region": FieldConfig(field="continent"),
    "pop": FieldConfig(field="population"),
    "where": FieldConfig(field="location"),
}
SECRETS = {"host": "https://es.internal.example:9200", "api_key": "es-secret-key",
           "username": "svc-reader", "password": "hunter2", "index_name": "prod-cities-v7"}


def run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def index(**config: Any) -> IndexConfig:
    config.setdefault("fields", FIELDS)
    return IndexConfig(**{"engine": "tantivy", "path": "unused", **config})


def catalog(fake: FakeEngine, handle: str = "cities", **config: Any) -> Catalog:
    return Catalog({handle: IndexEntry(handle, index(**config), fake)})


def responses(cache: FakeCache, **settings: Any) -> ResponseCache:
    return ResponseCache(cache=cache, settings=CacheConfig(**settings), version="1.2.3")


# -- keys ----------------------------------------------------------------------------------


def keys_of(*requests: SearchRequest, **config: Any) -> list[str]:
    """The cache key each request is stored under (one fresh cache per request)."""
    found = []
    for request in requests:
        cache = FakeCache()
        run(Search(catalog=catalog(EchoEngine(), **config), responses=responses(cache))(request))
        (key,) = cache.entries
        found.append(key)
    return found


def test_key_shape_is_prefix_version_kind_handle_digest() -> None:
    (key,) = keys_of(SearchRequest(handle="cities", q="paris"))
    prefix, version, kind, handle, digest = key.split(":")
    assert (prefix, version, kind, handle) == ("searchport", FORMAT, "search", "cities")
    assert len(digest) == 64 and int(digest, 16) >= 0


def test_sort_priority_order_makes_different_entries() -> None:
    by_pop = SearchRequest(handle="cities", sort='{"pop": "desc", "name": "asc"}')
    by_name = SearchRequest(handle="cities", sort='{"name": "asc", "pop": "desc"}')
    first, second = keys_of(by_pop, by_name)
    assert first != second
    # and each one is served its own order from a shared cache
    cache, engine = FakeCache(), EchoEngine()
    search = Search(catalog=catalog(engine), responses=responses(cache))
    one = run(search(by_pop)).decode(SearchResponse)
    two = run(search(by_name)).decode(SearchResponse)
    assert [s["field"] for s in json.loads(one.hits[0]["query"])["sort"]] == [
        "population", "name"]
    assert [s["field"] for s in json.loads(two.hits[0]["query"])["sort"]] == [
        "name", "population"]
    assert len(engine.queries) == 2


def test_aliases_defaults_and_clamping_are_resolved_before_the_key() -> None:
    same = keys_of(
        SearchRequest(handle="cities", facets="region", page=None, per_page=None),
        SearchRequest(handle="cities", facets="continent", page=1, per_page=20),
        SearchRequest(handle="cities", facets=" region ", page=-4, per_page=20),
        SearchRequest(handle="cities", facets="region", filters=None, sort=None),
    )
    assert len(set(same)) == 1
    assert keys_of(
        SearchRequest(handle="cities", filters='{"region": "Asia"}'),
        SearchRequest(handle="cities", filters='{"continent": "Asia"}'),
    )[0] == keys_of(SearchRequest(handle="cities", filters='{"region": "Asia"}'))[0]


@pytest.mark.parametrize(("one", "other"), [
    ('{"pop": 1}', '{"pop": true}'),
    ('{"pop": 1}', '{"pop": 1.5}'),
    ('{"country": ["FR", "DE"]}', '{"country": ["FR"]}'),
    ('{"country": "FR"}', '{"country": {"not": "FR"}}'),
    ('{"country": "1"}', '{"country": 1}'),
])
def test_filter_values_of_other_types_make_different_entries(one: str, other: str) -> None:
    first, second = keys_of(SearchRequest(handle="cities", filters=one),
                            SearchRequest(handle="cities", filters=other))
    assert first != second


def test_a_config_change_never_serves_old_entries() -> None:
    cache, engine = FakeCache(), EchoEngine()
    request = SearchRequest(handle="cities", q="paris")
    before = Search(catalog=catalog(engine), responses=responses(cache))
    run(before(request))
    run(before(request))
    assert len(engine.queries) == 1  # a hit while the config stands
    changed_fields = {**FIELDS, "name": FieldConfig(weight=5)}
    for change in ({"fields": changed_fields}, {"exact_totals": False},
                   {"cache": IndexCacheConfig(search_ttl=30)}, {"max_result_window": 500}):
        calls = len(engine.queries)
        after = Search(catalog=catalog(engine, **change), responses=responses(cache))
        run(after(request))
        assert len(engine.queries) == calls + 1, change
    assert len(cache.entries) == 5


def test_a_new_searchport_version_never_serves_old_entries() -> None:
    cache, engine = FakeCache(), EchoEngine()
    request = SearchRequest(handle="cities")
    for version in ("1.0.0", "1.0.1"):
        run(Search(catalog=catalog(engine),
                   responses=ResponseCache(cache=cache, version=version))(request))
    assert len(engine.queries) == 2 and len(cache.entries) == 2


def test_keys_hold_no_config_value_and_the_prefix_is_configurable() -> None:
    cache = FakeCache()
    search = Search(catalog=catalog(EchoEngine(), engine="elasticsearch", **SECRETS),
                    responses=responses(cache, prefix="team-a"))
    run(search(SearchRequest(handle="cities", q="hunter2")))
    (key,) = cache.entries
    assert key.startswith(f"team-a:{FORMAT}:search:cities:")
    for secret in [*SECRETS.values(), "hunter2", "paris"]:
        assert secret not in key


def test_same_request_on_two_handles_makes_two_entries() -> None:
    cache, engine = FakeCache(), EchoEngine()
    entries = {h: IndexEntry(h, index(), engine) for h in ("cities", "towns")}
    search = Search(catalog=Catalog(entries), responses=responses(cache))
    run(search(SearchRequest(handle="cities")))
    run(search(SearchRequest(handle="towns")))
    assert len(engine.queries) == 2 and len(cache.entries) == 2


def test_facet_values_are_keyed_by_the_field_name_sent() -> None:
    cache, engine = FakeCache(), EchoEngine()
    facets = FacetSearch(catalog=catalog(engine), responses=responses(cache))
    by_alias = run(facets(FacetSearchRequest(handle="cities", field="region")))
    by_real = run(facets(FacetSearchRequest(handle="cities", field="continent")))
    assert json.loads(by_alias.body)["field"] == "region"
    assert json.loads(by_real.body)["field"] == "continent"
    run(facets(FacetSearchRequest(handle="cities", field="region", max_values=20)))
    assert len(engine.queries) == 2  # the third is the first again (20 is the default)


def test_autocomplete_is_keyed_by_the_facet_names_sent() -> None:
    cache, engine = FakeCache(), EchoEngine()
    suggest = Autocomplete(catalog=catalog(engine), responses=responses(cache))
    one = run(suggest(AutocompleteRequest(handle="cities", q="pa", facets="region")))
    two = run(suggest(AutocompleteRequest(handle="cities", q="pa", facets="continent")))
    assert set(json.loads(one.body)["facets"]) == {"region"}
    assert set(json.loads(two.body)["facets"]) == {"continent"}
    again = run(suggest(AutocompleteRequest(handle="cities", q="pa", facets="region",
                                            per_page=5)))
    assert again.body == one.body
    assert len(cache.entries) == 2


# -- what is stored, for how long ----------------------------------------------------------


def test_ttls_per_kind_from_the_global_settings() -> None:
    cache, engine = FakeCache(), EchoEngine()
    cat = catalog(engine)
    shared = responses(cache, search_ttl=45, mapping_ttl=900)
    run(Search(catalog=cat, responses=shared)(SearchRequest(handle="cities")))
    run(FacetSearch(catalog=cat, responses=shared)(FacetSearchRequest(handle="cities",
                                                                      field="country")))
    run(Autocomplete(catalog=cat, responses=shared)(AutocompleteRequest(handle="cities")))
    run(GetMapping(catalog=cat, responses=shared)(GetMappingRequest(handle="cities")))
    run(GetDocument(catalog=cat, responses=shared)(GetDocumentRequest(handle="cities", id="7")))
    by_kind = {key.split(":")[2]: ttl for key, ttl in cache.ttls.items()}
    # documents are not stored unless the index says so
    assert by_kind == {"search": 45, "facets": 45, "autocomplete": 45, "mapping": 900}


def test_ttls_per_index_override_the_global_ones() -> None:
    cache, engine = FakeCache(), EchoEngine()
    cat = catalog(engine, cache=IndexCacheConfig(search_ttl=5, mapping_ttl=10, documents=True))
    shared = responses(cache)
    run(Search(catalog=cat, responses=shared)(SearchRequest(handle="cities")))
    run(GetMapping(catalog=cat, responses=shared)(GetMappingRequest(handle="cities")))
    run(GetDocument(catalog=cat, responses=shared)(GetDocumentRequest(handle="cities", id="7")))
    by_kind = {key.split(":")[2]: ttl for key, ttl in cache.ttls.items()}
    assert by_kind == {"search": 5, "mapping": 10, "document": 5}


def test_documents_are_served_from_the_cache_only_when_configured() -> None:
    for documents, engine_calls in ((False, 2), (True, 1)):
        cache, engine = FakeCache(), EchoEngine()
        get = GetDocument(catalog=catalog(engine, cache=IndexCacheConfig(documents=documents)),
                          responses=responses(cache))
        first = run(get(GetDocumentRequest(handle="cities", id="7")))
        second = run(get(GetDocumentRequest(handle="cities", id="7")))
        assert len(engine.queries) == engine_calls
        assert (first.body == second.body) is documents


def test_a_zero_ttl_turns_caching_off_for_that_index() -> None:
    cache, engine = FakeCache(), EchoEngine()
    search = Search(catalog=catalog(engine, cache=IndexCacheConfig(search_ttl=0)),
                    responses=responses(cache))
    run(search(SearchRequest(handle="cities")))
    run(search(SearchRequest(handle="cities")))
    assert len(engine.queries) == 2 and cache.entries == {}


def test_a_hit_is_the_stored_bytes_without_calling_the_engine() -> None:
    cache, engine = FakeCache(), EchoEngine()
    search = Search(catalog=catalog(engine), responses=responses(cache))
    first = run(search(SearchRequest(handle="cities", q="x")))
    (key,) = cache.entries
    assert cache.entries[key] == first.body
    assert first.decode(SearchResponse).total_hits > 0
    marker = b'{"hits":[],"totalHits":7,"page":1,"perPage":20,"totalPages":1,"facets":{},' \
             b'"suggestions":[]}'
    cache.entries[key] = marker
    assert run(search(SearchRequest(handle="cities", q="x"))).body == marker
    assert len(engine.queries) == 1


def test_errors_are_never_stored() -> None:
    cache = FakeCache()
    engine = FailingEngine(InvalidQuery("the engine rejected the query"))
    search = Search(catalog=catalog(engine), responses=responses(cache))
    for _ in range(2):
        with pytest.raises(InvalidQuery):
            run(search(SearchRequest(handle="cities")))
    assert len(engine.queries) == 2 and cache.entries == {}
    missing = FakeEngine()
    get = GetDocument(catalog=catalog(missing, cache=IndexCacheConfig(documents=True)),
                      responses=responses(cache))
    with pytest.raises(DocumentNotFound):
        run(get(GetDocumentRequest(handle="cities", id="nope")))
    assert cache.entries == {}


# -- single flight -------------------------------------------------------------------------


def test_concurrent_identical_misses_make_one_engine_call() -> None:
    cache, engine = FakeCache(), EchoEngine(delay=0.05)
    shared = responses(cache)
    search = Search(catalog=catalog(engine), responses=shared)

    async def burst() -> list[bytes]:
        answers = await asyncio.gather(
            *(search(SearchRequest(handle="cities", q="paris")) for _ in range(25))
        )
        return [a.body for a in answers]

    bodies = run(burst())
    assert len(engine.queries) == 1
    assert len(set(bodies)) == 1
    assert not shared._flights and len(cache.entries) == 1  # the flight is over


def test_single_flight_also_without_a_cache() -> None:
    engine = EchoEngine(delay=0.05)
    search = Search(catalog=catalog(engine))

    async def burst() -> None:
        await asyncio.gather(*(search(SearchRequest(handle="cities")) for _ in range(10)),
                             *(search(SearchRequest(handle="cities", q="b")) for _ in range(10)))

    run(burst())
    assert len(engine.queries) == 2


def flights(cached: bool) -> ResponseCache:
    """A response cache over a cache, or the one that runs with the cache ``none``."""
    return responses(FakeCache()) if cached else ResponseCache.uncached()


@pytest.mark.parametrize("cached", [True, False])
def test_every_waiter_of_a_failed_flight_gets_the_error_and_the_next_call_retries(
    cached: bool,
) -> None:
    class SlowFailure(FailingEngine):
        async def search(self, query: Any) -> Any:
            self.queries.append(query)
            await asyncio.sleep(0.05)
            raise self.error

    engine = SlowFailure(InvalidQuery("bad"))
    search = Search(catalog=catalog(engine), responses=flights(cached))

    async def burst() -> list[BaseException | Any]:
        return await asyncio.gather(
            *(search(SearchRequest(handle="cities")) for _ in range(8)), return_exceptions=True
        )

    results = run(burst())
    assert all(isinstance(r, InvalidQuery) for r in results)
    assert len(engine.queries) == 1
    with pytest.raises(SearchportError):
        run(search(SearchRequest(handle="cities")))
    assert len(engine.queries) == 2


@pytest.mark.parametrize("cached", [True, False])
def test_a_caller_that_goes_away_does_not_cancel_the_others(cached: bool) -> None:
    engine = EchoEngine(delay=0.5)  # still in flight when the first caller leaves, even under load
    shared = flights(cached)
    search = Search(catalog=catalog(engine), responses=shared)

    async def scenario() -> list[bytes]:
        first = asyncio.ensure_future(search(SearchRequest(handle="cities")))
        await asyncio.sleep(0.01)
        others = [asyncio.ensure_future(search(SearchRequest(handle="cities")))
                  for _ in range(3)]
        await asyncio.sleep(0.01)
        first.cancel()
        bodies = [a.body for a in await asyncio.gather(*others)]
        assert first.cancelled()
        return bodies

    bodies = run(scenario())
    assert len(bodies) == 3 and len(set(bodies)) == 1
    assert len(engine.queries) == 1
    assert not shared._flights


# -- no two different requests share an entry (property) ----------------------------------

CONFIGS = {
    "cities": index(),
    "towns": index(fields={"name": FieldConfig(weight=1), "region": FieldConfig(field="area"),
                           "pop": FieldConfig(field="population")}),
}
names = st.sampled_from(["name", "country", "region", "continent", "pop", "population",
                         "where", "location", "_score"])
scalars = st.sampled_from(["FR", "fr", "1", "", "Asia"]) | st.integers(-2, 2) | st.booleans() \
    | st.sampled_from([1.0, 1.5, -0.0])
filter_values = (
    scalars
    | st.lists(scalars, min_size=1, max_size=3)
    | st.fixed_dictionaries({}, optional={"min": st.integers(0, 9), "max": st.integers(0, 9)})
    .filter(bool)
    | st.fixed_dictionaries({"not": scalars})
    | st.fixed_dictionaries({"exists": st.booleans()})
)


def _json(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[str | None]:
    return st.none() | strategy.map(json.dumps)


def _csv(values: st.SearchStrategy[str]) -> st.SearchStrategy[str | None]:
    return st.none() | st.lists(values, max_size=3).map(",".join)


PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "handle": st.sampled_from(sorted(CONFIGS)),
    "q": st.sampled_from(["", "paris", "Paris", "paris ", "par is", "pa"]),
    "page": st.none() | st.integers(-1, 4),
    "per_page": st.none() | st.integers(0, 25) | st.just(120),
    "sort": _json(st.lists(st.tuples(names, st.sampled_from(["asc", "desc"])), min_size=1,
                           max_size=3, unique_by=lambda pair: pair[0]).map(dict)),
    "facets": _csv(names),
    "filters": _json(st.dictionaries(names, filter_values, max_size=3)),
    "highlight": st.none() | st.sampled_from(["true", "false", "name", "name,country", "region"]),
    "fields": _csv(names),
    "suggest": st.none() | st.sampled_from(["false"]),
    "boosts": _json(st.dictionaries(names, st.sampled_from([1, 2, 0.5, 2.0]), min_size=1,
                                    max_size=2)),
    "histogram": _json(st.dictionaries(st.sampled_from(["pop", "population"]),
                                       st.sampled_from([10, 100, 10.0]), min_size=1,
                                       max_size=1)),
    "geo_grid": _json(st.fixed_dictionaries({"field": st.sampled_from(["where", "location"]),
                                             "precision": st.integers(0, 3)})),
}
search_requests = st.fixed_dictionaries(PARAMS).map(lambda kw: SearchRequest(**kw))


@st.composite
def request_pairs(draw: st.DrawFn) -> tuple[SearchRequest, SearchRequest]:
    """Two requests: unrelated, or (mostly) the same but for one parameter."""
    first = draw(search_requests)
    if draw(st.integers(0, 3)) == 0:
        return first, draw(search_requests)
    name = draw(st.sampled_from(sorted(PARAMS)))
    return first, msgspec.structs.replace(first, **{name: draw(PARAMS[name])})


def answer_alone(request: SearchRequest) -> bytes | None:
    """The answer with no cache at all (``None`` when the request is refused)."""
    cat = Catalog({h: IndexEntry(h, c, EchoEngine(name=h)) for h, c in CONFIGS.items()})
    try:
        return run(Search(catalog=cat)(request)).body
    except SearchportError:
        return None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=request_pairs())
def test_two_requests_never_share_an_entry_unless_their_answers_are_equal(
    pair: tuple[SearchRequest, SearchRequest],
) -> None:
    first, second = pair
    alone_first, alone_second = answer_alone(first), answer_alone(second)
    assume(alone_first is not None and alone_second is not None)
    engines = {h: EchoEngine(name=h) for h in CONFIGS}  # hits name their handle
    cat = Catalog({h: IndexEntry(h, c, engines[h]) for h, c in CONFIGS.items()})
    search = Search(catalog=cat, responses=responses(FakeCache()))
    served_first = run(search(first)).body
    served_second = run(search(second)).body
    assert served_first == alone_first
    assert served_second == alone_second  # never the first request's answer
    calls = sum(len(e.queries) for e in engines.values())
    if alone_first == alone_second:
        event("equal answers: one entry")
        assert calls == 1  # normalisation made them one request: the second was a hit
    else:
        event("different answers: two entries")
        assert calls == 2


def test_the_echo_engine_tells_requests_apart() -> None:
    # the property above is only as strong as the fake: different queries, different answers
    one = answer_alone(SearchRequest(handle="cities", sort='{"pop":"asc","name":"asc"}'))
    two = answer_alone(SearchRequest(handle="cities", sort='{"name":"asc","pop":"asc"}'))
    assert one is not None and two is not None and one != two
    assert msgspec.json.decode(one)["hits"][0]["query"] != msgspec.json.decode(two)["hits"][0][
        "query"]


# the same property for the other cacheable answers with parameters

few_names = st.sampled_from(["region", "continent", "country"])  # an alias meets its field
FACET_PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "handle": st.sampled_from(sorted(CONFIGS)),
    "field": few_names,
    "q": st.sampled_from(["", "eu", "EU", "eu ", "e u"]),
    "max_values": st.none() | st.integers(-1, 22) | st.just(150),
    "filters": _json(st.dictionaries(names, filter_values, max_size=3)),
}
AUTOCOMPLETE_PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "handle": st.sampled_from(sorted(CONFIGS)),
    "q": st.sampled_from(["", "pa", "Pa", "pa ", "par is"]),
    "per_page": st.none() | st.integers(-1, 22),
    "facets": _csv(few_names),
    "max_facets_per_field": st.none() | st.integers(-1, 22),
}
KINDS: dict[str, tuple[Any, Any, dict[str, st.SearchStrategy[Any]]]] = {
    "facets": (FacetSearch, FacetSearchRequest, FACET_PARAMS),
    "autocomplete": (Autocomplete, AutocompleteRequest, AUTOCOMPLETE_PARAMS),
}


class HandleEcho(EchoEngine):
    """Facet values that also name the handle, as the search hits do (``_index``)."""

    async def facet_values(self, query: FacetValuesQuery) -> list[FacetValue]:
        return [FacetValue(value=f"{self.name} {v.value}", count=v.count)
                for v in await super().facet_values(query)]


def _engines() -> dict[str, EchoEngine]:
    return {h: HandleEcho(name=h) for h in CONFIGS}


def _answer(kind: str, request: Any, cache: FakeCache | None,
            engines: dict[str, EchoEngine]) -> bytes | None:
    use_case, _, _ = KINDS[kind]
    cat = Catalog({h: IndexEntry(h, c, engines[h]) for h, c in CONFIGS.items()})
    try:
        if cache is None:
            return bytes(run(use_case(catalog=cat)(request)).body)
        return bytes(run(use_case(catalog=cat, responses=responses(cache))(request)).body)
    except SearchportError:
        return None


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_facet_and_autocomplete_requests_never_share_an_entry_unless_equal(
    kind: str, data: st.DataObject
) -> None:
    _, request_type, params = KINDS[kind]
    first = data.draw(st.fixed_dictionaries(params))
    if data.draw(st.booleans()):
        name = data.draw(st.sampled_from(sorted(params)))
        second = {**first, name: data.draw(params[name])}
    else:
        second = data.draw(st.fixed_dictionaries(params))
    one, two = request_type(**first), request_type(**second)
    alone_one, alone_two = _answer(kind, one, None, _engines()), _answer(kind, two, None,
                                                                         _engines())
    assume(alone_one is not None and alone_two is not None)
    cache, engines = FakeCache(), _engines()
    assert _answer(kind, one, cache, engines) == alone_one
    calls = sum(len(e.queries) for e in engines.values())
    assert _answer(kind, two, cache, engines) == alone_two  # never the first one's answer
    again = sum(len(e.queries) for e in engines.values()) - calls
    if alone_one == alone_two:
        event("equal answers: one entry")
        assert again == 0  # normalisation made them one request: a hit
    else:
        event("different answers: two entries")
        assert again > 0


def test_strict_and_inclusive_range_bounds_make_different_entries() -> None:
    cache = responses(FakeCache())
    entry = catalog(EchoEngine()).get_entry("cities")
    inclusive = SearchQuery(filters=(RangeFilter(field="population", min=10, max=20),))
    strict_low = SearchQuery(filters=(RangeFilter(field="population", min=10, max=20,
                                                  min_exclusive=True),))
    strict_high = SearchQuery(filters=(RangeFilter(field="population", min=10, max=20,
                                                   max_exclusive=True),))
    keys = {cache.key("search", entry, [q, 1, 20]) for q in (inclusive, strict_low, strict_high)}
    assert len(keys) == 3


def test_groups_of_filters_make_different_entries() -> None:
    """AnyOf, Negated and the filters they hold are all in the key: the same filters as a
    group, negated, or ANDed never share an entry."""
    cache = responses(FakeCache())
    entry = catalog(EchoEngine()).get_entry("cities")
    europe = TermFilter(field="continent", values=("Europe",))
    big = RangeFilter(field="population", min=10)
    queries = [
        SearchQuery(filters=(europe, big)),
        SearchQuery(filters=(AnyOf(filters=(europe, big)),)),
        SearchQuery(filters=(AnyOf(filters=(big, europe)),)),
        SearchQuery(filters=(Negated(filter=AnyOf(filters=(europe, big))),)),
        SearchQuery(filters=(AnyOf(filters=(Negated(filter=europe), big)),)),
        SearchQuery(filters=(AnyOf(filters=(NotFilter(field="continent", values=("Europe",)),
                                            big)),)),
        SearchQuery(filters=(Negated(filter=big),)),
        SearchQuery(filters=(big,)),
    ]
    keys = {cache.key("search", entry, [q, 1, 20]) for q in queries}
    assert len(keys) == len(queries)


def test_distance_rankings_make_different_entries() -> None:
    """``geo_sort`` is in the key: no ranking, another centre or another field never share
    an entry, with everything else (the Algolia params echo included) the same."""
    cache = responses(FakeCache())
    entry = catalog(EchoEngine()).get_entry("cities")
    queries = [
        SearchQuery(text="port"),
        SearchQuery(text="port", geo_sort=GeoSort(field="location", lat=1, lon=2)),
        SearchQuery(text="port", geo_sort=GeoSort(field="location", lat=2, lon=1)),
        SearchQuery(text="port", geo_sort=GeoSort(field="location", lat=1, lon=2.5)),
        SearchQuery(text="port", geo_sort=GeoSort(field="other", lat=1, lon=2)),
    ]
    keys = {cache.key("search", entry, ["algolia", q, "query=port"]) for q in queries}
    assert len(keys) == len(queries)


# -- what outlives the encoding ------------------------------------------------------------


@pytest.mark.parametrize("stored", [False, True])
def test_a_computed_response_is_let_go_once_encoded_only_its_summary_kept(stored: bool) -> None:
    @dataclasses.dataclass
    class Computed:
        hits: list[dict[str, str]]
        total: int

    made: list[weakref.ref[Computed]] = []

    async def compute() -> Computed:
        response = Computed([{"objectID": "a"}, {"objectID": "b"}], 7)
        made.append(weakref.ref(response))
        return response

    def summary(response: Computed) -> Summary:
        return Summary(response.total, tuple(h["objectID"] for h in response.hits))

    cache = FakeCache()
    entry = IndexEntry("cities", index(), EchoEngine())
    respond = (responses(cache) if stored else ResponseCache.uncached()).respond
    encoded = run(respond("search", entry, ["q"], compute, summary))
    assert made[0]() is None  # the response is gone while its bytes are still held
    assert msgspec.json.decode(encoded.body) == {
        "hits": [{"objectID": "a"}, {"objectID": "b"}], "total": 7}
    assert encoded.summary == Summary(7, ("a", "b"))
    assert encoded.cache == ("miss" if stored else None)
    if stored:  # read from the cache: bytes only, nothing kept of a computation
        again = run(respond("search", entry, ["q"], compute, summary))
        assert len(made) == 1 and again.summary is None and again.body == encoded.body
    unasked = run(ResponseCache.uncached().respond("search", entry, ["r"], compute))
    assert unasked.summary is None


# -- a response of one request's own -------------------------------------------------------


@pytest.mark.parametrize("stored", [False, True])
def test_a_request_alone_gets_its_own_response_encoded_joined_ones_the_shared_bytes(
    stored: bool,
) -> None:
    """``alone`` makes the response encoded for the request that computed it when no other
    request shares the bytes; a request that joined a flight, and every stored response,
    get the shared bytes, ``Encoded.alone`` false (the caller adds its own part)."""
    calls: list[int] = []

    async def compute() -> dict[str, Any]:
        calls.append(1)
        await asyncio.sleep(0.02)
        return {"hits": [1, 2]}

    def own(name: str) -> Any:
        return lambda response: {**response, "queryID": name}

    entry = IndexEntry("cities", index(), EchoEngine())
    shared = responses(FakeCache()) if stored else ResponseCache.uncached()

    async def alone_then_together() -> tuple[Any, list[Any]]:
        single = await shared.respond("search", entry, ["a"], compute, None, own("one"))
        together = await asyncio.gather(*(
            shared.respond("search", entry, ["b"], compute, None, own(f"n{n}"))
            for n in range(3)))
        return single, together

    single, together = run(alone_then_together())
    assert len(calls) == 2  # one computation for the three requests that came together
    if stored:  # a response the cache keeps is everybody's: nothing of one request in it
        assert not single.alone and msgspec.json.decode(single.body) == {"hits": [1, 2]}
    else:
        assert single.alone and msgspec.json.decode(single.body) == {
            "hits": [1, 2], "queryID": "one"}
    assert [e.alone for e in together] == [False, False, False]
    assert {e.body for e in together} == {b'{"hits":[1,2]}'}
    assert not shared._flights and not shared._joined
