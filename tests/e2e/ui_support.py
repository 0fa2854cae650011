"""What the browser tests of the search page (``/ui``) share: Debian's ``/usr/bin/chromium``
(Playwright never downloads a browser here), the fixture rows with one hostile document,
and helpers that compute what the page should say from those rows.

Without chromium a UI test module is skipped, except in CI (env ``CI`` set), where that is a
failure: each module calls :func:`require_chromium` first.
"""

from __future__ import annotations

import functools
import http.server
import math
import os
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, expect

if TYPE_CHECKING:
    from tests.e2e.conftest import Server

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "artifacts"
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
]
PER_PAGE = 10
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# a document whose text would run script if the page ever used it as HTML
HOSTILE: dict[str, Any] = {
    "id": "hostile-1", "name": "Zzyzx <img src=x onerror=window.__pwned=1> Springs",
    "alternateNames": ["<script>window.__pwned=2</script>", "Zzyzx &amp; co"],
    "country": "Testland <b>bold</b>", "countryCode": "TL", "continent": "Oceania",
    "population": 1234, "timezone": "Pacific/Test", "location": {"lat": -10.5, "lon": 150.25},
    "capital": False, "currency": "TLD", "languages": ["tl"],
}


def require_chromium() -> None:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is missing: .ci/run installs it", pytrace=False)
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)",
                    allow_module_level=True)


def status(total: int, page: int = 1, per_page: int = PER_PAGE) -> re.Pattern[str]:
    """The page's status line for ``total`` results (its timing matched loosely)."""
    pages = math.ceil(total / per_page)
    noun = "result" if total == 1 else "results"
    text = f"{total:,} {noun}" + (f" · page {page} of {pages:,}" if pages > 1 else "")
    return re.compile("^" + re.escape(text) + r" · [\d.]+ ms$")


def facet_counts(page: Page, field: str) -> dict[str, int]:
    """The values a facet box lists (as sent to the API) and the counts it shows."""
    items = page.locator(f'fieldset[data-field="{field}"] li.facet-value')
    values = items.locator("input").evaluate_all("els => els.map(e => e.dataset.value)")
    counts = items.locator(".count").all_inner_texts()
    return {value: int(count.replace(",", "")) for value, count in zip(values, counts, strict=True)}


def ordered(counter: Counter[str]) -> list[str]:
    return sorted(counter, key=lambda value: (-counter[value], value))


def open_page(page: Page, server: Server, query: str = "") -> None:
    """Open ``/ui`` with a query string and wait for the first result."""
    page.goto(f"{server.url}/ui{query}")
    expect(page.locator("#hits li.hit").first).to_be_visible()


def tile(lat: float, lon: float, zoom: int) -> str:
    """The map tile ``zoom/x/y`` (Web Mercator) of a point: how geo clusters are keyed."""
    n = 2**zoom
    x = min(n - 1, int((lon + 180) / 360 * n))
    rad = math.radians(lat)
    y = min(n - 1, int((1 - math.log(math.tan(rad) + 1 / math.cos(rad)) / math.pi) / 2 * n))
    return f"{zoom}/{x}/{y}"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def served_folder(folder: Path, name: str) -> Iterator[str]:
    """``folder``'s files over HTTP on 127.0.0.1, at a port of their own (a page on another
    origin than searchport, as in production); yields the origin's URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)
