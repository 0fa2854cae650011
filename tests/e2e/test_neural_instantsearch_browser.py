"""Algolia's NeuralSearch through InstantSearch.js and the stock ``algoliasearch`` lite
client, in Debian's Chromium, against a real ``searchport serve`` with the builtin model.

The handle ``places`` holds the demo's most populous places (each with its description) and
has a ``semantic`` section whose ``ratio`` is above 0: a NeuralSearch index on the Algolia
routes. The page is the InstantSearch test page (``tests/e2e/instantsearch/index.html``)
with a region list alone (``lists=region``); ``mode=keywordSearch`` makes it send Algolia's
``mode`` with every search, the same page searching by words alone. A description of a
place, in other words than its own, finds nothing by words and the place by meaning; the
expected hits are the model's cosines over the rows (``tests/semantic_model.py``), computed
here, apart from searchport's ranking. Skipped without chromium, node, npm or the model,
except in CI (as the other browser tests are).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

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
WINDOW = 100  # the records each half of a hybrid search brings (docs/semantic.md)
PER_PAGE = 10  # the page's configure({hitsPerPage})
# no description says "government" nor "sits" beside "Thai": by words, nothing; Bangkok's
# says "Bangkok is the capital of Thailand ... People speak Thai"
PARAPHRASE = "where the Thai government sits"


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
def by_meaning(places: list[Row]) -> Callable[[str, str | None], list[str]]:
    """The rows' ids, nearest in meaning to a text first, within a region if given."""
    rank = ranking_by_meaning([(r["id"], r["name"], r["region"], r["description"])
                               for r in places])
    ids = {r["name"]: r["id"] for r in places}
    return lambda text, region=None: [ids[name] for name in rank(text, region)]


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
    by_meaning: Callable[[str, str | None], list[str]],
) -> None:
    bangkok = next(r for r in places if "capital of Thailand" in r["description"])
    nearest = by_meaning(PARAPHRASE, None)
    assert nearest[0] == bangkok["id"]
    assert not any("government" in r["description"].lower() for r in places)

    # the same page searching by words alone: nothing holds every word
    open_places(page, page_origin, neural, mode="keywordSearch")
    search_for(page, PARAPHRASE)
    expect(page.locator(STATS)).to_have_text(stats_text(0))
    expect(page.locator("#hits article.hit")).to_have_count(0)

    # as a NeuralSearch index: no record by words, so the fused ranking is the one by
    # meaning, each half bringing its best WINDOW records
    open_places(page, page_origin, neural)
    search_for(page, PARAPHRASE)
    expect(page.locator(STATS)).to_have_text(stats_text(min(WINDOW, PLACES)))
    first = page.locator("#hits article.hit").first
    expect(first).to_have_attribute("data-id", bangkok["id"])
    expect(first.locator("h3")).to_have_text(bangkok["name"])
    assert hit_ids(page) == nearest[:PER_PAGE]
    # the region list counts the fused records: the WINDOW nearest
    region_of = {r["id"]: r["region"] for r in places}
    fused = Counter(region_of[i] for i in nearest[:WINDOW])
    expect(page.locator(REGION)).to_have_text(list_items(fused))

    # a region narrows both halves: within Europe, Bangkok is gone and the hits are
    # Europe's places nearest in meaning
    europe = [r for r in places if r["region"] == "Europe"]
    toggle(page, "#region", "Europe")
    expect(page.locator(STATS)).to_have_text(stats_text(min(WINDOW, len(europe))))
    expect(page.locator("#hits article.hit").first).to_have_attribute(
        "data-id", by_meaning(PARAPHRASE, "Europe")[0])
    assert hit_ids(page) == by_meaning(PARAPHRASE, "Europe")[:PER_PAGE]
    assert bangkok["id"] not in hit_ids(page)
    assert set(page.locator("#hits .hit-region").all_inner_texts()) == {"Europe"}
    # the other regions keep their counts (InstantSearch's query without the region
    # filter); Europe's is the larger of that query's (the European places among the WINDOW
    # nearest) and the refined search's (every European place: the filter narrowed both
    # halves before they were fused), as algoliasearch-helper merges them (mergeNumericMax)
    within = Counter({"Europe": min(WINDOW, len(europe))})
    assert within["Europe"] > fused["Europe"]
    expect(page.locator(REGION)).to_have_text(list_items(fused | within, ("Europe",)))

    # within Asia, Bangkok is first again
    toggle(page, "#region", "Europe")
    toggle(page, "#region", "Asia")
    asia = [r for r in places if r["region"] == "Asia"]
    expect(page.locator(STATS)).to_have_text(stats_text(min(WINDOW, len(asia))))
    expect(page.locator("#hits article.hit").first).to_have_attribute("data-id", bangkok["id"])
    assert hit_ids(page) == by_meaning(PARAPHRASE, "Asia")[:PER_PAGE]
    assert set(page.locator("#hits .hit-region").all_inner_texts()) == {"Asia"}
