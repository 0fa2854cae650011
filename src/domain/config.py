"""The typed configuration: the single declaration of every config key.

The YAML loader (an adapter) substitutes environment variables and converts the parsed
document into ``Config`` with ``msgspec.convert``, so unknown keys, wrong types and bad
engine names are reported with their key path.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from searchport.domain.engines import EngineName
from searchport.domain.rules.format import Rule

FieldType = Literal["text", "keyword", "integer", "float", "boolean", "date", "geo_point"]


class _Section(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True,
               rename="camel"):
    pass


class FieldConfig(_Section, frozen=True):
    """One entry of ``indexes.<handle>.fields``; the key is the public (alias) name."""

    field: str | None = None  # the real engine field when the key is an alias
    weight: Annotated[float, msgspec.Meta(gt=0)] | None = None
    searchable: bool = False
    nested_path: str | None = None
    type: FieldType | None = None


class DefaultsConfig(_Section, frozen=True):
    per_page: Annotated[int, msgspec.Meta(ge=1, le=100)] = 20
    facets: list[str] = msgspec.field(default_factory=list)
    highlight: bool | list[str] = False
    suggest_field: str | None = None


class RankingKey(_Section, frozen=True):
    """One key of ``indexes.<handle>.customRanking``: a numeric or date field (public name)
    and its direction, applied after text relevance to order equally relevant hits."""

    field: str
    order: Literal["asc", "desc"] = "desc"


class SortKey(_Section, frozen=True):
    """One key of a standard replica's ``sort``: a field (public name) and its direction."""

    field: str
    order: Literal["asc", "desc"]


class RelevantSortConfig(_Section, frozen=True):
    """``indexes.<handle>.relevantSort`` of a virtual replica (docs/replicas.md): of the
    ``maxHits`` most relevant matches, those whose relevance is at least ``strictness``
    percent of the best one's, ordered by the replica's ``customRanking``."""

    strictness: Annotated[int, msgspec.Meta(ge=0, le=100)] = 100
    max_hits: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 1000


class TypoToleranceConfig(_Section, frozen=True):
    """``indexes.<handle>.typoTolerance`` (embedded engine): how many typos a query word may
    have, by its length in letters; a transposition counts as one typo."""

    enabled: bool = True
    one_typo_from: Annotated[int, msgspec.Meta(ge=1, le=100)] = 5
    two_typos_from: Annotated[int, msgspec.Meta(ge=1, le=100)] = 9


# what the cache keeps: engine answers (search, facets, document, mapping) and, in the
# process, whole responses of the routes (autocomplete too, kept as long as searches)
CacheKind = Literal["search", "facets", "autocomplete", "mapping", "document"]


class IndexCacheConfig(_Section, frozen=True):
    """``indexes.<handle>.cache``: this handle's TTLs (seconds; 0: never cached)."""

    search_ttl: Annotated[float, msgspec.Meta(ge=0)] | None = None  # default: cache.searchTtl
    mapping_ttl: Annotated[float, msgspec.Meta(ge=0)] | None = None  # default: cache.mappingTtl
    documents: bool = False  # cache GET /documents/:id too (for searchTtl)


class SuggestionFacet(_Section, frozen=True):
    """One entry of ``indexes.<handle>.facets`` (engine ``querySuggestions``): each
    suggestion keeps the ``amount`` most frequent values of the source's facet
    ``attribute`` among the records its query finds, as Algolia's Query Suggestions does."""

    attribute: Annotated[str, msgspec.Meta(min_length=1)]
    amount: Annotated[int, msgspec.Meta(ge=1, le=100)] = 1


BUILTIN_FLOOR = 0.5  # see SemanticConfig.floor


class SemanticConfig(_Section, frozen=True):
    """``indexes.<handle>.semantic`` (docs/semantic.md): search by meaning beside words.
    ``embedder``: what turns text into vectors: ``builtin`` (a small model shipped in the
    ``semantic`` extra), ``openai`` (an OpenAI-compatible embeddings API: ``url``,
    ``model``, ``apiKey``) or ``engine`` (a server engine embeds the query itself;
    on Elasticsearch and OpenSearch with the model ``model`` deployed in it).
    ``fields`` (embedded engine): the text fields whose words make a record's meaning;
    ``field`` (server engine): the field holding the records' vectors. ``ratio``: the share
    of meaning in the ranking when a request does not say (0: words only; 1: meaning
    only). ``timeout``: seconds a query's embedding may take before the search goes on
    with words alone. ``min_similarity``: the similarity (cosine) a record must pass to
    be brought by meaning when words and meaning are fused (``floor``)."""

    embedder: Literal["builtin", "openai", "engine"] = "builtin"
    fields: list[str] = msgspec.field(default_factory=list)
    field: str | None = None
    ratio: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.0
    url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout: Annotated[float, msgspec.Meta(gt=0, le=60)] = 1.0
    min_similarity: Annotated[float, msgspec.Meta(ge=0, lt=1)] | None = None

    @property
    def floor(self) -> float:
        """``min_similarity``, or its default: the similarity below which the builtin
        model's nearest records are unrelated to the query (measured on the demo's
        typeahead queries, bench/RESULTS.md); 0 for a model searchport does not know."""
        if self.min_similarity is not None:
            return self.min_similarity
        return BUILTIN_FLOOR if self.embedder == "builtin" else 0.0


class IndexConfig(_Section, frozen=True):
    engine: EngineName
    # server engines
    host: str | None = None
    api_key: str | None = None
    username: str | None = None
    password: str | None = None
    index_name: str | list[str] | None = None
    timeout: Annotated[float, msgspec.Meta(gt=0, le=300)] = 5.0
    verify_tls: bool = True  # TLS certificate verification of ``host`` (https)
    ca_bundle: str | None = None  # PEM file of the CA(s) that signed the engine's certificate
    # http://[user:password@]host:port of a proxy to the engine; default: the environment's
    # HTTPS_PROXY or HTTP_PROXY, unless NO_PROXY lists the host
    proxy: str | None = None
    # embedded engine (tantivy)
    path: str | None = None
    source: str | None = None
    id_field: str = "id"
    # every engine
    fields: dict[str, FieldConfig] = msgspec.field(default_factory=dict)
    defaults: DefaultsConfig = msgspec.field(default_factory=DefaultsConfig)
    raw_query: bool = True
    # engine features a raw query may not use (403 naming the feature). Elasticsearch and
    # OpenSearch know "scripts" (any script: queries, scores, sorts, fields, aggregations)
    # and "runtimeFields" (runtime_mappings); the default denies both. [] allows them.
    raw_query_deny: list[Literal["scripts", "runtimeFields"]] = msgspec.field(
        default_factory=lambda: ["scripts", "runtimeFields"]
    )
    exact_totals: bool = True
    # relevance (docs/relevance.md): equally relevant hits in this order; the last query
    # word matched as a prefix (search-as-you-type); typo tolerance (embedded engine)
    custom_ranking: list[RankingKey] = msgspec.field(default_factory=list)
    prefix_search: bool = True
    typo_tolerance: TypoToleranceConfig = msgspec.field(default_factory=TypoToleranceConfig)
    max_result_window: Annotated[int, msgspec.Meta(ge=1)] = 10_000
    cache: IndexCacheConfig = msgspec.field(default_factory=IndexCacheConfig)
    # query rules in Algolia's rule format (docs/rules.md): a list of rule objects, or the
    # path (relative to the config file) of a JSON file holding them; the loader reads the
    # file, so a loaded config always holds the list
    rules: list[Rule] | str = msgspec.field(default_factory=list)
    # engine querySuggestions (docs/analytics.md): the popular queries of the handle named by
    # ``source``, from the query log. Algolia's options: a query must find at least
    # ``minHits`` records and have ``minLetters`` letters, and match no ``exclude`` pattern;
    # searchport's: searched ``minCount`` times in the last ``period`` days, rebuilt every
    # ``refresh`` seconds
    min_hits: Annotated[int, msgspec.Meta(ge=0, le=1_000_000_000)] = 5
    min_letters: Annotated[int, msgspec.Meta(ge=0, le=512)] = 4
    exclude: list[str] = msgspec.field(default_factory=list)
    facets: list[SuggestionFacet] = msgspec.field(default_factory=list)
    min_count: Annotated[int, msgspec.Meta(ge=1, le=1_000_000_000)] = 5
    period: Annotated[int, msgspec.Meta(ge=1, le=3650)] = 30
    refresh: Annotated[float, msgspec.Meta(ge=1, le=30 * 86_400)] = 3600.0
    # a replica (docs/replicas.md) shares the engine, index, fields and rules of the handle
    # it names, and sets only these keys, ``customRanking``, ``defaults`` and ``cache``:
    # ``sort`` (a standard replica: every match, strictly sorted) or ``relevantSort`` with
    # ``customRanking`` (a virtual replica: the most relevant matches, in that ranking)
    replica_of: str | None = None
    sort: list[SortKey] = msgspec.field(default_factory=list)
    relevant_sort: RelevantSortConfig | None = None
    semantic: SemanticConfig | None = None  # search by meaning too (docs/semantic.md)

    @property
    def rule_list(self) -> list[Rule]:
        return self.rules if isinstance(self.rules, list) else []


class CacheConfig(_Section, frozen=True):
    backend: Literal["none", "memory", "redis"] = "none"
    url: str | None = None  # redis://[user:password@]host:port/db; default: REDIS_URL
    # search, facet values and autocomplete; mapping (per index: indexes.<handle>.cache)
    search_ttl: Annotated[float, msgspec.Meta(gt=0)] = 60.0
    mapping_ttl: Annotated[float, msgspec.Meta(gt=0)] = 3600.0
    # the memory backend, and the in-process tier in front of Redis, are bounded by both
    max_entries: Annotated[int, msgspec.Meta(ge=1)] = 10_000
    max_bytes: Annotated[int, msgspec.Meta(ge=1024)] = 64 * 1024 * 1024
    local_ttl: Annotated[float, msgspec.Meta(ge=0)] = 5.0  # in-process tier; 0 turns it off
    prefix: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] = "searchport"
    timeout: Annotated[float, msgspec.Meta(gt=0, le=5)] = 0.1  # per Redis call, seconds

    def ttl(self, kind: CacheKind, own: IndexCacheConfig) -> float:
        """Seconds an answer of ``kind`` is kept for a handle whose settings are ``own``
        (its ``cache`` section); 0: never kept."""
        if kind == "mapping":
            return own.mapping_ttl if own.mapping_ttl is not None else self.mapping_ttl
        if kind == "document" and not own.documents:
            return 0.0
        return own.search_ttl if own.search_ttl is not None else self.search_ttl


class LimitsConfig(_Section, frozen=True):
    max_body_bytes: Annotated[int, msgspec.Meta(ge=1024, le=16 * 1024 * 1024)] = 65_536
    # a longer query string (after the "?", as sent) is a 414
    max_query_bytes: Annotated[int, msgspec.Meta(ge=1024, le=1024 * 1024)] = 16_384


class RateRule(_Section, frozen=True):
    """``limit`` requests at once, the allowance refilled evenly over ``window`` seconds
    (a sustained ``limit / window`` requests a second)."""

    limit: Annotated[int, msgspec.Meta(ge=1)]
    window: Annotated[float, msgspec.Meta(gt=0, le=86_400)] = 60.0


class RateLimitConfig(_Section, frozen=True):
    per_ip: RateRule | None = None  # every client address
    per_token: RateRule | None = None  # every bearer token (counted by a hash, never stored)
    # where the counts live: redis (shared by every process; needs cache.url or REDIS_URL),
    # memory (this process), auto (redis when the cache backend is redis, else memory)
    store: Literal["auto", "memory", "redis"] = "auto"
    # the client address is the last one in X-Forwarded-For (set by your proxy), not the peer
    trust_forwarded_for: bool = False

    @property
    def enabled(self) -> bool:
        return self.per_ip is not None or self.per_token is not None


class CircuitBreakerConfig(_Section, frozen=True):
    """``resilience.circuitBreaker``: per engine host (scheme://host:port)."""

    failures: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 5  # failed calls in a row: open
    cool_down: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 10.0  # seconds before a probe


class ResilienceConfig(_Section, frozen=True):
    """``resilience``: how calls to the server engines survive a failing engine. Each
    index's ``timeout`` is the budget of a whole call, retries included."""

    retries: Annotated[int, msgspec.Meta(ge=0, le=5)] = 2  # refused/dropped, 502/503 only
    retry_backoff: Annotated[float, msgspec.Meta(gt=0, le=10)] = 0.1  # first wait, doubled
    circuit_breaker: CircuitBreakerConfig = msgspec.field(default_factory=CircuitBreakerConfig)
    health_interval: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 5.0  # /health re-pings


class MetricsConfig(_Section, frozen=True):
    enabled: bool = True  # GET /metrics (Prometheus text format)
    public: bool = False  # True: /metrics needs no token even when apiKey is set


class AnalyticsConfig(_Section, frozen=True):
    """``analytics``: where the query log and the Insights events are kept (docs/analytics.md).
    ``sqlite``: a file (``path``; default ``analytics.sqlite3`` beside the config file);
    ``postgres``: a database several instances share (``url``); ``none``: nothing kept."""

    backend: Literal["sqlite", "postgres", "none"] = "sqlite"
    path: str | None = None  # sqlite; relative to the config file's folder
    url: str | None = None  # postgres: postgresql://user:password@host:port/database
    retention_days: Annotated[int, msgspec.Meta(ge=1, le=3650)] = 90  # purged daily
    # records held in memory while the store writes; past it, new ones are dropped (counted)
    buffer_size: Annotated[int, msgspec.Meta(ge=100, le=10_000_000)] = 50_000
    flush_interval: Annotated[float, msgspec.Meta(gt=0, le=60)] = 1.0  # seconds
    timeout: Annotated[float, msgspec.Meta(gt=0, le=60)] = 5.0  # seconds per store call


class KeyConfig(_Section, frozen=True):
    """``keys.<name>``: one named API key and what it may read. Any key (plain or named) is
    also the parent of the secured keys minted from it (docs/keys.md)."""

    key: Annotated[str, msgspec.Meta(min_length=1)]
    handles: list[str] = msgspec.field(default_factory=lambda: ["*"])  # names or "*" patterns
    # handle (or "*" pattern) -> the filters every read of it gets, in the grammar of the
    # ``filters`` parameter; the first pattern that matches a handle wins
    filters: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    # raw queries (POST /:handle/query); default: only when neither handles nor filters
    # restrict the key. When allowed with filters, Elasticsearch/OpenSearch keep them.
    raw_query: bool | None = None
    # an ISO-8601 instant with its offset (Z for UTC); from then on the key is refused
    expires: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    rate_limit: RateRule | None = None  # this key's own rule, besides rateLimit's
    analytics: bool = False  # may read the analytics (/2/ routes) of its handles


class Config(_Section, frozen=True):
    port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 3000
    host: str = "127.0.0.1"
    api_key: str | list[str] | None = None
    keys: dict[str, KeyConfig] = msgspec.field(default_factory=dict)  # named, scoped keys
    cors_origins: str | list[str] | None = None
    indexes: dict[str, IndexConfig] = msgspec.field(default_factory=dict)
    cache: CacheConfig = msgspec.field(default_factory=CacheConfig)
    limits: LimitsConfig = msgspec.field(default_factory=LimitsConfig)
    access_log: Literal["json", "text", "off"] = "json"  # one line per request on stdout
    # on SIGTERM/SIGINT: requests under way get this many seconds to finish, then the
    # workers are stopped (new connections are refused at once)
    shutdown_timeout: Annotated[int, msgspec.Meta(ge=1, le=3600)] = 30
    metrics: MetricsConfig = msgspec.field(default_factory=MetricsConfig)
    rate_limit: RateLimitConfig = msgspec.field(default_factory=RateLimitConfig)
    resilience: ResilienceConfig = msgspec.field(default_factory=ResilienceConfig)
    analytics: AnalyticsConfig = msgspec.field(default_factory=AnalyticsConfig)

    @property
    def api_keys(self) -> tuple[str, ...]:
        if self.api_key is None:
            return ()
        keys = [self.api_key] if isinstance(self.api_key, str) else self.api_key
        return tuple(k for k in keys if k)


class ConfigError(Exception):
    """The configuration cannot be used; the message names the key path."""
