"""The engines' answers in searchport's cache (``CachedEngine``): keys, TTLs, single flight,
through the use cases over fake engines."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from typing import Any, TypeVar

import msgspec
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from searchport.adapters.cache.engine_cache import FORMAT, CachedEngine, EngineCache
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import (
    CacheConfig,
    FieldConfig,
    IndexCacheConfig,
    IndexConfig,
    SemanticConfig,
)
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
from searchport.domain.results import EngineResult, FacetValue
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


def kept(cache: FakeCache | None = None, **settings: Any) -> EngineCache:
    """An engine cache over ``cache``; without one, the cache ``none`` (single flight only)."""
    return EngineCache(cache=cache or FakeCache(status="disabled"),
                       settings=CacheConfig(**settings), version="1.2.3")


def catalog(fake: FakeEngine, handle: str = "cities", *, kept_in: EngineCache | None = None,
            **config: Any) -> Catalog:
    """One handle over ``fake``, behind ``kept_in`` as the container wires it."""
    settings = index(**config)
    engine = (kept_in or kept()).around(fake, handle, settings)
    return Catalog({handle: IndexEntry(handle, settings, engine)})


def engine_of(entries: Catalog, handle: str = "cities") -> CachedEngine:
    engine = entries[handle].engine
    assert isinstance(engine, CachedEngine)
    return engine


def body(answer: Any) -> bytes:
    """An answer as the HTTP layer sends it."""
    return msgspec.json.encode(answer)


# -- keys ----------------------------------------------------------------------------------


def keys_of(*requests: SearchRequest, **config: Any) -> list[str]:
    """The cache key each request is stored under (one fresh cache per request)."""
    found = []
    for request in requests:
        cache = FakeCache()
        run(Search(catalog=catalog(EchoEngine(), kept_in=kept(cache), **config))(request))
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
    search = Search(catalog=catalog(engine, kept_in=kept(cache)))
    one = run(search(by_pop))
    two = run(search(by_name))
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
    before = Search(catalog=catalog(engine, kept_in=kept(cache)))
    run(before(request))
    run(before(request))
    assert len(engine.queries) == 1  # a hit while the config stands
    changed_fields = {**FIELDS, "name": FieldConfig(weight=5)}
    for change in ({"fields": changed_fields}, {"exact_totals": False},
                   {"cache": IndexCacheConfig(search_ttl=30)}, {"max_result_window": 500}):
        calls = len(engine.queries)
        after = Search(catalog=catalog(engine, kept_in=kept(cache), **change))
        run(after(request))
        assert len(engine.queries) == calls + 1, change
    assert len(cache.entries) == 5


def test_a_new_searchport_version_never_serves_old_entries() -> None:
    cache, engine = FakeCache(), EchoEngine()
    request = SearchRequest(handle="cities")
    for version in ("1.0.0", "1.0.1"):
        shared = EngineCache(cache=cache, version=version)
        run(Search(catalog=catalog(engine, kept_in=shared))(request))
    assert len(engine.queries) == 2 and len(cache.entries) == 2


def test_keys_hold_no_config_value_and_the_prefix_is_configurable() -> None:
    cache = FakeCache()
    search = Search(catalog=catalog(EchoEngine(), kept_in=kept(cache, prefix="team-a"),
                                    engine="elasticsearch", **SECRETS))
    run(search(SearchRequest(handle="cities", q="hunter2")))
    (key,) = cache.entries
    assert key.startswith(f"team-a:{FORMAT}:search:cities:")
    for secret in [*SECRETS.values(), "hunter2", "paris"]:
        assert secret not in key


def search_key(query: SearchQuery, **config: Any) -> str:
    """The cache key ``query`` is stored under, sent to the engine behind a fresh cache."""
    cache = FakeCache()
    run(kept(cache).around(EchoEngine(), "places", index(**config)).search(query))
    (key,) = cache.entries
    return key


def embedded(text: str, vector: tuple[float, ...], **query: Any) -> SearchQuery:
    """A hybrid search of ``text`` by ``vector``."""
    return SearchQuery(**{"text": text, "semantic": 0.5, "vector": vector, **query})


def test_a_hybrid_search_is_keyed_by_its_vector_its_text_and_its_page() -> None:
    key = search_key(embedded("port city", (0.6, 0.8)))
    assert search_key(embedded("port city", (0.6, 0.8))) == key
    assert search_key(embedded("port city", (0.8, 0.6))) != key
    assert search_key(embedded("port cities", (0.6, 0.8))) != key
    assert search_key(embedded("port city", (0.6, 0.8), offset=20)) != key
    assert search_key(embedded("port city", (0.6, 0.8), semantic=0.2)) != key
    # the same words searched by words alone
    assert search_key(SearchQuery(text="port city")) != key


def test_another_embedder_config_never_reuses_keys() -> None:
    query = embedded("port city", (0.6, 0.8))
    keys = {search_key(query, semantic=semantic) for semantic in (
        SemanticConfig(fields=["name"]),
        SemanticConfig(fields=["name", "country"]),
        SemanticConfig(embedder="openai", url="https://a.example/v1", model="m1",
                       fields=["name"]),
        SemanticConfig(embedder="openai", url="https://a.example/v1", model="m2",
                       fields=["name"]),
        SemanticConfig(embedder="openai", url="https://b.example/v1", model="m1",
                       fields=["name"]),
    )}
    assert len(keys) == 5


def test_an_embedded_vector_reaches_the_engine_whole() -> None:
    engine = EchoEngine()
    query = embedded("port city", (0.6, 0.8))
    run(kept(FakeCache()).around(engine, "places", index()).search(query))
    assert engine.queries == [query]


def test_same_request_on_two_handles_makes_two_entries() -> None:
    cache, engine = FakeCache(), EchoEngine()
    shared = kept(cache)
    entries = {h: IndexEntry(h, index(), shared.around(engine, h, index()))
               for h in ("cities", "towns")}
    search = Search(catalog=Catalog(entries))
    run(search(SearchRequest(handle="cities")))
    run(search(SearchRequest(handle="towns")))
    assert len(engine.queries) == 2 and len(cache.entries) == 2


def test_an_alias_and_its_field_share_the_engines_answer_each_named_as_asked() -> None:
    cache, engine = FakeCache(), EchoEngine()
    facets = FacetSearch(catalog=catalog(engine, kept_in=kept(cache)))
    by_alias = run(facets(FacetSearchRequest(handle="cities", field="region")))
    by_real = run(facets(FacetSearchRequest(handle="cities", field="continent")))
    assert (by_alias.field, by_real.field) == ("region", "continent")
    assert by_alias.values == by_real.values
    run(facets(FacetSearchRequest(handle="cities", field="region", max_values=20)))
    assert len(engine.queries) == 1  # the same question each time (20 is the default)


def test_autocomplete_answers_under_the_facet_names_sent() -> None:
    cache, engine = FakeCache(), EchoEngine()
    suggest = Autocomplete(catalog=catalog(engine, kept_in=kept(cache)))
    one = run(suggest(AutocompleteRequest(handle="cities", q="pa", facets="region")))
    two = run(suggest(AutocompleteRequest(handle="cities", q="pa", facets="continent")))
    assert set(json.loads(body(one))["facets"]) == {"region"}
    assert set(json.loads(body(two))["facets"]) == {"continent"}
    again = run(suggest(AutocompleteRequest(handle="cities", q="pa", facets="region",
                                            per_page=5)))
    assert body(again) == body(one)
    assert len(engine.queries) == 2 and len(cache.entries) == 2  # one search, one facet


# -- what is stored, for how long ----------------------------------------------------------


def test_ttls_per_kind_from_the_global_settings() -> None:
    cache, engine = FakeCache(), EchoEngine()
    cat = catalog(engine, kept_in=kept(cache, search_ttl=45, mapping_ttl=900))
    run(Search(catalog=cat)(SearchRequest(handle="cities")))
    run(FacetSearch(catalog=cat)(FacetSearchRequest(handle="cities", field="country")))
    run(Autocomplete(catalog=cat)(AutocompleteRequest(handle="cities", q="pa", facets="region")))
    run(GetMapping(catalog=cat)(GetMappingRequest(handle="cities")))
    run(GetDocument(catalog=cat)(GetDocumentRequest(handle="cities", id="7")))
    by_kind = {key.split(":")[2]: ttl for key, ttl in cache.ttls.items()}
    # documents are not stored unless the index says so
    assert by_kind == {"search": 45, "facets": 45, "mapping": 900}


def test_ttls_per_index_override_the_global_ones() -> None:
    cache, engine = FakeCache(), EchoEngine()
    own = IndexCacheConfig(search_ttl=5, mapping_ttl=10, documents=True)
    cat = Catalog({"cities": IndexEntry("cities", index(cache=own), kept(cache).around(
        engine, "cities", index(cache=own)))})
    run(Search(catalog=cat)(SearchRequest(handle="cities")))
    run(GetMapping(catalog=cat)(GetMappingRequest(handle="cities")))
    run(GetDocument(catalog=cat)(GetDocumentRequest(handle="cities", id="7")))
    by_kind = {key.split(":")[2]: ttl for key, ttl in cache.ttls.items()}
    assert by_kind == {"search": 5, "mapping": 10, "document": 5}


def own_ttls(engine: FakeEngine, cache: FakeCache, own: IndexCacheConfig) -> Catalog:
    """One handle whose ``cache`` section is ``own``, behind ``cache``."""
    settings = index(cache=own)
    return Catalog({"cities": IndexEntry("cities", settings,
                                         kept(cache).around(engine, "cities", settings))})


def test_documents_are_served_from_the_cache_only_when_configured() -> None:
    for documents, engine_calls in ((False, 2), (True, 1)):
        cache, engine = FakeCache(), EchoEngine()
        get = GetDocument(catalog=own_ttls(engine, cache, IndexCacheConfig(documents=documents)))
        first = run(get(GetDocumentRequest(handle="cities", id="7")))
        second = run(get(GetDocumentRequest(handle="cities", id="7")))
        assert len(engine.queries) == engine_calls
        assert (first == second) is documents


def test_a_zero_ttl_turns_caching_off_for_that_index() -> None:
    cache, engine = FakeCache(), EchoEngine()
    search = Search(catalog=own_ttls(engine, cache, IndexCacheConfig(search_ttl=0)))
    run(search(SearchRequest(handle="cities")))
    run(search(SearchRequest(handle="cities")))
    assert len(engine.queries) == 2 and cache.entries == {}


def test_a_hit_is_the_stored_answer_without_calling_the_engine() -> None:
    cache, engine = FakeCache(), EchoEngine()
    search = Search(catalog=catalog(engine, kept_in=kept(cache)))
    first = run(search(SearchRequest(handle="cities", q="x")))
    (key,) = cache.entries
    stored = msgspec.msgpack.decode(cache.entries[key], type=EngineResult)
    assert stored.total == first.total_hits > 0
    cache.entries[key] = msgspec.msgpack.encode(EngineResult(hits=[], total=7))
    assert run(search(SearchRequest(handle="cities", q="x"))).total_hits == 7
    assert len(engine.queries) == 1


def test_errors_are_never_stored() -> None:
    cache = FakeCache()
    engine = FailingEngine(InvalidQuery("the engine rejected the query"))
    search = Search(catalog=catalog(engine, kept_in=kept(cache)))
    for _ in range(2):
        with pytest.raises(InvalidQuery):
            run(search(SearchRequest(handle="cities")))
    assert len(engine.queries) == 2 and cache.entries == {}
    missing = FakeEngine()
    get = GetDocument(catalog=own_ttls(missing, cache, IndexCacheConfig(documents=True)))
    with pytest.raises(DocumentNotFound):
        run(get(GetDocumentRequest(handle="cities", id="nope")))
    assert cache.entries == {}


# -- single flight -------------------------------------------------------------------------


def test_concurrent_identical_misses_make_one_engine_call() -> None:
    cache, engine = FakeCache(), EchoEngine(delay=0.05)
    shared = kept(cache)
    search = Search(catalog=catalog(engine, kept_in=shared))

    async def burst() -> list[bytes]:
        answers = await asyncio.gather(
            *(search(SearchRequest(handle="cities", q="paris")) for _ in range(25))
        )
        return [body(a) for a in answers]

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


def flights(cached: bool) -> EngineCache:
    """An engine cache over a cache, or the one that runs with the cache ``none``."""
    return kept(FakeCache()) if cached else kept()


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
    search = Search(catalog=catalog(engine, kept_in=flights(cached)))

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
def test_a_caller_that_goes_away_does_not_fail_the_others(cached: bool) -> None:
    """The request that asked first asks the engine itself: when it goes away, its question
    goes with it, and the requests that joined it ask again, once, together."""
    engine = EchoEngine(delay=0.5)  # still in flight when the first caller leaves, even under load
    shared = flights(cached)
    search = Search(catalog=catalog(engine, kept_in=shared))

    async def scenario() -> list[bytes]:
        first = asyncio.ensure_future(search(SearchRequest(handle="cities")))
        await asyncio.sleep(0.01)
        others = [asyncio.ensure_future(search(SearchRequest(handle="cities")))
                  for _ in range(3)]
        await asyncio.sleep(0.01)
        first.cancel()
        bodies = [body(a) for a in await asyncio.gather(*others)]
        assert first.cancelled()
        return bodies

    bodies = run(scenario())
    assert len(bodies) == 3 and len(set(bodies)) == 1
    assert len(engine.queries) == 2
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


def answer_alone(request: SearchRequest) -> tuple[bytes, list[bytes]] | None:
    """The answer with no cache at all, and the questions the engines were asked (``None``
    when the request is refused)."""
    engines = {h: EchoEngine(name=h) for h in CONFIGS}
    cat = Catalog({h: IndexEntry(h, c, engines[h]) for h, c in CONFIGS.items()})
    try:
        answer = body(run(Search(catalog=cat)(request)))
    except SearchportError:
        return None
    return answer, [body([h, q]) for h, e in engines.items() for q in e.queries]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=request_pairs())
def test_a_cached_answer_is_the_answer_and_the_engine_is_asked_each_new_question(
    pair: tuple[SearchRequest, SearchRequest],
) -> None:
    first, second = pair
    alone_first, alone_second = answer_alone(first), answer_alone(second)
    assume(alone_first is not None and alone_second is not None)
    engines = {h: EchoEngine(name=h) for h in CONFIGS}  # hits name their handle
    shared = kept(FakeCache())
    cat = Catalog({h: IndexEntry(h, c, shared.around(engines[h], h, c))
                   for h, c in CONFIGS.items()})
    search = Search(catalog=cat)
    assert body(run(search(first))) == alone_first[0]
    assert body(run(search(second))) == alone_second[0]  # never the first request's answer
    calls = sum(len(e.queries) for e in engines.values())
    if alone_first[1] == alone_second[1]:
        event("the same question: one engine call")
        assert calls == 1  # normalisation made them one question: the second was a hit
    else:
        event("different questions: two engine calls")
        assert calls == 2


def test_the_echo_engine_tells_requests_apart() -> None:
    # the property above is only as strong as the fake: different queries, different answers
    one = answer_alone(SearchRequest(handle="cities", sort='{"pop":"asc","name":"asc"}'))
    two = answer_alone(SearchRequest(handle="cities", sort='{"name":"asc","pop":"asc"}'))
    assert one is not None and two is not None and one != two
    assert msgspec.json.decode(one[0])["hits"][0]["query"] != msgspec.json.decode(two[0])[
        "hits"][0]["query"]


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
    shared = kept(cache)
    cat = Catalog({h: IndexEntry(h, c, shared.around(engines[h], h, c) if cache else engines[h])
                   for h, c in CONFIGS.items()})
    try:
        return body(run(use_case(catalog=cat)(request)))
    except SearchportError:
        return None


def _questions(engines: dict[str, EchoEngine]) -> set[bytes]:
    return {body([h, q]) for h, e in engines.items() for q in e.queries}


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_facet_and_autocomplete_answers_from_the_cache_are_the_answers(
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
    asked_one, asked_two = _engines(), _engines()
    alone_one, alone_two = (_answer(kind, one, None, asked_one),
                            _answer(kind, two, None, asked_two))
    assume(alone_one is not None and alone_two is not None)
    cache, engines = FakeCache(), _engines()
    assert _answer(kind, one, cache, engines) == alone_one
    calls = sum(len(e.queries) for e in engines.values())
    assert _answer(kind, two, cache, engines) == alone_two  # never the first one's answer
    again = sum(len(e.queries) for e in engines.values()) - calls
    if _questions(asked_two) <= _questions(asked_one):
        event("questions asked before: hits")
        assert again == 0
    else:
        event("a new question: the engine asked")
        assert again > 0


def test_strict_and_inclusive_range_bounds_make_different_entries() -> None:
    engine = engine_of(catalog(EchoEngine(), kept_in=kept(FakeCache())))
    inclusive = SearchQuery(filters=(RangeFilter(field="population", min=10, max=20),))
    strict_low = SearchQuery(filters=(RangeFilter(field="population", min=10, max=20,
                                                  min_exclusive=True),))
    strict_high = SearchQuery(filters=(RangeFilter(field="population", min=10, max=20,
                                                   max_exclusive=True),))
    keys = {engine.key("search", q) for q in (inclusive, strict_low, strict_high)}
    assert len(keys) == 3


def test_groups_of_filters_make_different_entries() -> None:
    """AnyOf, Negated and the filters they hold are all in the key: the same filters as a
    group, negated, or ANDed never share an entry."""
    engine = engine_of(catalog(EchoEngine(), kept_in=kept(FakeCache())))
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
    keys = {engine.key("search", q) for q in queries}
    assert len(keys) == len(queries)


def test_distance_rankings_make_different_entries() -> None:
    """``geo_sort`` is in the key: no ranking, another centre or another field never share
    an entry, with everything else the same."""
    engine = engine_of(catalog(EchoEngine(), kept_in=kept(FakeCache())))
    queries = [
        SearchQuery(text="port"),
        SearchQuery(text="port", geo_sort=GeoSort(field="location", lat=1, lon=2)),
        SearchQuery(text="port", geo_sort=GeoSort(field="location", lat=2, lon=1)),
        SearchQuery(text="port", geo_sort=GeoSort(field="location", lat=1, lon=2.5)),
        SearchQuery(text="port", geo_sort=GeoSort(field="other", lat=1, lon=2)),
    ]
    keys = {engine.key("search", q) for q in queries}
    assert len(keys) == len(queries)


# -- no two requests share an answer's objects ----------------------------------------------


@pytest.mark.parametrize("cached", [True, False])
def test_requests_that_share_an_engine_call_each_get_their_own_answer(cached: bool) -> None:
    """The answer of one engine call is shaped by every request that joined it: each gets
    objects of its own, so that none can see what another did with its answer."""
    engine = EchoEngine(delay=0.02)
    entries = catalog(engine, kept_in=flights(cached))
    query = SearchQuery(text="paris")

    async def together() -> list[EngineResult]:
        return list(await asyncio.gather(*(entries["cities"].engine.search(query)
                                           for _ in range(3))))

    answers = run(together())
    assert len(engine.queries) == 1
    assert answers[0] == answers[1] == answers[2]
    assert len({id(a) for a in answers}) == 3
    assert len({id(a.hits[0].source) for a in answers}) == 3
