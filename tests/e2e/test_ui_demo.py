"""The search page on the built-in demo, as a new user meets it after README's first command:
its five handles (the longest name, ``cities_query_suggestions``, sets the width of the
handle list), its 34,006 cities and its config's facets, at phone width (390 x 844) and on
a desktop (1280 x 900). Screenshots are kept in ``tests/e2e/artifacts/`` (look at them after
a layout change).

A real ``searchport serve`` of the demo's own config driven in Debian's chromium; expected
values come from the demo's rows.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from searchport import demo
from tests.e2e.conftest import Server
from tests.e2e.ui_support import ARTIFACTS, require_chromium

require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402  (only once chromium is known to be there)

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
DEMO_TEXT = demo.config_text(semantic=False)
DEMO = yaml.safe_load(DEMO_TEXT.replace("${PORT:-3000}", "3000"))["indexes"]


@pytest.fixture(scope="module")
def demo_server(server_factory: Callable[..., Server]) -> Server:
    return server_factory(DEMO_TEXT)


@pytest.fixture(scope="module")
def demo_rows() -> list[dict[str, Any]]:
    with gzip.open(demo.SOURCE, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def screenshot(page: Page, name: str) -> None:
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000  # a picture of something, not a blank page


def open_demo(page: Page, server: Server, viewport: dict[str, int], query: str = "") -> None:
    page.set_viewport_size(viewport)
    page.goto(f"{server.url}/ui{query}")
    expect(page.locator("#hits li.hit").first).to_be_visible()
    expect(page.locator("#progress")).not_to_have_class(re.compile(r"\bon\b"))


def overflowing(page: Page) -> list[str]:
    """Elements reaching past the window's right edge, and the page's own overflow."""
    found: list[str] = page.evaluate("""() => {
      const width = document.documentElement.clientWidth, found = [];
      if (document.documentElement.scrollWidth > width) found.push("the page scrolls sideways");
      const parts = "header *, .toolbar *, #hits *, #pagination *";
      for (const node of document.querySelectorAll(parts)) {
        const box = node.getBoundingClientRect();
        if (box.width && box.right > width + 0.5) found.push(node.outerHTML.slice(0, 80));
      }
      return found;
    }""")
    return found


def placeholder_room(page: Page) -> tuple[float, float]:
    """The width the query field's placeholder needs, and the width it has."""
    needed, room = page.locator("#q").evaluate("""(input) => {
      const style = getComputedStyle(input);
      const context = document.createElement("canvas").getContext("2d");
      context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
      return [context.measureText(input.placeholder).width, input.clientWidth - padding];
    }""")
    return needed, room


def repeated_facts(page: Page) -> list[list[str]]:
    """The values each result card shows under its title, where one is said twice."""
    cards: list[list[str]] = page.locator("#hits li.hit .facts").evaluate_all(
        "els => els.map(e => [...e.querySelectorAll('.fact, .badge')].map(f => f.textContent))")
    return [facts for facts in cards if len(set(facts)) < len(facts)]


def test_on_a_phone_the_query_field_has_the_row(page: Page, demo_server: Server) -> None:
    open_demo(page, demo_server, PHONE)
    handles = page.locator("#handle")
    expect(handles).to_be_visible()
    expect(handles.locator("option")).to_have_count(len(DEMO))
    query, brand = page.locator("#q").bounding_box(), page.locator(".brand").bounding_box()
    listed = handles.bounding_box()
    assert query and brand and listed
    # the handle list shares the brand's row; the query field has a row of its own, whole
    assert listed["y"] + listed["height"] <= query["y"]
    assert abs((listed["y"] + listed["height"] / 2) - (brand["y"] + brand["height"] / 2)) < 2
    assert query["width"] >= PHONE["width"] - 2 * 14 - 2 * 18
    needed, room = placeholder_room(page)
    assert page.locator("#q").get_attribute("placeholder") == "Search cities…"
    assert needed <= room
    assert overflowing(page) == []
    assert repeated_facts(page) == []
    screenshot(page, "ui-demo-phone.png")

    page.get_by_role("button", name="Filters").click()
    expect(page.locator("#filters")).to_be_visible()
    page.wait_for_function("() => document.querySelector('#filters').getAnimations().length === 0")
    assert overflowing(page) == []
    screenshot(page, "ui-demo-phone-filters.png")


def test_on_a_desktop_the_facets_are_those_a_person_reads(
    page: Page, demo_server: Server, demo_rows: list[dict[str, Any]]
) -> None:
    open_demo(page, demo_server, DESKTOP)
    legends = page.locator("#facets legend").all_inner_texts()
    assert [legend.lower() for legend in legends] == DEMO["cities"]["defaults"]["facets"]
    assert "lvl0" not in [legend.lower() for legend in legends]
    regions = Counter(r["continent"] for r in demo_rows)
    region_values = page.locator('fieldset[data-field="region"] li.facet-value .value')
    expect(region_values).to_have_text(sorted(regions, key=lambda v: (-regions[v], v)))
    assert repeated_facts(page) == []
    query = page.locator("#q").bounding_box()
    assert query and query["width"] >= 500
    assert overflowing(page) == []
    screenshot(page, "ui-demo-desktop.png")


def test_the_page_count_and_the_pager_stop_at_the_result_window(
    page: Page, demo_server: Server, demo_rows: list[dict[str, Any]]
) -> None:
    per_page = DEMO["cities"]["defaults"]["perPage"]
    window = DEMO["cities"]["maxResultWindow"]
    last = min(math.ceil(len(demo_rows) / per_page), window // per_page)
    assert last < math.ceil(len(demo_rows) / per_page)  # the window, not the matches, ends it
    open_demo(page, demo_server, DESKTOP)
    expect(page.locator("#status")).to_have_text(
        re.compile(rf"^{len(demo_rows):,} results · page 1 of {last:,} · "))
    expect(page.locator("#pagination .page").nth(-2)).to_have_accessible_name(f"Page {last}")

    # a link to a page past the window shows the last page and says why
    open_demo(page, demo_server, DESKTOP, "?page=600")
    expect(page.locator("#status")).to_have_text(
        re.compile(rf"^{len(demo_rows):,} results · page {last} of {last} · "))
    expect(page.locator("#error")).to_have_text(
        f"Page 600 is past the last page, {last}: with perPage {per_page}, only the first "
        f"{window:,} results can be fetched (the handle's result window). Showing page {last}.")
    assert re.search(rf"[?&]page={last}(&|$)", page.url)
    expect(page.locator('#pagination .page[aria-current="page"]')).to_have_text(f"{last}")
    expect(page.get_by_role("button", name="Next page")).to_be_disabled()
    screenshot(page, "ui-demo-last-page.png")

    # so does one past the last page of a search's own matches
    antarctica = sum(1 for r in demo_rows if r["continent"] == "Antarctica")
    pages = math.ceil(antarctica / per_page)
    assert 0 < pages < 3
    open_demo(page, demo_server, DESKTOP, "?f.region=Antarctica&page=3")
    expect(page.locator("#hits li.hit")).to_have_count(antarctica - (pages - 1) * per_page)
    expect(page.locator("#error")).to_have_text(
        f"Page 3 is past the last page, {pages}. Showing page {pages}.")
