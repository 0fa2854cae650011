"""The composition root: every adapter, use case and guard is assembled here, and only
here. The HTTP app and the command line take what they need from a ``Container``; nothing
but the ASGI factory, the command line and the tests imports this module."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from dependency_injector import containers, providers

from searchport import __version__
from searchport.adapters.analytics.none import NullAnalyticsStore
from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.adapters.analytics.store import QueueOptions
from searchport.adapters.cache.engine_cache import EngineCache
from searchport.adapters.cache.memory import MemoryCache
from searchport.adapters.cache.none import NoCache
from searchport.adapters.cache.two_tier import TwoTierCache
from searchport.adapters.engines import ADAPTERS
from searchport.adapters.network.address import EngineAddress
from searchport.adapters.network.pools import EnginePools
from searchport.adapters.network.resilience import CallPolicy
from searchport.adapters.observed import EngineObserver, ObservedCache, TimedEngine
from searchport.adapters.rate_limit.memory import MemoryRateLimitStore
from searchport.adapters.resources import EngineResources
from searchport.adapters.semantic import create as create_embedder
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import CacheKind, Config, ConfigError, IndexConfig
from searchport.domain.engine_health import EngineHealth
from searchport.domain.fields import FieldMap
from searchport.domain.rules.rule_sets import rule_sets
from searchport.domain.rules.ruleset import RuleSet
from searchport.domain.rules.search import FacetValueCache
from searchport.domain.semantic import QueryMeanings
from searchport.domain.suggestions.refresher import SuggestionsRefresher
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.analytics import (
    AnalyticsReading,
    AnalyticsStatus,
    AverageClickPosition,
    ClickPositions,
    ClickThroughRate,
    ConversionRate,
    NoClickRate,
    NoResultsRate,
    SearchesCount,
    SearchesNoClicks,
    SearchesNoResults,
    SendEvents,
    TopFilterAttributes,
    TopFilterForAttribute,
    TopFiltersNoResults,
    TopHits,
    TopSearches,
    UsersCount,
)
from searchport.domain.usecases.autocomplete import Autocomplete
from searchport.domain.usecases.build_suggestions import BuildSuggestions
from searchport.domain.usecases.clear_cache import ClearCache
from searchport.domain.usecases.describe_fields import DescribeFields
from searchport.domain.usecases.facet_search import FacetSearch
from searchport.domain.usecases.get_document import GetDocument
from searchport.domain.usecases.get_mapping import GetMapping
from searchport.domain.usecases.get_rule import GetRule
from searchport.domain.usecases.health import Health
from searchport.domain.usecases.list_indexes import ListIndexes
from searchport.domain.usecases.raw_query import RawQuery
from searchport.domain.usecases.search import Search
from searchport.domain.usecases.search_rules import SearchRules
from searchport.domain.usecases.similar import SimilarDocuments
from searchport.entrypoints.algolia.suggestions import SuggestionSearch
from searchport.entrypoints.controllers.ui_routes import UI_PATH
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import bearer_auth
from searchport.entrypoints.http.limits import query_length_guard
from searchport.entrypoints.http.observability import Metrics
from searchport.entrypoints.http.rate_limit import rate_limit
from searchport.entrypoints.http.response_store import ResponseStore
from searchport.entrypoints.http.timing import CacheLookups, EngineCalls
from searchport.entrypoints.keys.keyring import Keyring
from searchport.ports.analytics import AnalyticsStore
from searchport.ports.cache import CachePort
from searchport.ports.embedder import EmbedderPort
from searchport.ports.engine import SearchEnginePort
from searchport.ports.rate_limit import RateLimitStore

logger = logging.getLogger("searchport")


def build_engines(config: Config, resources: EngineResources) -> dict[str, SearchEnginePort]:
    """The adapter of each primary handle (a replica shares its primary's), by handle."""
    return {handle: make_engine(handle, index, resources)
            for handle, index in config.indexes.items() if index.replica_of is None}


def make_engine(handle: str, index: IndexConfig, resources: EngineResources) -> SearchEnginePort:
    return ADAPTERS[index.engine](handle, index, resources)


def time_engines(engines: Mapping[str, SearchEnginePort], observer: EngineObserver
                 ) -> dict[str, SearchEnginePort]:
    """Each engine wrapped so that the time of its calls is reported to ``observer``."""
    return {handle: TimedEngine(engine, handle, observer) for handle, engine in engines.items()}


def cache_engines(config: Config, engines: Mapping[str, SearchEnginePort],
                  cache: EngineCache) -> dict[str, SearchEnginePort]:
    """Each engine behind ``cache``, for its handle's TTLs."""
    return {handle: cache.around(engine, handle, config.indexes[handle])
            for handle, engine in engines.items()}


def build_catalog(config: Config, engines: Mapping[str, SearchEnginePort],
                  rules: dict[str, RuleSet],
                  meanings: Mapping[str, QueryMeanings] | None = None) -> Catalog:
    """One entry per handle; a replica shares its primary's engine, rules, facet values and
    query vectors (``meanings``: those of the handles searchport embeds the queries of)."""
    meanings = meanings or {}
    primaries = {
        handle: IndexEntry(handle, config.indexes[handle], engine, rules=rules.get(handle),
                           facet_values=_facet_values(config, handle, rules),
                           meanings=meanings.get(handle))
        for handle, engine in engines.items()
    }
    entries: dict[str, IndexEntry] = {}
    for handle, index in config.indexes.items():
        primary = primaries[index.replica_of or handle]
        entries[handle] = primary if index.replica_of is None else IndexEntry(
            handle, index, primary.engine, rules=primary.rules,
            facet_values=primary.facet_values, meanings=primary.meanings)
    return Catalog(entries)


def build_meanings(config: Config, resources: EngineResources) -> dict[str, QueryMeanings]:
    """The query vectors of each primary handle whose queries searchport embeds (a replica
    shares its primary's), by handle."""
    found = {handle: query_meanings(handle, index, resources)
             for handle, index in config.indexes.items() if index.replica_of is None}
    return {handle: meanings for handle, meanings in found.items() if meanings is not None}


def query_meanings(handle: str, index: IndexConfig, resources: EngineResources
                   ) -> QueryMeanings | None:
    """The handle's query vectors (None: it does not search by meaning, or its engine
    embeds the query itself): its embedder, cached and bounded by ``semantic.timeout``."""
    embedder: EmbedderPort | None = create_embedder(handle, index, resources)
    if embedder is None or index.semantic is None:
        return None
    return QueryMeanings(embedder, timeout=index.semantic.timeout, handle=handle)


def _facet_values(config: Config, handle: str,
                  rules: dict[str, RuleSet]) -> FacetValueCache | None:
    """The facet values the handle's ``{facet:...}`` placeholders may take, read again
    after the handle's mapping TTL."""
    found = rules.get(handle)
    if found is None or not found.facet_attributes:
        return None
    index = config.indexes[handle]
    ttl = index.cache.mapping_ttl or config.cache.mapping_ttl
    return FacetValueCache(found.facet_attributes, FieldMap(index.fields).real, ttl=ttl,
                           clock=time.monotonic)


def build_engine_pools(config: Config, metrics: Metrics,
                       clock: Callable[[], float] = time.monotonic) -> EnginePools:
    """The engine clients' pools, with ``resilience``'s retries and circuit breakers."""
    settings = config.resilience
    policy = CallPolicy(retries=settings.retries, backoff=settings.retry_backoff,
                        failures=settings.circuit_breaker.failures,
                        cool_down=settings.circuit_breaker.cool_down)
    return EnginePools(policy=policy, on_circuit=metrics.circuit, clock=clock)


def build_engine_health(config: Config, catalog: Catalog, pools: EnginePools) -> EngineHealth:
    """/health's view of the engines: pings, and each server engine's circuit by handle."""
    origins = {handle: EngineAddress(index.host).origin
               for handle, index in config.indexes.items() if index.host}

    def circuit_open(handle: str) -> bool:
        origin = origins.get(handle)
        return origin is not None and pools.circuit_open(origin)

    return EngineHealth(catalog=catalog, interval=config.resilience.health_interval,
                        circuit_open=circuit_open)


def build_rate_limit_store(config: Config) -> RateLimitStore:
    """Where ``rateLimit`` counts live (``store``: auto, memory, redis)."""
    settings = config.rate_limit
    wanted = settings.store
    if wanted == "auto":
        wanted = "redis" if config.cache.backend == "redis" else "memory"
    if wanted == "memory" or not settings.enabled:
        return MemoryRateLimitStore()
    if not config.cache.url:
        raise ConfigError("rateLimit.store: redis needs cache.url (or REDIS_URL)")
    # imported when used, as the engines are: redis-py costs startup time and memory
    from searchport.adapters.rate_limit.redis import RedisRateLimitStore

    return RedisRateLimitStore(
        config.cache.url, prefix=config.cache.prefix, timeout=config.cache.timeout
    )


def build_analytics_store(config: Config, base_dir: Path, metrics: Metrics) -> AnalyticsStore:
    """``analytics.backend``: sqlite (``path``, beside the config file by default),
    postgres (``url``) or none."""
    settings = config.analytics
    if settings.backend == "none":
        return NullAnalyticsStore()
    queue = QueueOptions(capacity=settings.buffer_size, interval=settings.flush_interval,
                         on_drop=metrics.analytics_dropped)
    if settings.backend == "sqlite":
        path = Path(settings.path or "analytics.sqlite3")
        return SqliteAnalyticsStore(path if path.is_absolute() else base_dir / path,
                                    timeout=settings.timeout, queue=queue)
    try:  # the postgres extra: imported when used, as the engines are
        from searchport.adapters.analytics.postgres import PostgresAnalyticsStore
    except ImportError:
        raise ConfigError("analytics.backend: postgres needs psycopg: pip install "
                          "'searchport[postgres]'") from None
    return PostgresAnalyticsStore(settings.url or "", timeout=settings.timeout, queue=queue)


def build_recorder(config: Config, store: AnalyticsStore) -> AnalyticsRecorder:
    """What the searches and events hand to the analytics store (off with backend none)."""
    return AnalyticsRecorder(store=store, retention_days=config.analytics.retention_days,
                             enabled=config.analytics.backend != "none")


# the Analytics API (v2): route -> its use case, each over the catalog and the store
ANALYTICS_REPORTS: dict[str, type[AnalyticsReading[Any]]] = {
    "/2/searches": TopSearches,
    "/2/searches/count": SearchesCount,
    "/2/searches/noResults": SearchesNoResults,
    "/2/searches/noClicks": SearchesNoClicks,
    "/2/searches/noResultRate": NoResultsRate,
    "/2/searches/noClickRate": NoClickRate,
    "/2/clicks/clickThroughRate": ClickThroughRate,
    "/2/clicks/averageClickPosition": AverageClickPosition,
    "/2/clicks/positions": ClickPositions,
    "/2/conversions/conversionRate": ConversionRate,
    "/2/hits": TopHits,
    "/2/users/count": UsersCount,
    "/2/filters": TopFilterAttributes,
    "/2/filters/noResults": TopFiltersNoResults,
    "/2/filters/{attribute:str}": TopFilterForAttribute,
    "/2/status": AnalyticsStatus,
}


def build_reports(catalog: Catalog, store: AnalyticsStore) -> dict[str, Any]:
    return {path: report(catalog=catalog, store=store)
            for path, report in ANALYTICS_REPORTS.items()}


def build_suggestions(config: Config, engines: Mapping[str, SearchEnginePort],
                      sources: Catalog, store: AnalyticsStore) -> list[SuggestionsRefresher]:
    """A background rebuild for each querySuggestions handle (``refresh`` seconds apart).
    Its searches of the source (``sources``: the handles' engines without the cache, which
    a rebuild would fill with every popular query) stay out of the query log."""
    from searchport.adapters.suggestions import QuerySuggestionsEngine

    build = BuildSuggestions(catalog=sources, store=store,
                             search=SuggestionSearch(AlgoliaSearch(catalog=sources)),
                             clock=time.time)
    return [SuggestionsRefresher(handle=handle, index=engine, build=build,
                                 interval=config.indexes[handle].refresh, clock=time.time)
            for handle, engine in engines.items() if isinstance(engine, QuerySuggestionsEngine)]


def build_metrics(config: Config) -> Metrics:
    return Metrics(frozenset(config.indexes))


def build_process_tier(config: Config) -> MemoryCache | None:
    """The cache's tier in this process: the memory backend itself, or the tier in front of
    Redis (unless ``localTtl`` is 0); None without one."""
    settings = config.cache
    if settings.backend == "none" or (settings.backend == "redis" and settings.local_ttl == 0):
        return None
    return MemoryCache(max_entries=settings.max_entries, max_bytes=settings.max_bytes)


def build_cache(config: Config, tier: MemoryCache | None) -> CachePort:
    """``cache.backend``: none, memory (``tier``), or redis (behind ``tier`` when there is
    one)."""
    settings = config.cache
    if settings.backend == "none":
        return NoCache()
    if settings.backend == "memory" and tier is not None:
        return tier
    if not settings.url:
        raise ConfigError("cache.url: required for backend redis (or set REDIS_URL)")
    from searchport.adapters.cache.redis import RedisCache

    try:
        redis = RedisCache(settings.url, prefix=settings.prefix, timeout=settings.timeout)
    except ValueError as exc:  # redis-py's word on a malformed URL (it names no credential)
        raise ConfigError(f"cache.url: {exc}") from None
    if tier is None:
        return redis
    return TwoTierCache(tier, redis, local_ttl=settings.local_ttl)


def build_response_store(config: Config, tier: MemoryCache | None,
                         metrics: Metrics) -> ResponseStore | None:
    """Where Litestar's response cache keeps whole responses: beside the cache's tier in this
    process, as long as it keeps its entries (``localTtl`` in front of Redis), for each
    route's and handle's TTL; None, without a tier, turns that cache off."""
    if tier is None:
        return None
    cap = math.inf if config.cache.backend == "memory" else config.cache.local_ttl

    def ttl(kind: str, handle: str) -> float:  # kind: the route's, a CacheKind
        index = config.indexes.get(handle)
        return 0.0 if index is None else config.cache.ttl(cast(CacheKind, kind), index.cache)

    return ResponseStore(tier, ttl, cap=cap, on_hit=metrics.cache_lookup)


def build_guards(config: Config, keyring: Keyring, store: RateLimitStore) -> list[Any]:
    """The app's middleware, in order: the rate limit (429), the key (401), the query
    string's length (414). The search page and its files need no token: the page asks for
    one itself."""
    open_paths = ("/", UI_PATH, *(("/metrics",) if config.metrics.public else ()))
    trust = config.rate_limit.trust_forwarded_for
    return [rate_limit(config.rate_limit, store, keyring),
            bearer_auth(keyring, open_paths, trust),
            query_length_guard(config.limits.max_query_bytes)]


class Lifespan:
    """What the service starts before its first request, and stops after its last."""

    def __init__(self, *, catalog: Catalog, cache: CachePort, recorder: AnalyticsRecorder,
                 refreshers: list[SuggestionsRefresher], engine_health: EngineHealth,
                 pools: EnginePools, rate_limit_store: RateLimitStore) -> None:
        self._catalog = catalog
        self._cache = cache
        self._recorder = recorder
        self._refreshers = refreshers
        self._engine_health = engine_health
        self._pools = pools
        self._rate_limit_store = rate_limit_store

    async def start(self) -> None:
        for engine in self._catalog.engines():
            await engine.start()
        for embedder in self._catalog.embedders():  # the builtin model loads here
            await embedder.start()
        logger.info("cache: %s", await self._cache.probe())
        await self._recorder.start()
        for refresher in self._refreshers:
            refresher.start()

    async def stop(self) -> None:
        for refresher in self._refreshers:
            await refresher.close()
        await self._engine_health.close()
        for engine in self._catalog.engines():
            await engine.close()
        for embedder in self._catalog.embedders():
            await embedder.close()
        await self._pools.aclose()
        await self._recorder.close()  # what the query log's queue holds goes to the store
        await self._cache.close()
        await self._rate_limit_store.close()
        logger.info("searchport stopped: engine, cache and rate-limit connections closed")


class Container(containers.DeclarativeContainer):
    config = providers.Dependency(instance_of=Config)
    base_dir = providers.Dependency(instance_of=Path)
    clock = providers.Object(time.monotonic)  # the circuit breakers' (tests pass their own)
    metrics = providers.Singleton(build_metrics, config=config)

    # the caches: searchport's own, and the whole responses Litestar keeps beside its tier
    process_tier = providers.Singleton(build_process_tier, config=config)
    cache_backend = providers.Singleton(build_cache, config=config, tier=process_tier)
    cache_lookups = providers.Singleton(CacheLookups, on_lookup=metrics.provided.cache_lookup)
    cache = providers.Singleton(ObservedCache, cache_backend, on_lookup=cache_lookups)
    engine_cache = providers.Singleton(EngineCache, cache=cache, settings=config.provided.cache,
                                       version=__version__)
    response_store = providers.Singleton(build_response_store, config=config,
                                         tier=process_tier, metrics=metrics)

    # the engines: one adapter per primary handle, timed, behind the cache, in the catalog
    engine_pools = providers.Singleton(build_engine_pools, config=config, metrics=metrics,
                                       clock=clock)
    resources = providers.Singleton(EngineResources, base_dir=base_dir, pools=engine_pools)
    engine = providers.Factory(make_engine, resources=resources)  # one handle's, unshared
    engines = providers.Singleton(build_engines, config=config, resources=resources)
    engine_calls = providers.Singleton(EngineCalls, metrics=metrics)
    timed_engines = providers.Singleton(time_engines, engines=engines, observer=engine_calls)
    cached_engines = providers.Singleton(cache_engines, config=config, engines=timed_engines,
                                         cache=engine_cache)
    rules = providers.Singleton(rule_sets, config=config)
    # the query vectors of the handles that search by meaning: each one's embedder, its
    # vectors cached (the answers are cached around the engines, keyed by the vector too)
    meanings = providers.Singleton(build_meanings, config=config, resources=resources)
    catalog = providers.Singleton(build_catalog, config=config, engines=cached_engines,
                                  rules=rules, meanings=meanings)
    engine_health = providers.Singleton(
        build_engine_health, config=config, catalog=catalog, pools=engine_pools
    )

    # who may ask what, how often
    keyring = providers.Singleton(Keyring, config)
    rate_limit_store = providers.Singleton(build_rate_limit_store, config=config)
    guards = providers.Singleton(build_guards, config=config, keyring=keyring,
                                 store=rate_limit_store)

    # the query log
    analytics_store = providers.Singleton(build_analytics_store, config=config, metrics=metrics,
                                          base_dir=base_dir)
    recorder = providers.Singleton(build_recorder, config=config, store=analytics_store)
    sources = providers.Singleton(build_catalog, config=config, engines=timed_engines,
                                  rules=rules)
    suggestions = providers.Singleton(build_suggestions, config=config, engines=engines,
                                      sources=sources, store=analytics_store)

    # the use cases
    search = providers.Singleton(Search, catalog=catalog, recorder=recorder)
    facet_search = providers.Singleton(FacetSearch, catalog=catalog)
    autocomplete = providers.Singleton(Autocomplete, catalog=catalog, recorder=recorder)
    get_document = providers.Singleton(GetDocument, catalog=catalog)
    similar_documents = providers.Singleton(SimilarDocuments, catalog=catalog)
    get_mapping = providers.Singleton(GetMapping, catalog=catalog)
    raw_query = providers.Singleton(RawQuery, catalog=catalog,
                                    max_body_bytes=config.provided.limits.max_body_bytes)
    health = providers.Singleton(Health, cache=cache, version=__version__,
                                 engines=engine_health)
    list_indexes = providers.Singleton(ListIndexes, catalog=catalog)
    describe_fields = providers.Singleton(DescribeFields, catalog=catalog)
    clear_cache = providers.Singleton(ClearCache, cache=cache)
    algolia_search = providers.Singleton(AlgoliaSearch, catalog=catalog, recorder=recorder)
    search_rules = providers.Singleton(SearchRules, catalog=catalog)
    get_rule = providers.Singleton(GetRule, catalog=catalog)
    send_events = providers.Singleton(SendEvents, catalog=catalog, recorder=recorder)
    analytics_reports = providers.Singleton(build_reports, catalog=catalog,
                                            store=analytics_store)
    # what the routes call: each provider itself, asked on every request, so that an
    # override in the container holds at once
    use_cases = providers.Singleton(
        UseCases, search=search.provider, facet_search=facet_search.provider,
        autocomplete=autocomplete.provider, get_document=get_document.provider,
        get_mapping=get_mapping.provider, raw_query=raw_query.provider, health=health.provider,
        list_indexes=list_indexes.provider, describe_fields=describe_fields.provider,
        clear_cache=clear_cache.provider, algolia_search=algolia_search.provider,
        search_rules=search_rules.provider, get_rule=get_rule.provider,
        metrics=metrics.provider, send_events=send_events.provider,
        analytics_reports=analytics_reports.provider,
        similar_documents=similar_documents.provider,
    )

    lifespan = providers.Singleton(
        Lifespan, catalog=catalog, cache=cache, recorder=recorder, refreshers=suggestions,
        engine_health=engine_health, pools=engine_pools,
        rate_limit_store=rate_limit_store,
    )


def create_container(config: Config, base_dir: Path,
                     clock: Callable[[], float] | None = None) -> Container:
    container = Container(config=config, base_dir=base_dir)
    if clock is not None:
        container.clock.override(providers.Object(clock))
    container.catalog()  # fail fast on engine configuration errors
    container.cache()
    container.rate_limit_store()
    container.recorder()
    return container
