"""The search page as a new user meets it: a link with only ``?q=``, a link holding a whole
search (docs/search-page.md's URL format), values named alike everywhere, and the key prompt.

A real ``searchport serve`` driven in Debian's chromium; expected values come from the rows.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from tests.e2e.conftest import Server
from tests.e2e.ui_support import (
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


def url_params(page: Page) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(page.evaluate("location.href")).query)


def hit_ids(page: Page) -> list[str]:
    return page.locator("#hits li.hit").evaluate_all("els => els.map(e => e.dataset.id)")


def hit_populations(page: Page, rows: list[dict[str, Any]]) -> list[int]:
    by_id = {r["id"]: r["population"] for r in rows}
    return [by_id[i] for i in hit_ids(page)]


def test_a_link_with_only_words_searches_the_first_handle(
    page: Page, ui_server: Server
) -> None:
    open_page(page, ui_server, "?q=zzyzx")
    expect(page.locator("#status")).to_have_text(status(1))
    expect(page.locator("#hits li.hit")).to_have_attribute("data-id", HOSTILE["id"])
    expect(page.locator("#q")).to_have_value("zzyzx")
    expect(page.locator("#handle")).to_have_value("cities")
    # the URL now names the handle too, so the link keeps working if handles are added
    assert url_params(page) == [("index", "cities"), ("q", "zzyzx")]


def test_a_link_to_a_handle_not_served_keeps_its_words(page: Page, ui_server: Server) -> None:
    open_page(page, ui_server, "?index=nowhere&q=zzyzx&f.nowhereField=x")
    expect(page.locator("#status")).to_have_text(status(1))
    assert url_params(page) == [("index", "cities"), ("q", "zzyzx")]


def test_a_link_holds_the_whole_search(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    """Words, facet values, a range, a sort and a page, written as docs/search-page.md says."""
    regions = ["Europe", "Africa"]
    low, high = 100_000, 2_000_000
    query = urlencode([
        ("index", "cities"), ("sort", "population:desc"), ("f.region", regions[0]),
        ("f.region", regions[1]), ("range.population", f"{low}..{high}"), ("page", "2"),
    ])
    matching = sorted(
        (r for r in ui_rows if r["continent"] in regions and low <= r["population"] <= high),
        key=lambda r: -r["population"],
    )
    assert len(matching) > PER_PAGE
    open_page(page, ui_server, f"?{query}")
    expect(page.locator("#status")).to_have_text(status(len(matching), page=2))
    second_page = [r["population"] for r in matching[PER_PAGE : 2 * PER_PAGE]]
    assert hit_populations(page, ui_rows) == second_page
    expect(page.locator("#sort")).to_have_value("population:desc")
    for region in regions:
        box = page.locator(f'fieldset[data-field="region"] input[data-value="{region}"]')
        expect(box).to_be_checked()
    chips = page.locator("#chips .chip")
    expect(chips).to_have_count(3)
    expect(chips.nth(2)).to_have_accessible_name(
        f"Remove filter Population: {low:,} \N{EN DASH} {high:,}")
    expect(page.get_by_role("button", name="Page 2")).to_have_attribute("aria-current", "page")

    # the page writes back the same link; words typed then keep the filters and the sort
    assert sorted(url_params(page)) == sorted(parse_qsl(query))
    page.locator("#q").fill("b")
    expect(page.locator("#status")).not_to_have_text(status(len(matching), page=2))
    expected = sorted([*parse_qsl(query)[:-1], ("q", "b")])  # a new search starts at page 1
    assert sorted(url_params(page)) == expected
    assert set(hit_ids(page)) <= {r["id"] for r in matching}


def test_a_link_can_leave_a_range_open(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    open_page(page, ui_server, "?range.population=1000000..&sort=population:asc")
    big = sorted(r["population"] for r in ui_rows if r["population"] >= 1_000_000)
    expect(page.locator("#status")).to_have_text(status(len(big)))
    expect(page.locator("#chips .chip")).to_have_accessible_name(
        "Remove filter Population: \N{GREATER-THAN OR EQUAL TO} 1,000,000")
    assert hit_populations(page, ui_rows) == big[:PER_PAGE]
    # written back as it was given: readable, not percent-encoded
    query = page.evaluate("location.search")
    assert query == "?index=cities&sort=population:asc&range.population=1000000.."


def test_a_link_can_name_the_map_area(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    tiles = Counter(
        tile(r["location"]["lat"], r["location"]["lon"], 4) for r in ui_rows if r.get("location")
    )
    busiest = ordered(tiles)[0]
    open_page(page, ui_server, f"?area={busiest}")
    expect(page.locator("#status")).to_have_text(status(tiles[busiest]))
    expect(page.locator("#chips .chip")).to_have_accessible_name("Remove filter Map area")
    # a click on a cluster writes its tile; that URL, opened anew, shows the same results
    page.get_by_role("button", name="Remove filter Map area").click()
    expect(page.locator("#status")).to_have_text(status(len(ui_rows)))
    page.locator(f'#map circle.cluster[data-key="{busiest}"]').dispatch_event("click")
    expect(page.locator("#status")).to_have_text(status(tiles[busiest]))
    assert ("area", busiest) in url_params(page)


def test_back_undoes_a_step_of_the_search(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    open_page(page, ui_server)
    europe_box = page.locator('fieldset[data-field="region"] input[data-value="Europe"]')
    europe = [r for r in ui_rows if r["continent"] == "Europe"]
    europe_box.check()
    expect(page.locator("#status")).to_have_text(status(len(europe)))
    page.locator("#sort").select_option("population:desc")
    expect(page.locator("#hits li.hit").first).to_have_attribute(
        "data-id", max(europe, key=lambda r: r["population"])["id"])
    page.locator("#q").press_sequentially("zzy", delay=30)  # one step for the words, however typed
    expect(page.locator("#status")).to_have_text(status(0))

    page.go_back()
    expect(page.locator("#q")).to_have_value("")
    expect(page.locator("#status")).to_have_text(status(len(europe)))
    expect(page.locator("#sort")).to_have_value("population:desc")
    page.go_back()
    expect(page.locator("#sort")).to_have_value("")
    expect(europe_box).to_be_checked()
    page.go_back()
    expect(page.locator("#status")).to_have_text(status(len(ui_rows)))
    expect(europe_box).not_to_be_checked()
    assert url_params(page) == [("index", "cities")]
    page.go_forward()
    expect(page.locator("#status")).to_have_text(status(len(europe)))
    expect(europe_box).to_be_checked()


def test_values_are_named_alike_in_the_facets_the_chips_and_the_results(
    page: Page, ui_server: Server, ui_rows: list[dict[str, Any]]
) -> None:
    open_page(page, ui_server)
    capitals = Counter("true" if r["capital"] else "false" for r in ui_rows)
    assert facet_counts(page, "capital") == dict(capitals)
    box = page.locator('fieldset[data-field="capital"]')
    expect(box.locator('input[data-value="true"] + label .value')).to_have_text("yes")
    expect(box.locator('input[data-value="false"] + label .value')).to_have_text("no")

    box.locator('input[data-value="true"]').check()
    expect(page.locator("#status")).to_have_text(status(capitals["true"]))
    expect(page.locator("#chips .chip")).to_have_accessible_name("Remove filter Capital: yes")
    expect(page.locator("#chips .chip")).to_contain_text("Capital: yes")
    assert ("f.capital", "true") in url_params(page)
    # the result's own fields say it the same way
    first = page.locator("#hits li.hit").first
    first.locator("details.all-fields summary").click()
    row = first.locator("tr", has=page.locator("th", has_text="capital"))
    expect(row.locator("td")).to_have_text("yes")


def test_a_key_is_asked_for_before_anything_else(
    page: Page, secured: Server, rows: list[dict[str, Any]]
) -> None:
    page.goto(f"{secured.url}/ui?q=shanghai")
    expect(page.get_by_role("heading", name="This service needs a key")).to_be_visible()
    expect(page.get_by_label("API key")).to_be_focused()
    # no empty handle list or search box while no handle can be known
    expect(page.locator("#handle")).to_be_hidden()
    expect(page.locator("#q")).to_be_hidden()
    expect(page.get_by_role("button", name="Forget key")).to_be_hidden()

    page.get_by_label("API key").fill("not-the-key")
    page.get_by_role("button", name="Use key").click()
    expect(page.locator("#key-error")).to_have_text("That key was refused: check it and try again.")
    expect(page.locator("#handle")).to_be_hidden()

    page.get_by_label("API key").fill("key-one")
    page.get_by_role("button", name="Use key").click()
    expect(page.locator("#key-panel")).to_be_hidden()
    expect(page.locator("#handle")).to_be_visible()
    expect(page.locator("#handle option")).to_have_text(["cities"])
    # the link's words survive the prompt
    expect(page.locator("#q")).to_have_value("shanghai")
    shanghai = [r for r in rows if re.search(r"\bshanghai\b", r["name"].lower())]
    expect(page.locator("#hits li.hit").first.locator("h3 mark")).to_have_text("Shanghai")
    assert len(shanghai) >= 1
    # the header's key button brings the prompt back; "Forget key" drops the stored key
    page.get_by_role("button", name="API key", exact=True).click()
    expect(page.locator("#key-panel")).to_be_visible()
    expect(page.locator("#handle")).to_be_hidden()
    page.get_by_role("button", name="Forget key").click()
    assert page.evaluate("sessionStorage.length") == 0
    expect(page.get_by_role("button", name="Forget key")).to_be_hidden()
    expect(page.get_by_label("API key")).to_be_focused()
    page.get_by_label("API key").fill("key-one")
    page.get_by_role("button", name="Use key").click()
    expect(page.locator("#handle")).to_be_visible()
    expect(page.get_by_role("button", name="API key", exact=True)).to_be_visible()
    page.evaluate("sessionStorage.clear()")
