"""The built-in search page (``/ui``) driven in a real Chromium against a ``searchport serve``.

Fixtures and helpers in ``tests/e2e/conftest.py`` and ``tests/e2e/ui_support.py``. Expected
values are computed from the fixture rows; a screenshot is kept in ``tests/e2e/artifacts/ui.png``.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from typing import Any

import pytest

from tests.e2e.conftest import UI_RULE, Server
from tests.e2e.ui_support import (
    ARTIFACTS,
    HOSTILE,
    PER_PAGE,
    facet_counts,
    open_page,
    ordered,
    require_chromium,
    status,
    tile,
)

require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402  (only once chromium is known to be there)

pytestmark = pytest.mark.e2e

PRECISION = 4  # the page's world view asks for geo tiles of this zoom


def test_root_redirects_to_the_page(ui_server: Server) -> None:
    response = ui_server.client.get("/", follow_redirects=False)
    assert response.status_code == 302 and response.headers["location"] == "/ui"


def test_typing_shows_highlighted_hits_and_never_runs_document_text(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    open_page(page, ui_server)
    expect(page.locator("#status")).to_have_text(status(len(ui_rows)))
    page.locator("#q").press_sequentially("zzyzx", delay=30)
    expect(page.locator("#status")).to_have_text(status(1))
    hit = page.locator("#hits li.hit")
    expect(hit).to_have_count(1)
    expect(hit).to_have_attribute("data-id", HOSTILE["id"])
    title = hit.locator("h3.hit-title")
    expect(title.locator("mark")).to_have_text("Zzyzx")
    expect(title).to_have_text(HOSTILE["name"])  # the markup-like text shown as text
    expect(hit.locator(".matched mark").first).to_have_text("Zzyzx")
    expect(hit.locator(".facts")).to_contain_text("Testland <b>bold</b>")
    # nothing of the document became an element or ran
    assert page.locator("#hits img, #hits script, #hits b").count() == 0
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("window.__pwned") is None
    assert hit.locator("mark").evaluate_all("els => els.every(e => e.children.length === 0)")

    page.locator("#q").fill("shanghai")
    expected = [r for r in ui_rows if "shanghai" in r["name"].lower()]
    expect(page.locator("#hits li.hit").first.locator("h3 mark")).to_have_text("Shanghai")
    assert len(expected) >= 1


def test_a_query_rules_user_data_is_shown_as_text(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    open_page(page, ui_server)
    banner = page.locator("#rule-data")
    expect(banner).to_be_hidden()
    page.locator("#q").fill("london")
    london = [r for r in ui_rows if any(
        w.startswith("london") for text in [r["name"], *r.get("alternateNames", [])]
        for w in re.findall(r"[^\W_]+", text.lower()))]
    expect(page.locator("#status")).to_have_text(status(len(london)))
    expect(banner).to_be_visible()
    expect(banner.locator("p")).to_have_text([UI_RULE["consequence"]["userData"]["title"]])
    assert page.locator("#rule-data b").count() == 0
    page.locator("#q").fill("shanghai")  # the rule's pattern is the whole query
    expect(page.locator("#hits li.hit").first.locator("h3 mark")).to_have_text("Shanghai")
    expect(banner).to_be_hidden()


def test_facets_are_disjunctive_and_searchable(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    open_page(page, ui_server)
    regions = Counter(r["continent"] for r in ui_rows)
    expect(page.locator('fieldset[data-field="region"] li.facet-value')).to_have_count(len(regions))
    assert facet_counts(page, "region") == dict(regions)

    page.locator('fieldset[data-field="region"] input[data-value="Europe"]').check()
    europe = [r for r in ui_rows if r["continent"] == "Europe"]
    expect(page.locator("#status")).to_have_text(status(len(europe)))
    countries = Counter(r["country"] for r in europe)
    shown = ordered(countries)[:8]
    country_items = page.locator('fieldset[data-field="country"] li.facet-value')
    expect(country_items.locator(".value")).to_have_text(shown)
    assert facet_counts(page, "country") == {c: countries[c] for c in shown}
    # the clicked facet keeps the counts of its other values: disjunctive
    assert facet_counts(page, "region") == dict(regions)
    capitals = Counter(str(r["capital"]).lower() for r in europe)
    assert facet_counts(page, "capital") == dict(capitals)
    expect(page.locator("#chips .chip")).to_have_accessible_name("Remove filter Region: Europe")

    # a second region widens the results; the country counts follow
    page.locator('fieldset[data-field="region"] input[data-value="Africa"]').check()
    both = [r for r in ui_rows if r["continent"] in ("Europe", "Africa")]
    expect(page.locator("#status")).to_have_text(status(len(both)))
    assert facet_counts(page, "region") == dict(regions)

    # the "find" box searches all of a facet's values, within the other filters
    page.locator('fieldset[data-field="region"] input[data-value="Africa"]').uncheck()
    expect(page.locator("#status")).to_have_text(status(len(europe)))
    page.locator('input[data-facet-search="country"]').fill("an")
    matching = Counter({c: n for c, n in countries.items() if "an" in c.lower()})
    expect(country_items.locator(".value")).to_have_text(ordered(matching)[:20])
    assert facet_counts(page, "country") == {c: matching[c] for c in ordered(matching)[:20]}
    target = ordered(matching)[-1]
    page.locator(f'fieldset[data-field="country"] input[data-value="{target}"]').check()
    expect(page.locator("#status")).to_have_text(status(matching[target]))
    ids = {r["id"] for r in europe if r["country"] == target}
    hit_ids = page.locator("#hits li.hit").evaluate_all("els => els.map(e => e.dataset.id)")
    assert set(hit_ids) <= ids and len(hit_ids) == min(len(ids), PER_PAGE)
    page.screenshot(path=str(ARTIFACTS / "ui-facets.png"), full_page=True)


def test_sort_and_pagination(page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]) -> None:
    open_page(page, ui_server)
    page.locator("#sort").select_option("population:desc")
    by_population = [r["id"] for r in sorted(ui_rows, key=lambda r: -r["population"])]
    hits = page.locator("#hits li.hit")
    expect(hits.first).to_have_attribute("data-id", by_population[0])
    assert hits.evaluate_all("els => els.map(e => e.dataset.id)") == by_population[:PER_PAGE]

    page.get_by_role("button", name="Next page").click()
    expect(page.locator("#status")).to_have_text(status(len(ui_rows), page=2))
    expect(hits.first).to_have_attribute("data-id", by_population[PER_PAGE])
    assert hits.evaluate_all("els => els.map(e => e.dataset.id)") == by_population[
        PER_PAGE : 2 * PER_PAGE
    ]
    expect(page.get_by_role("button", name="Page 2")).to_have_attribute("aria-current", "page")

    page.locator("#sort").select_option("population:asc")  # a new sort starts at page 1
    ascending = by_population[::-1]
    expect(hits.first).to_have_attribute("data-id", ascending[0])
    expect(page.locator("#status")).to_have_text(status(len(ui_rows)))
    # the URL keeps the state: a reload shows the same page
    page.reload()
    expect(hits.first).to_have_attribute("data-id", ascending[0])
    expect(page.locator("#sort")).to_have_value("population:asc")


def test_histogram_and_geo_clusters(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    open_page(page, ui_server)
    bars = page.locator("#histogram g.bar")
    expect(bars.first).to_be_attached()
    keys = [float(k) for k in bars.evaluate_all("els => els.map(e => e.dataset.key)")]
    counts = [int(c) for c in bars.evaluate_all("els => els.map(e => e.dataset.count)")]
    interval = keys[1] - keys[0]
    assert all(math.isclose(b - a, interval) for a, b in itertools.pairwise(keys))
    expected = Counter(math.floor(r["population"] / interval) * interval for r in ui_rows)
    assert dict(zip(keys, counts, strict=True)) == {
        k: expected.get(k, 0) for k in keys
    }
    assert sum(counts) == len(ui_rows)

    circles = page.locator("#map circle.cluster")
    tiles = Counter(
        tile(r["location"]["lat"], r["location"]["lon"], PRECISION)
        for r in ui_rows if r.get("location")
    )
    expect(circles).to_have_count(len(tiles))
    api = ui_server.client.get("/cities/search", params={
        "perPage": 1, "geoGrid": json.dumps({"field": "location", "precision": PRECISION}),
    }).json()["geoClusters"]
    assert len(api) == len(tiles)
    drawn = dict(zip(circles.evaluate_all("els => els.map(e => e.dataset.key)"),
                     map(int, circles.evaluate_all("els => els.map(e => e.dataset.count)")),
                     strict=True))
    assert drawn == dict(tiles) == {c["key"]: c["count"] for c in api}

    # a click on the busiest tile zooms into it: hits and totals stay inside
    busiest = ordered(tiles)[0]
    busiest_circle = page.locator(f'#map circle.cluster[data-key="{busiest}"]')
    busiest_circle.focus()  # keyboard: a cluster is a button
    busiest_circle.press("Enter")
    expect(page.locator("#status")).to_have_text(status(tiles[busiest]))
    expect(page.locator("#chips .chip")).to_have_accessible_name("Remove filter Map area")
    expect(circles.first).not_to_have_attribute("data-key", re.compile(rf"^{PRECISION}/"))
    page.get_by_role("button", name="Remove filter Map area").click()
    expect(page.locator("#status")).to_have_text(status(len(ui_rows)))

    # a click on a bar filters to its range (integers: lower .. upper - 1)
    first_key, first_count = keys[0], counts[0]
    bars.first.click()
    expect(page.locator("#status")).to_have_text(status(first_count))
    inside = [r for r in ui_rows if first_key <= r["population"] < first_key + interval]
    assert len(inside) == first_count
    expect(page.locator("#chips .chip")).to_have_count(1)


def test_api_errors_are_shown_in_words(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    # a page past the result window: the API's sentence, and the last page there is instead
    page.goto(f"{ui_server.url}/ui?index=cities&page=5000")
    expected = ui_server.client.get("/cities/search", params={"page": 5000, "perPage": PER_PAGE})
    assert expected.status_code == 400
    last = math.ceil(len(ui_rows) / PER_PAGE)
    sentence = expected.json()["error"]
    expect(page.locator("#error")).to_have_text(
        f"{sentence[0].upper()}{sentence[1:]}. Showing page {last}.")
    expect(page.locator("#status")).to_have_text(status(len(ui_rows), page=last))


def test_a_key_is_asked_for_and_sent_when_one_is_configured(
    page: Page, secured: Server, rows: list[dict[str, Any]]
) -> None:
    page.goto(f"{secured.url}/ui")
    panel = page.locator("#key-panel")
    expect(panel).to_be_visible()
    expect(page.locator("#app")).to_be_hidden()
    page.locator("#key").fill("not-the-key")
    page.get_by_role("button", name="Use key").click()
    expect(page.locator("#key-error")).to_have_text(re.compile("refused"))
    page.locator("#key").fill("key-two")
    page.get_by_role("button", name="Use key").click()
    expect(panel).to_be_hidden()
    expect(page.locator("#status")).to_have_text(status(len(rows), per_page=20))
    page.locator("#q").fill("shanghai")
    expect(page.locator("#hits li.hit").first.locator("h3 mark")).to_have_text("Shanghai")
    # kept for this tab only: a reload needs no new key
    page.reload()
    expect(page.locator("#hits li.hit").first).to_be_visible()
    expect(panel).to_be_hidden()


def test_screenshot_of_a_search(page: Page, ui_server: Server) -> None:
    open_page(page, ui_server)
    page.locator("#q").press_sequentially("san", delay=30)
    expect(page.locator("#hits li.hit mark").first).to_be_visible()
    page.locator('fieldset[data-field="region"] input[data-value="South America"]').check()
    expect(page.locator("#chips .chip")).to_have_count(1)
    expect(page.locator("#histogram g.bar").first).to_be_attached()
    expect(page.locator("#map circle.cluster").first).to_be_attached()
    page.screenshot(path=str(ARTIFACTS / "ui.png"), full_page=True)
    assert (ARTIFACTS / "ui.png").stat().st_size > 10_000
