"""The composition root: every adapter and use case is assembled here, and only here."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from searchport import __version__
from searchport.adapters.analytics.none import NullAnalyticsStore
from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.adapters.analytics.store import QueueOptions
from searchport.adapters.cache.memory import MemoryCache
from searchport.adapters.cache.two_tier import TwoTierCache
from searchport.adapters.network.address import EngineAddress
from searchport.adapters.network.pools import EnginePools
from searchport.adapters.network.resilience import CallPolicy
from searchport.adapters.rate_limit.memory import MemoryRateLimitStore
from searchport.adapters.resources import EngineResources
from searchport.domain.analytics.reading import AnalyticsReading
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import Config, ConfigError, IndexConfig
from searchport.domain.engine_health import EngineHealth
from searchport.domain.engines import BY_NAME
from searchport.domain.fields import FieldMap
from searchport.domain.response_cache import NoCache, ResponseCache
from searchport.domain.rules.rule_sets import rule_sets
from searchport.domain.rules.ruleset import RuleSet
from searchport.domain.rules.search import FacetValueCache
from searchport.domain.suggestions.refresher import SuggestionsRefresher
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.analytics_status import AnalyticsStatus
from searchport.domain.usecases.autocomplete import Autocomplete
from searchport.domain.usecases.average_click_position import AverageClickPosition
from searchport.domain.usecases.build_suggestions import BuildSuggestions
from searchport.domain.usecases.clear_cache import ClearCache
from searchport.domain.usecases.click_positions import ClickPositions
from searchport.domain.usecases.click_through_rate import ClickThroughRate
from searchport.domain.usecases.conversion_rate import ConversionRate
from searchport.domain.usecases.describe_fields import DescribeFields
from searchport.domain.usecases.facet_search import FacetSearch
from searchport.domain.usecases.get_document import GetDocument
from searchport.domain.usecases.get_mapping import GetMapping
from searchport.domain.usecases.get_rule import GetRule
from searchport.domain.usecases.health import Health
from searchport.domain.usecases.list_indexes import ListIndexes
from searchport.domain.usecases.no_click_rate import NoClickRate
from searchport.domain.usecases.no_results_rate import NoResultsRate
from searchport.domain.usecases.raw_query import RawQuery
from searchport.domain.usecases.search import Search
from searchport.domain.usecases.search_rules import SearchRules
from searchport.domain.usecases.searches_count import SearchesCount
from searchport.domain.usecases.searches_no_clicks import SearchesNoClicks
from searchport.domain.usecases.searches_no_results import SearchesNoResults
from searchport.domain.usecases.send_events import SendEvents
from searchport.domain.usecases.top_filters import (
    TopFilterAttributes,
    TopFilterForAttribute,
    TopFiltersNoResults,
)
from searchport.domain.usecases.top_hits import TopHits
from searchport.domain.usecases.top_searches import TopSearches
from searchport.domain.usecases.users_count import UsersCount
from searchport.entrypoints.http.observability import Metrics
from searchport.entrypoints.http.timing import ObservedCache, TimedEngine
from searchport.ports.analytics import AnalyticsStore
from searchport.ports.cache import CachePort
from searchport.ports.engine import SearchEnginePort
from searchport.ports.rate_limit import RateLimitStore


def engine_factory(name: str) -> Any:
    """The adapter factory the engine table names; its module is imported only now, so a
    config without that engine never loads its client."""
    module, _, attr = BY_NAME[name].adapter.partition(":")
    return getattr(importlib.import_module(module), attr)


def make_engine(handle: str, index: IndexConfig, resources: EngineResources) -> SearchEnginePort:
    adapter: SearchEnginePort = engine_factory(index.engine)(handle, index, resources)
    return adapter


def build_catalog(config: Config, resources: EngineResources, metrics: Metrics) -> Catalog:
    """One entry per handle; a replica shares its primary's engine, rules and facet values."""
    rules = rule_sets(config)
    primaries = {
        handle: IndexEntry(
            handle, index, TimedEngine(make_engine(handle, index, resources), handle, metrics),
            rules=rules.get(handle), facet_values=_facet_values(config, handle, rules),
        )
        for handle, index in config.indexes.items() if index.replica_of is None
    }
    entries: dict[str, IndexEntry] = {}
    for handle, index in config.indexes.items():
        primary = primaries[index.replica_of or handle]
        entries[handle] = primary if index.replica_of is None else IndexEntry(
            handle, index, primary.engine, rules=primary.rules,
            facet_values=primary.facet_values)
    return Catalog(entries)


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
ANALYTICS_REPORTS: dict[str, type[AnalyticsReading]] = {
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


def build_suggestions(config: Config, catalog: Catalog, store: AnalyticsStore
                      ) -> list[SuggestionsRefresher]:
    """A background rebuild for each querySuggestions handle (``refresh`` seconds apart).
    Its searches of the source bypass the response cache (a rebuild would fill it with
    every popular query) and the query log."""
    from searchport.adapters.suggestions import QuerySuggestionsEngine

    build = BuildSuggestions(catalog=catalog, store=store, search=Search(catalog=catalog),
                             clock=time.time)
    refreshers = []
    for handle, index in config.indexes.items():
        if index.replica_of is not None:
            continue  # its primary's engine, rebuilt once for both
        engine = catalog[handle].engine
        inner = engine.inner if isinstance(engine, TimedEngine) else engine
        if isinstance(inner, QuerySuggestionsEngine):
            refreshers.append(SuggestionsRefresher(handle=handle, index=inner, build=build,
                                                   interval=index.refresh, clock=time.time))
    return refreshers


def build_metrics(config: Config) -> Metrics:
    return Metrics(frozenset(config.indexes))


def observed_cache(config: Config, metrics: Metrics) -> ObservedCache:
    """The configured cache, its lookups counted (hits and misses) per request and in total."""
    return ObservedCache(build_cache(config), metrics.cache_lookup)


def build_cache(config: Config) -> CachePort:
    """``cache.backend``: none, memory, or redis (behind a memory tier unless localTtl is 0)."""
    settings = config.cache
    if settings.backend == "none":
        return NoCache()
    memory = MemoryCache(max_entries=settings.max_entries, max_bytes=settings.max_bytes)
    if settings.backend == "memory":
        return memory
    if not settings.url:
        raise ConfigError("cache.url: required for backend redis (or set REDIS_URL)")
    from searchport.adapters.cache.redis import RedisCache

    try:
        redis = RedisCache(settings.url, prefix=settings.prefix, timeout=settings.timeout)
    except ValueError as exc:  # redis-py's word on a malformed URL (it names no credential)
        raise ConfigError(f"cache.url: {exc}") from None
    if settings.local_ttl == 0:
        return redis
    return TwoTierCache(memory, redis, local_ttl=settings.local_ttl)


class Container(containers.DeclarativeContainer):
    config = providers.Dependency(instance_of=Config)
    base_dir = providers.Dependency(instance_of=Path)

    metrics = providers.Singleton(build_metrics, config=config)
    clock = providers.Object(time.monotonic)  # the circuit breakers' (tests pass their own)
    engine_pools = providers.Singleton(build_engine_pools, config=config, metrics=metrics,
                                       clock=clock)
    resources = providers.Singleton(EngineResources, base_dir=base_dir, pools=engine_pools)
    rate_limit_store = providers.Singleton(build_rate_limit_store, config=config)
    catalog = providers.Singleton(
        build_catalog, config=config, resources=resources, metrics=metrics
    )
    cache = providers.Singleton(observed_cache, config=config, metrics=metrics)
    engine_health = providers.Singleton(
        build_engine_health, config=config, catalog=catalog, pools=engine_pools
    )
    max_body_bytes = providers.Callable(lambda c: c.limits.max_body_bytes, config)
    cache_settings = providers.Callable(lambda c: c.cache, config)
    responses = providers.Singleton(
        ResponseCache, cache=cache, settings=cache_settings, version=__version__
    )

    analytics_store = providers.Singleton(build_analytics_store, config=config, metrics=metrics,
                                          base_dir=base_dir)
    recorder = providers.Singleton(build_recorder, config=config, store=analytics_store)

    search = providers.Singleton(Search, catalog=catalog, responses=responses,
                                 recorder=recorder)
    facet_search = providers.Singleton(FacetSearch, catalog=catalog, responses=responses)
    autocomplete = providers.Singleton(Autocomplete, catalog=catalog, responses=responses,
                                       recorder=recorder)
    get_document = providers.Singleton(GetDocument, catalog=catalog, responses=responses)
    get_mapping = providers.Singleton(GetMapping, catalog=catalog, responses=responses)
    raw_query = providers.Singleton(RawQuery, catalog=catalog, max_body_bytes=max_body_bytes)
    health = providers.Singleton(Health, cache=cache, version=__version__,
                                 engines=engine_health)
    list_indexes = providers.Singleton(ListIndexes, catalog=catalog)
    describe_fields = providers.Singleton(DescribeFields, catalog=catalog)
    clear_cache = providers.Singleton(ClearCache, cache=cache)
    algolia_search = providers.Singleton(AlgoliaSearch, catalog=catalog, responses=responses,
                                         recorder=recorder)
    search_rules = providers.Singleton(SearchRules, catalog=catalog)
    get_rule = providers.Singleton(GetRule, catalog=catalog)
    send_events = providers.Singleton(SendEvents, catalog=catalog, recorder=recorder)
    analytics_reports = providers.Singleton(build_reports, catalog=catalog,
                                            store=analytics_store)
    suggestions = providers.Singleton(build_suggestions, config=config, catalog=catalog,
                                      store=analytics_store)


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
