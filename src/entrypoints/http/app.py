"""The Litestar application, over the parts a container holds."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from litestar import Litestar, Router
from litestar.config.compression import CompressionConfig
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme, Server
from litestar.static_files import create_static_files_router
from swagger_ui_bundle import swagger_ui_path

from searchport import __version__
from searchport.entrypoints.controllers.algolia_recommend import algolia_recommend_controller
from searchport.entrypoints.controllers.algolia_records import algolia_records_controller
from searchport.entrypoints.controllers.algolia_routes import algolia_controller
from searchport.entrypoints.controllers.algolia_rules import algolia_rules_controller
from searchport.entrypoints.controllers.analytics_routes import analytics_routes
from searchport.entrypoints.controllers.field_routes import fields_route
from searchport.entrypoints.controllers.index_routes import index_controller
from searchport.entrypoints.controllers.query_names import unknown_names_refused
from searchport.entrypoints.controllers.service_routes import service_routes
from searchport.entrypoints.controllers.ui_routes import ui_routes
from searchport.entrypoints.http.head import HeadAsGet
from searchport.entrypoints.http.http_cache import STORE, response_cache_config
from searchport.entrypoints.http.http_errors import EXCEPTION_HANDLERS
from searchport.entrypoints.http.observability import AccessLog, LogFormat
from searchport.entrypoints.http.openapi import PolishedJson, PolishedSwagger
from searchport.entrypoints.http.request_context import Observer, RequestContext

if TYPE_CHECKING:  # the container imports the HTTP layer's parts, never the other way round
    from searchport.entrypoints.container import Container

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
    """The ASGI application over what ``container`` holds; ``listen_url`` is logged once the
    app is ready; ``access_log`` overrides the config's format (``serve --reload`` asks for
    text).

    The one pipeline (ARCHITECTURE.md): ``RequestContext`` (request id, timing, the access
    log and metrics) -> ``HeadAsGet`` -> Litestar: its CORS, routing, then the guards as its
    middleware (rate limit, key, query-string length), its response cache, compression, the
    handler."""
    config = container.config()
    auth = container.keyring().enabled
    metrics = container.metrics()
    observers: list[Observer] = []
    log_format = access_log or config.access_log
    if log_format != "off":
        observers.append(AccessLog(log_format))
    store = container.response_store()
    trust = config.rate_limit.trust_forwarded_for

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        service = container.lifespan()
        await service.start()
        if listen_url:
            logger.info("searchport %s listening on %s", __version__, listen_url)
        try:
            yield
        finally:
            await service.stop()

    uc = container.use_cases()
    app = Litestar(
        route_handlers=[
            algolia_controller(uc, trust_forwarded_for=trust),
            *analytics_routes(uc, tuple(uc.analytics_reports())),
            algolia_records_controller(uc),
            algolia_recommend_controller(uc),
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
        middleware=container.guards(),
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
