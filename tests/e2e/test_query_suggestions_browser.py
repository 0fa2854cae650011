"""The stock ``@algolia/autocomplete-js`` with ``@algolia/autocomplete-plugin-query-suggestions``
(``categoryAttribute`` set), unmodified, in Debian's Chromium against a real ``searchport
serve``: the popular searches sent to the server come back as suggestions, most popular
first, with the source's top countries as categories. The page is
``tests/e2e/instantsearch/suggestions.html``; expected items are computed from the searches
sent and the sample rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.conftest import Server

# the page server, the browser and a page that fails on any script error: the InstantSearch
# test module's fixtures (it skips without chromium, node or npm, and so does this one)
from tests.e2e.test_instantsearch_browser import (  # noqa: F401
    Page,
    browser,
    expect,
    page,
    page_origin,
)
from tests.e2e.test_query_suggestions_e2e import (
    expected,
    search_all,
    suggestions_config,
    wait_for,
)

pytestmark = pytest.mark.e2e
Row = dict[str, Any]
ITEMS = ".aa-Panel .aa-Item"


@pytest.fixture(scope="module")
def suggesting(server_factory: Callable[..., Server], page_origin: str) -> Server:  # noqa: F811
    return server_factory(suggestions_config(f'corsOrigins: ["{page_origin}"]'))


@pytest.fixture(scope="module")
def suggested(suggesting: Server, rows: list[Row]) -> list[Row]:
    """The suggestions, once the server has built them from the searches sent."""
    want = expected(rows, search_all(suggesting))
    wait_for(suggesting, want)
    return want


def open_page(page: Page, origin: str, server: Server) -> None:  # noqa: F811
    host = server.url.removeprefix("http://")
    page.goto(f"{origin}/suggestions.html?host={host}&index=cities_query_suggestions"
              f"&source=cities")


def item_texts(page: Page) -> list[str]:  # noqa: F811
    texts: list[str] = page.locator(ITEMS).evaluate_all(
        "els => els.map(e => e.textContent.trim())")
    return texts


def test_the_plugin_shows_the_popular_searches(page: Page, page_origin: str,  # noqa: F811
                                               suggesting: Server,
                                               suggested: list[Row]) -> None:
    open_page(page, page_origin, suggesting)
    page.locator(".aa-Input").click()  # openOnFocus: every suggestion, most popular first
    expect(page.locator(ITEMS)).to_have_count(len(suggested))
    assert item_texts(page) == [s["query"] for s in suggested]


def test_typing_shows_the_matching_suggestion_and_its_categories(
        page: Page, page_origin: str, suggesting: Server,  # noqa: F811
        suggested: list[Row]) -> None:
    open_page(page, page_origin, suggesting)
    page.locator(".aa-Input").fill("lon")
    (london,) = [s for s in suggested if s["query"].startswith("lon")]
    countries = [c["value"] for c in
                 london["cities"]["facets"]["exact_matches"]["country"]][:2]
    assert countries  # the sample has a London
    # retried until the panel shows them: the popular searches shown before the typed
    # text's answer arrives have as many items
    expect(page.locator(ITEMS)).to_have_text(["london", *(f"in {c}" for c in countries)])
    # ReverseHighlight: what the user did not type is marked
    expect(page.locator(f"{ITEMS} .aa-ItemContentTitle mark")).to_have_text("don")

    page.locator(".aa-Input").fill("shang")
    expect(page.locator(f"{ITEMS} .aa-ItemContentTitle").first).to_have_text("shanghai")
    assert item_texts(page)[0] == "shanghai"
    expect(page.locator("#error")).to_have_text("")
