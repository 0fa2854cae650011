"""Algolia's NeuralSearch through InstantSearch.js and the stock ``algoliasearch`` lite
client, in Debian's Chromium, against a real ``searchport serve`` with the builtin model.

The handle ``places`` holds the demo's most populous places (each with its description) and
has a ``semantic`` section whose ``ratio`` is above 0: a NeuralSearch index on the Algolia
routes. The page is the InstantSearch test page (``tests/e2e/instantsearch/index.html``)
with a region list alone (``lists=region``); ``mode=keywordSearch`` makes it send Algolia's
``mode`` with every search, the same page searching by words alone. A description of a
place, in other words than its own, finds nothing by words and the place by meaning; the
expected hits are the places whose cosine with it (the model's, over the rows:
``tests/semantic_model.py``, computed here, apart from searchport's ranking) passes the
handle's floor (``minSimilarity``), nearest first. Skipped without chromium, node, npm or the model,
except in CI (as the other browser tests are).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from searchport.domain.config import BUILTIN_FLOOR
from tests.e2e.conftest import Server
from tests.e2e.test_neural_e2e import demo_config
from tests.semantic_model import demo_places, ranking_by_meaning, require_model

require_model()

# the page server, the browser, a page that fails on any script error and the page's
# helpers: the InstantSearch test module's (it skips without chromium, node or npm)
from tests.e2e.test_instantsearch_browser import (  # noqa: E402, F401
    STATS,
    Page,
    browser,
    expect,
    hit_ids,
    list_items,
    page,
    page_origin,
    search_for,
    stats_text,
    toggle,
)

pytestmark = pytest.mark.e2e
REGION = "#region .ais-RefinementList-item"
Row = dict[str, Any]

PLACES = 150  # the demo's most populous places: their vectors take a few seconds
PER_PAGE = 10  # the page's configure({hitsPerPage})
# no description holds every word ("big", "heard" beside "Spanish"): by words, nothing;
# Madrid's says "the capital of Spain ... People speak Spanish and Catalan"
PARAPHRASE = "a big city where Spanish is heard"


@pytest.fixture(scope="module")
def places() -> list[Row]:
    rows = demo_places(PLACES)
    assert len({row["name"] for row in rows}) == len(rows)  # a name says which row
    return rows


@pytest.fixture(scope="module")
def neural(server_factory: Callable[..., Server], page_origin: str,  # noqa: F811
           places: list[Row], tmp_path_factory: pytest.TempPathFactory) -> Server:
    folder = tmp_path_factory.mktemp("neural-places")
    config = demo_config(folder, places, f'corsOrigins: ["{page_origin}"]')
    return server_factory(config, timeout=180.0)


@pytest.fixture(scope="module")
def by_meaning(places: list[Row]) -> Callable[..., list[str]]:
    """The rows' ids, nearest in meaning to a text first, within a region if given, only
    those whose cosine passes ``above`` if given."""
    rank = ranking_by_meaning([(r["id"], r["name"], r["region"], r["description"])
                               for r in places])
    ids = {r["name"]: r["id"] for r in places}
    return lambda text, region=None, above=None: [ids[name]
                                                  for name in rank(text, region, above)]


def open_places(page: Page, origin: str, server: Server, **settings: str) -> None:  # noqa: F811
    host = server.url.removeprefix("http://")
    extra = "".join(f"&{k}={v}" for k, v in settings.items())
    page.goto(f"{origin}/index.html?host={host}&index=places&lists=region{extra}")
    expect(page.locator(STATS)).to_have_text(stats_text(PLACES))


def test_get_settings_says_neural_search(neural: Server) -> None:
    settings = neural.client.get("/1/indexes/places/settings")
    assert settings.status_code == 200 and settings.json()["mode"] == "neuralSearch"


def test_a_description_finds_the_place_by_meaning_and_a_region_narrows_it(
    page: Page, page_origin: str, neural: Server, places: list[Row],  # noqa: F811
    by_meaning: Callable[..., list[str]],
) -> None:
    madrid = next(r for r in places if "capital of Spain" in r["description"])
    similar = by_meaning(PARAPHRASE, None, BUILTIN_FLOOR)  # what meaning brings, nearest first
    assert similar[0] == madrid["id"]
    region_of = {r["id"]: r["region"] for r in places}
    fused = Counter(region_of[i] for i in similar)
    assert len(fused) >= 3 and fused["South America"] >= 2

    # the same page searching by words alone: nothing holds every word
    open_places(page, page_origin, neural, mode="keywordSearch")
    search_for(page, PARAPHRASE)
    expect(page.locator(STATS)).to_have_text(stats_text(0))
    expect(page.locator("#hits article.hit")).to_have_count(0)

    # as a NeuralSearch index: no record by words, so the fused ranking is the one by
    # meaning, of the places similar enough
    open_places(page, page_origin, neural)
    search_for(page, PARAPHRASE)
    expect(page.locator(STATS)).to_have_text(stats_text(len(similar)))
    first = page.locator("#hits article.hit").first
    expect(first).to_have_attribute("data-id", madrid["id"])
    expect(first.locator("h3")).to_have_text(madrid["name"])
    assert hit_ids(page) == similar[:PER_PAGE]
    # the region list counts the fused records
    expect(page.locator(REGION)).to_have_text(list_items(fused))

    # a region narrows both halves: within South America, Madrid is gone and the hits are
    # the region's places similar enough, nearest first
    region = "South America"
    inside = by_meaning(PARAPHRASE, region, BUILTIN_FLOOR)
    toggle(page, "#region", region)
    expect(page.locator(STATS)).to_have_text(stats_text(len(inside)))
    expect(page.locator("#hits article.hit").first).to_have_attribute("data-id", inside[0])
    assert hit_ids(page) == inside[:PER_PAGE]
    assert madrid["id"] not in hit_ids(page)
    assert set(page.locator("#hits .hit-region").all_inner_texts()) == {region}
    # the other regions keep their counts (InstantSearch's query without the region
    # filter); the region's own is the refined search's, the same records: the floor is
    # a cosine, so filtering before the fusion keeps exactly the region's similar places
    assert len(inside) == fused[region]
    expect(page.locator(REGION)).to_have_text(list_items(fused, (region,)))

    # back to Europe alone: Madrid first again
    toggle(page, "#region", region)
    toggle(page, "#region", "Europe")
    europe = by_meaning(PARAPHRASE, "Europe", BUILTIN_FLOOR)
    expect(page.locator(STATS)).to_have_text(stats_text(len(europe)))
    expect(page.locator("#hits article.hit").first).to_have_attribute("data-id", madrid["id"])
    assert hit_ids(page) == europe[:PER_PAGE]
    assert set(page.locator("#hits .hit-region").all_inner_texts()) == {"Europe"}
