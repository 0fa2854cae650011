"""The Litestar application, assembled from a container."""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar, Router
from litestar.config.compression import CompressionConfig
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme, Server
from litestar.static_files import create_static_files_router
from swagger_ui_bundle import swagger_ui_path

from searchport import __version__
from searchport.adapters.cache.memory import MemoryCache
from searchport.adapters.cache.two_tier import TwoTierCache
from searchport.entrypoints.container import ANALYTICS_REPORTS, Container
from searchport.entrypoints.controllers.algolia_records import algolia_records_controller
from searchport.entrypoints.controllers.algolia_routes import algolia_controller
from searchport.entrypoints.controllers.algolia_rules import algolia_rules_controller
from searchport.entrypoints.controllers.analytics_routes import analytics_routes
from searchport.entrypoints.controllers.field_routes import fields_route
from searchport.entrypoints.controllers.index_routes import index_controller
from searchport.entrypoints.controllers.query_names import unknown_names_refused
from searchport.entrypoints.controllers.service_routes import service_routes
from searchport.entrypoints.controllers.ui_routes import UI_PATH, ui_routes
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import bearer_auth
from searchport.entrypoints.http.head import HeadAsGet
from searchport.entrypoints.http.http_cache import STORE, response_cache_config
from searchport.entrypoints.http.http_errors import EXCEPTION_HANDLERS
from searchport.entrypoints.http.limits import query_length_guard
from searchport.entrypoints.http.observability import AccessLog, LogFormat
from searchport.entrypoints.http.openapi import PolishedJson, PolishedSwagger
from searchport.entrypoints.http.rate_limit import rate_limit
from searchport.entrypoints.http.request_context import Observer, RequestContext
from searchport.entrypoints.http.response_store import ResponseStore
from searchport.entrypoints.keys.keyring import Keyring

logger = logging.getLogger("searchport")

ASSETS = "/openapi/assets"


def _openapi(auth: bool) -> OpenAPIConfig:
    swagger = PolishedSwagger(
        js_url=f"{ASSETS}/swagger-ui-bundle.js",
        css_url=f"{ASSETS}/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS}/swagger-ui-standalone-preset.js",
        path="/",
        favicon=f'<link rel="icon" type="image/png" href="{ASSETS}/favicon-32x32.png">',
    )
    return OpenAPIConfig(
        title="searchport",
        version=__version__,
        description="One stable JSON search API in front of Elasticsearch, OpenSearch, "
        "Meilisearch, Typesense or an embedded tantivy index. Errors are "
        '{"error": "..."} with 400, 401, 403, 404, 405, 413 (body too large), 414 (query '
        "string too long), 429 (with Retry-After), 502 or 504."
        + (" Send `Authorization: Bearer <key>`." if auth else ""),
        path="/openapi",
        render_plugins=[swagger, PolishedJson(path=["/json", "/openapi.json"])],
        servers=[Server(url="/")],
        components=Components(
            security_schemes={"bearer": SecurityScheme(type="http", scheme="bearer")}
        ),
        security=[{"bearer": []}] if auth else None,
        use_handler_docstrings=False,
    )


def _compression() -> CompressionConfig:
    # brotli when the client accepts it, else gzip; gzip's level 5 compresses JSON nearly as
    # well as its default 9 for a fraction of the CPU, and smaller bodies are not worth it
    return CompressionConfig(backend="brotli", minimum_size=1024, gzip_compress_level=5,
                             brotli_quality=5)


def _cors(origins: str | list[str] | None) -> CORSConfig | None:
    if not origins:
        return None
    allowed = [origins] if isinstance(origins, str) else origins
    return CORSConfig(
        allow_origins=allowed,
        allow_methods=["GET", "POST", "OPTIONS"],
        # the algoliasearch client's headers (it may also put them in the query string)
        allow_headers=["Authorization", "Content-Type", "X-Request-ID", "X-Algolia-API-Key",
                       "X-Algolia-Application-Id", "X-Algolia-Agent", "X-Algolia-UserToken"],
        expose_headers=["X-Request-ID", "Server-Timing"],
        allow_credentials=False,
        max_age=600,
    )


def create_app(
    container: Container,
    *,
    listen_url: str | None = None,
    access_log: LogFormat | None = None,
) -> RequestContext:
    """Build the ASGI application; ``listen_url`` is logged once the app is ready;
    ``access_log`` overrides the config's format (``serve --reload`` asks for text).

    The one pipeline (ARCHITECTURE.md): ``RequestContext`` (request id, timing, the access
    log and metrics) -> ``HeadAsGet`` -> Litestar: its CORS, routing, then the guards as its
    middleware (rate limit, key, query-string length), its response cache, compression, the
    handler."""
    config = container.config()
    keyring = Keyring(config)
    auth = keyring.enabled
    metrics = container.metrics()
    observers: list[Observer] = []
    log_format = access_log or config.access_log
    if log_format != "off":
        observers.append(AccessLog(log_format))
    # the search page and its files need no token: the page asks for one itself
    open_paths = ("/", UI_PATH, *(("/metrics",) if config.metrics.public else ()))

    guards = [
        rate_limit(config.rate_limit, container.rate_limit_store(), keyring),
        bearer_auth(keyring, open_paths, config.rate_limit.trust_forwarded_for),
        query_length_guard(config.limits.max_query_bytes),
    ]
    store = response_store(container)
    trust = config.rate_limit.trust_forwarded_for

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        catalog = container.catalog()
        for engine in catalog.engines():
            await engine.start()
        for embedder in catalog.embedders():
            await embedder.start()
        logger.info("cache: %s", await container.cache().probe())
        recorder = container.recorder()
        await recorder.start()
        suggestions = container.suggestions()
        for refresher in suggestions:
            refresher.start()
        if listen_url:
            logger.info("searchport %s listening on %s", __version__, listen_url)
        try:
            yield
        finally:
            for refresher in suggestions:
                await refresher.close()
            await container.engine_health().close()
            for engine in catalog.engines():
                await engine.close()
            for embedder in catalog.embedders():
                await embedder.close()
            await container.engine_pools().aclose()
            await container.responses().drain()
            await recorder.close()  # what the search log's buffer holds goes to the store
            await container.cache().close()
            await container.rate_limit_store().close()
            logger.info("searchport stopped: engine, cache and rate-limit connections closed")

    uc = UseCases.of(container)
    app = Litestar(
        route_handlers=[
            algolia_controller(uc, trust_forwarded_for=trust),
            *analytics_routes(uc, tuple(ANALYTICS_REPORTS)),
            algolia_records_controller(uc),
            algolia_rules_controller(uc),
            # searchport's own JSON API: one rule for the names of the query string
            Router("/", before_request=unknown_names_refused(), route_handlers=[
                *service_routes(uc, metrics=config.metrics.enabled),
                index_controller(uc, cached=store is not None, private=auth,
                                 logged=config.analytics.backend != "none",
                                 trust_forwarded_for=trust),
                fields_route(uc)]),
            create_static_files_router(ASSETS, directories=[swagger_ui_path], name="assets"),
            *ui_routes(),
        ],
        middleware=guards,
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        openapi_config=_openapi(auth),
        cors_config=_cors(config.cors_origins),
        response_cache_config=response_cache_config(),
        compression_config=_compression(),
        stores={STORE: store} if store is not None else None,
        state=State({STORE: store}),
        request_max_body_size=config.limits.max_body_bytes,
        lifespan=[lifespan],
        logging_config=None,
        debug=False,
    )
    vary = (b"Authorization", b"Accept-Encoding") if auth else (b"Accept-Encoding",)
    return RequestContext(HeadAsGet(app), vary=vary, metrics=metrics, observers=observers)


def response_store(container: Container) -> ResponseStore | None:
    """Where Litestar's response cache keeps whole responses: the cache's tier in this process,
    if it has one (memory, or the tier in front of Redis); None turns that cache off."""
    cache = container.cache().inner
    if isinstance(cache, MemoryCache):
        tier, cap = cache, math.inf
    elif isinstance(cache, TwoTierCache):
        tier, cap = cache.local, cache.local_ttl
    else:
        return None
    catalog, responses = container.catalog(), container.responses()

    def ttl(kind: str, handle: str) -> float:
        return responses.ttl(kind, catalog.get_entry(handle))  # type: ignore[arg-type]

    return ResponseStore(tier, ttl, cap=cap, on_hit=container.metrics().cache_lookup)
