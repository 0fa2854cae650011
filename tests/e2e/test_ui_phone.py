"""The search page at phone width (390 x 844) and on a desktop (1280 x 800): the facets are
one tap away in a Filters drawer on a phone and a sidebar on a desktop; screenshots of both
are kept in ``tests/e2e/artifacts/`` (look at them after a layout change).

A real ``searchport serve`` driven in Debian's chromium; expected values come from the rows.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.e2e.conftest import Server
from tests.e2e.ui_support import (
    ARTIFACTS,
    DESKTOP,
    PHONE,
    facet_counts,
    open_page,
    require_chromium,
    status,
)

require_chromium()

from playwright.sync_api import Locator, Page, expect  # noqa: E402  (only once chromium is known to be there)

pytestmark = pytest.mark.e2e


def box(locator: Locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not laid out"
    return found


def in_first_screen(locator: Locator, viewport: dict[str, int]) -> bool:
    """Wholly inside the viewport of a page scrolled to its top."""
    area = box(locator)
    return (area["x"] >= 0 and area["y"] >= 0 and area["x"] + area["width"] <= viewport["width"]
            and area["y"] + area["height"] <= viewport["height"])


def settled(page: Page) -> None:
    """Wait for the drawer's slide to end."""
    page.wait_for_function("() => document.querySelector('#filters').getAnimations().length === 0")


def screenshot(page: Page, name: str) -> None:
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000  # a picture of something, not a blank page


def test_phone_filters_are_a_tap_away(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    page.set_viewport_size(PHONE)
    open_page(page, ui_server)
    assert page.evaluate("window.scrollY") == 0
    opener = page.get_by_role("button", name="Filters")
    expect(opener).to_be_visible()
    assert in_first_screen(opener, PHONE)
    expect(opener).to_have_attribute("aria-expanded", "false")
    # the results come first: the facets wait in the closed drawer, not above or below them
    drawer = page.locator("#filters")
    expect(drawer).to_be_hidden()
    assert in_first_screen(page.locator("#hits li.hit").first, PHONE)
    assert box(page.locator("#hits")).get("x") == box(page.locator("#status"))["x"]
    screenshot(page, "ui-phone.png")

    opener.click()
    expect(drawer).to_be_visible()
    settled(page)
    expect(opener).to_have_attribute("aria-expanded", "true")
    regions = Counter(r["continent"] for r in ui_rows)
    assert facet_counts(page, "region") == dict(regions)
    europe = drawer.locator('fieldset[data-field="region"] input[data-value="Europe"]')
    expect(europe).to_be_visible()
    assert in_first_screen(europe, PHONE)
    assert in_first_screen(drawer.locator('fieldset[data-field="region"] .count').first, PHONE)
    closer = page.get_by_role("button", name=f"Show {len(ui_rows)} results")
    expect(closer).to_be_focused()
    assert in_first_screen(closer, PHONE)
    screenshot(page, "ui-phone-filters.png")

    # a choice in the drawer searches at once; the close button says how many it found; the
    # checkbox keeps the focus though the lists are drawn anew
    europe.focus()
    page.keyboard.press("Space")
    in_europe = regions["Europe"]
    expect(page.get_by_role("button", name=f"Show {in_europe} results")).to_be_visible()
    expect(drawer.locator("#chips .chip")).to_have_accessible_name("Remove filter Region: Europe")
    expect(europe).to_be_checked()
    expect(europe).to_be_focused()
    screenshot(page, "ui-phone-filters-chosen.png")
    page.get_by_role("button", name=f"Show {in_europe} results").click()
    expect(drawer).to_be_hidden()
    expect(page.locator("#status")).to_have_text(status(in_europe))
    expect(page.get_by_role("button", name="Filters (1)")).to_be_focused()

    # Escape and a tap beside the drawer close it too
    for close in (lambda: page.keyboard.press("Escape"),
                  lambda: page.mouse.click(PHONE["width"] - 10, PHONE["height"] // 2)):
        page.get_by_role("button", name="Filters (1)").click()
        expect(drawer).to_be_visible()
        close()
        expect(drawer).to_be_hidden()
        expect(page.get_by_role("button", name="Filters (1)")).to_have_attribute(
            "aria-expanded", "false")


def test_desktop_keeps_the_sidebar_beside_the_results(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    page.set_viewport_size(DESKTOP)
    open_page(page, ui_server)
    sidebar = page.locator("#filters")
    expect(sidebar).to_be_visible()
    expect(page.locator("#filters-open")).to_be_hidden()
    expect(page.locator("#filters .drawer-head")).to_be_hidden()
    side, results = box(sidebar), box(page.locator(".results"))
    assert side["x"] + side["width"] <= results["x"]  # left of the results, not above or below
    assert abs(side["y"] - results["y"]) < 1
    assert facet_counts(page, "region") == dict(Counter(r["continent"] for r in ui_rows))
    assert in_first_screen(page.locator('fieldset[data-field="region"]'), DESKTOP)
    assert in_first_screen(page.locator("#hits li.hit").first, DESKTOP)
    screenshot(page, "ui-desktop.png")


def test_the_key_prompt_fits_a_phone(page: Page, secured: Server) -> None:
    page.set_viewport_size(PHONE)
    page.goto(f"{secured.url}/ui")
    key = page.get_by_label("API key")
    expect(key).to_be_focused()
    assert in_first_screen(key, PHONE)
    assert in_first_screen(page.get_by_role("button", name="Use key"), PHONE)
    expect(page.get_by_role("button", name="Filters")).to_be_hidden()
    screenshot(page, "ui-phone-key.png")
