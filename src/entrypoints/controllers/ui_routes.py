"""The built-in pages: search at ``GET /ui`` (``GET /`` redirects there), search analytics
at ``GET /ui/analytics``, and their static files.

The page is plain HTML, CSS and JavaScript modules shipped in ``searchport/entrypoints/ui``;
it needs no token itself and calls the JSON API like any other client.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from litestar import Response, Router, get
from litestar.handlers import HTTPRouteHandler
from litestar.response import Redirect
from litestar.static_files import create_static_files_router

UI_PATH = "/ui"
ANALYTICS_PAGE_PATH = "/ui/analytics"
ASSETS_PATH = "/ui/assets"
# Only the page's own files and its own API: no inline script, no framing, no other origin.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
UI_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}


def ui_directory() -> Path:
    return Path(str(files("searchport.entrypoints") / "ui"))


def ui_routes() -> list[HTTPRouteHandler | Router]:
    """The pages, the redirect from ``/`` and the static files (read when the app is built)."""
    page = (ui_directory() / "index.html").read_bytes()
    analytics = (ui_directory() / "analytics.html").read_bytes()

    @get(UI_PATH, include_in_schema=False, media_type="text/html")
    async def search_page() -> Response[bytes]:
        return Response(page, media_type="text/html", headers=UI_HEADERS)

    @get(ANALYTICS_PAGE_PATH, include_in_schema=False, media_type="text/html")
    async def analytics_page() -> Response[bytes]:
        return Response(analytics, media_type="text/html", headers=UI_HEADERS)

    @get("/", include_in_schema=False, status_code=302)
    async def root() -> Redirect:
        return Redirect(UI_PATH, status_code=302)

    assets = create_static_files_router(
        ASSETS_PATH, directories=[ui_directory()], name="ui-assets", include_in_schema=False,
    )
    return [search_page, analytics_page, root, assets]
