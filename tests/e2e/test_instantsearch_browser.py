"""The stock ``algoliasearch`` lite client and InstantSearch.js widgets against a real
``searchport serve``, in Debian's Chromium.

The page (``tests/e2e/instantsearch/``) loads the npm packages' browser builds from its
``node_modules`` (installed by the ``npm_project`` fixture) and is served by a small HTTP
server of the test on another port than searchport's: a cross-origin page, as in
production, allowed by ``corsOrigins``. Without chromium, node or npm the module is skipped,
except in CI (env ``CI`` set), where that is a failure. Expected values are computed from
the fixture rows (``region`` is the alias of the rows' ``continent``).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, sample_config
from tests.e2e.ui_support import served_folder

CHROMIUM = Path("/usr/bin/chromium")
BUILDS = (
    "node_modules/algoliasearch/dist/lite/builds/browser.umd.js",
    "node_modules/instantsearch.js/dist/instantsearch.production.min.js",
)
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
]
PER_PAGE = 10  # the page's configure({hitsPerPage})
LIST_LIMIT = 10  # refinementList's default limit
API_KEY = "instantsearch-key"

if not CHROMIUM.exists():
    if os.environ.get("CI"):
        pytest.fail("Debian's chromium is missing: .ci/run installs it", pytrace=False)
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)",
                allow_module_level=True)

from playwright.sync_api import (  # noqa: E402  (only once chromium is known to be there)
    Browser,
    Page,
    expect,
    sync_playwright,
)

pytestmark = pytest.mark.e2e
Row = dict[str, Any]


# --- what the page should show, from the rows -------------------------------------------

def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def matches(row: Row, word: str) -> bool:
    """searchport's text match of a one-word query on this handle: a word of ``name`` or
    ``alternateNames`` starting with it (the last word is also a prefix), or the whole
    ``country`` value (a searchable keyword), case and accents folded."""
    texts = [row["name"], *row.get("alternateNames", [])]
    words = [w for text in texts for w in re.findall(r"[^\W_]+", fold(text))]
    return any(w.startswith(fold(word)) for w in words) or fold(row["country"]) == fold(word)


def stats_text(total: int) -> re.Pattern[str]:
    """The stats widget's default text."""
    text = "No results" if total == 0 else f"{total:,} result{'' if total == 1 else 's'}"
    return re.compile("^" + re.escape(text) + r" found in \d+ms$")


def list_items(counts: Counter[str], refined: tuple[str, ...] = ()) -> list[str]:
    """A refinementList's items as its labels read (value then count): the engine gives the
    top ``LIST_LIMIT`` values by count (ties by value), InstantSearch adds the refined ones
    and shows the first ``LIST_LIMIT``: refined first, then by count, then by name."""
    top = sorted(counts, key=lambda v: (-counts[v], v))[:LIST_LIMIT]
    shown = [*[v for v in refined if v not in top], *top]
    shown.sort(key=lambda v: (v not in refined, -counts[v], v))
    return [f"{value}{counts[value]}" for value in shown[:LIST_LIMIT]]


# --- the page, the servers and the browser -----------------------------------------------

@pytest.fixture(scope="module")
def page_origin(npm_project: Path) -> Iterator[str]:
    """The test page and its node_modules, on 127.0.0.1 at a port of its own."""
    missing = [build for build in BUILDS if not (npm_project / build).is_file()]
    assert missing == [], f"npm ci did not install the page's browser builds: {missing}"
    with served_folder(npm_project, "instantsearch-page") as origin:
        yield origin


@pytest.fixture(scope="module")
def open_server(server_factory: Callable[..., Server], page_origin: str) -> Server:
    return server_factory(sample_config(extra_top=f'corsOrigins: ["{page_origin}"]'))


@pytest.fixture(scope="module")
def key_server(server_factory: Callable[..., Server], page_origin: str) -> Server:
    return server_factory(
        sample_config(extra_top=f'apiKey: "{API_KEY}"\ncorsOrigins: ["{page_origin}"]')
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    context.close()
    assert errors == []


def open_page(page: Page, origin: str, server: Server, total: int, **settings: str) -> None:
    query = "&".join(
        f"{k}={v}" for k, v in {
            "host": server.url.removeprefix("http://"), "index": "cities", **settings,
        }.items()
    )
    page.goto(f"{origin}/index.html?{query}")
    expect(page.locator("#stats .ais-Stats-text")).to_have_text(stats_text(total))


def hit_ids(page: Page) -> list[str]:
    ids: list[str] = page.locator("#hits article.hit").evaluate_all(
        "els => els.map(e => e.dataset.id)"
    )
    return ids


def toggle(page: Page, widget: str, value: str) -> None:
    """A click on a refinementList checkbox (the widget, not the click, owns its state)."""
    page.locator(f'{widget} input.ais-RefinementList-checkbox[value="{value}"]').click()


def show_page(page: Page, name: str, number: int) -> list[str]:
    """Click a pagination link and wait for that page's hits (InstantSearch's __position)."""
    page.get_by_role("link", name=name, exact=True).click()
    expect(page.locator(".ais-Pagination-item--selected")).to_have_text(str(number))
    expect(page.locator("#hits article.hit").first).to_have_attribute(
        "data-position", str((number - 1) * PER_PAGE + 1)
    )
    return hit_ids(page)


def search_for(page: Page, text: str) -> None:
    page.locator("#searchbox input.ais-SearchBox-input").fill(text)


REGION = "#region .ais-RefinementList-item"
COUNTRY = "#country .ais-RefinementList-item"
STATS = "#stats .ais-Stats-text"


# --- the tests --------------------------------------------------------------------------

def test_search_box_shows_the_matching_hits_highlighted_with_mark(
    page: Page, page_origin: str, open_server: Server, rows: list[Row]
) -> None:
    open_page(page, page_origin, open_server, len(rows))
    expect(page.locator("#hits article.hit")).to_have_count(PER_PAGE)

    search_for(page, "shanghai")
    expected = [r for r in rows if matches(r, "shanghai")]
    expect(page.locator(STATS)).to_have_text(stats_text(len(expected)))
    assert sorted(hit_ids(page)) == sorted(r["id"] for r in expected)
    first = page.locator("#hits article.hit").first
    expect(first).to_have_attribute("data-id", next(r["id"] for r in rows
                                                    if r["name"] == "Shanghai"))
    expect(first.locator("h3 mark.ais-Highlight-highlighted")).to_have_text("Shanghai")

    # a prefix of the last word: several pages of hits, every mark a highlighted match
    search_for(page, "san")
    san = [r for r in rows if matches(r, "san")]
    assert len(san) > PER_PAGE
    expect(page.locator(STATS)).to_have_text(stats_text(len(san)))
    assert set(hit_ids(page)) <= {r["id"] for r in san} and len(hit_ids(page)) == PER_PAGE
    marks = page.locator("#hits mark")
    expect(marks.first).to_be_visible()
    assert all(fold(text).startswith("san") for text in marks.all_inner_texts())
    assert marks.evaluate_all(
        "els => els.every(e => e.className === 'ais-Highlight-highlighted'"
        " && e.children.length === 0)"
    )

    # markup-like text in a record is shown as text; the record's own objectID does not win
    search_for(page, "fort")
    fort = [r for r in rows if matches(r, "fort")]
    expect(page.locator(STATS)).to_have_text(stats_text(len(fort)))
    assert [r["objectID"] for r in fort if "objectID" in r] == ["spoofed"]
    assert hit_ids(page) == [r["id"] for r in fort]
    title = page.locator("#hits article.hit h3")
    expect(title).to_have_text(fort[0]["name"])
    expect(title.locator("mark.ais-Highlight-highlighted")).to_have_text("Fort")
    assert page.locator("#hits script").count() == 0


def test_refinement_lists_are_disjunctive_within_a_list_and_narrow_the_others(
    page: Page, page_origin: str, open_server: Server, rows: list[Row]
) -> None:
    open_page(page, page_origin, open_server, len(rows))
    regions = Counter(r["continent"] for r in rows)
    countries = Counter(r["country"] for r in rows)
    expect(page.locator(REGION)).to_have_text(list_items(regions))
    expect(page.locator(COUNTRY)).to_have_text(list_items(countries))

    toggle(page, "#region", "Europe")
    europe = [r for r in rows if r["continent"] == "Europe"]
    expect(page.locator(STATS)).to_have_text(stats_text(len(europe)))
    # the other regions keep their counts (InstantSearch's extra query without the region
    # filter); the countries narrow to Europe's
    expect(page.locator(REGION)).to_have_text(list_items(regions, ("Europe",)))
    european = Counter(r["country"] for r in europe)
    expect(page.locator(COUNTRY)).to_have_text(list_items(european))
    expect(page.locator('#region input[value="Europe"]')).to_be_checked()
    shown = hit_ids(page)
    assert set(shown) <= {r["id"] for r in europe} and len(shown) == PER_PAGE

    # a second region: an OR within the list; the countries widen to both
    toggle(page, "#region", "Oceania")
    both = [r for r in rows if r["continent"] in ("Europe", "Oceania")]
    expect(page.locator(STATS)).to_have_text(stats_text(len(both)))
    expect(page.locator(REGION)).to_have_text(list_items(regions, ("Europe", "Oceania")))
    expect(page.locator(COUNTRY)).to_have_text(list_items(Counter(r["country"] for r in both)))

    # a country: the region list narrows to that country's rows, the countries keep theirs
    toggle(page, "#region", "Oceania")
    expect(page.locator(STATS)).to_have_text(stats_text(len(europe)))
    country = sorted(european, key=lambda c: (-european[c], c))[0]
    toggle(page, "#country", country)
    chosen = [r for r in europe if r["country"] == country]
    expect(page.locator(STATS)).to_have_text(stats_text(len(chosen)))
    expect(page.locator(COUNTRY)).to_have_text(list_items(european, (country,)))
    in_country = Counter(r["continent"] for r in rows if r["country"] == country)
    expect(page.locator(REGION)).to_have_text(list_items(in_country, ("Europe",)))
    assert sorted(hit_ids(page)) == sorted(r["id"] for r in chosen)


def test_searchable_refinement_list_finds_values_by_part_of_them(
    page: Page, page_origin: str, open_server: Server, rows: list[Row]
) -> None:
    open_page(page, page_origin, open_server, len(rows))
    countries = Counter(r["country"] for r in rows)
    part = "king"  # inside a value, also a word's start (Algolia's own rule)
    found = Counter({c: n for c, n in countries.items() if part in c.lower()})
    assert found and not set(found) & set(sorted(countries, key=lambda c: -countries[c])[:10])
    page.locator("#country input.ais-SearchBox-input").fill(part)
    expect(page.locator(COUNTRY)).to_have_text(list_items(found))
    expect(page.locator("#country .ais-RefinementList-labelText mark").first).to_have_text(
        re.compile(part, re.IGNORECASE)
    )

    value = sorted(found)[0]
    toggle(page, "#country", value)
    chosen = [r for r in rows if r["country"] == value]
    expect(page.locator(STATS)).to_have_text(stats_text(len(chosen)))
    assert sorted(hit_ids(page)) == sorted(r["id"] for r in chosen)
    # the value search ends with the choice; the list is back to the top values
    expect(page.locator(COUNTRY)).to_have_text(list_items(countries, (value,)))

    # within a query: only the values of the matching rows, with their counts there
    toggle(page, "#country", value)
    search_for(page, "san")
    san = [r for r in rows if matches(r, "san")]
    expect(page.locator(STATS)).to_have_text(stats_text(len(san)))
    page.locator("#country input.ais-SearchBox-input").fill("a")
    in_san = Counter(r["country"] for r in san if "a" in r["country"].lower())
    expect(page.locator(COUNTRY)).to_have_text(list_items(in_san))


def test_range_widgets_show_facets_stats_and_narrow_the_hits(
    page: Page, page_origin: str, open_server: Server, rows: list[Row]
) -> None:
    open_page(page, page_origin, open_server, len(rows))
    lower = page.locator("#population-slider .rheostat-handle-lower")
    upper = page.locator("#population-slider .rheostat-handle-upper")
    # over the whole index, nothing selected: facets_stats come from the engine's stats, so
    # the bounds are the rows' extremes however many distinct populations there are
    everywhere = sorted(r["population"] for r in rows)
    assert len(set(everywhere)) >= 100  # more values than a facet answer holds
    for handle, now in ((lower, everywhere[0]), (upper, everywhere[-1])):
        expect(handle).to_have_attribute("aria-valuemin", str(everywhere[0]))
        expect(handle).to_have_attribute("aria-valuemax", str(everywhere[-1]))
        expect(handle).to_have_attribute("aria-valuenow", str(now))

    # within a region, the bounds are the region's
    region = "South America"
    inside = [r for r in rows if r["continent"] == region]
    populations = sorted(r["population"] for r in inside)
    assert len(set(populations)) < 100  # a region small enough to hold every value
    toggle(page, "#region", region)
    expect(page.locator(STATS)).to_have_text(stats_text(len(inside)))

    low, high = populations[0], populations[-1]
    assert (low, high) != (everywhere[0], everywhere[-1])
    expect(page.locator("#population-slider .ais-RangeSlider")).not_to_have_class(
        re.compile("disabled")
    )
    for handle, now in ((lower, low), (upper, high)):
        expect(handle).to_have_attribute("aria-valuemin", str(low))
        expect(handle).to_have_attribute("aria-valuemax", str(high))
        expect(handle).to_have_attribute("aria-valuenow", str(now))
    expect(page.locator("#population-slider .rheostat-tooltip")).to_have_text(
        [str(low), str(high)]
    )
    min_input = page.locator("#population-input input.ais-RangeInput-input--min")
    max_input = page.locator("#population-input input.ais-RangeInput-input--max")
    for box in (min_input, max_input):
        expect(box).to_have_attribute("min", str(low))
        expect(box).to_have_attribute("max", str(high))
    expect(min_input).to_have_attribute("placeholder", str(low))
    expect(max_input).to_have_attribute("placeholder", str(high))

    # bounds that are populations of rows: both ends included
    start, end = populations[len(populations) // 4], populations[3 * len(populations) // 4]
    min_input.fill(str(start))
    max_input.fill(str(end))
    page.locator("#population-input button.ais-RangeInput-submit").click()
    within = [r for r in inside if start <= r["population"] <= end]
    assert 0 < len(within) < len(inside)
    expect(page.locator(STATS)).to_have_text(stats_text(len(within)))
    assert set(hit_ids(page)) <= {r["id"] for r in within}
    assert len(hit_ids(page)) == min(PER_PAGE, len(within))
    # the slider follows; its bounds stay those of the region (the range's own query)
    expect(lower).to_have_attribute("aria-valuenow", str(start))
    expect(upper).to_have_attribute("aria-valuenow", str(end))
    expect(upper).to_have_attribute("aria-valuemax", str(high))
    expect(lower).to_have_attribute("aria-valuemin", str(low))
    # and the region list counts the rows inside the range
    expect(page.locator(REGION)).to_have_text(
        list_items(Counter(r["continent"] for r in rows if start <= r["population"] <= end),
                   (region,))
    )

    # the keyboard takes the upper handle to the end: every row from the lower bound up
    upper.focus()
    upper.press("End")
    rest = [r for r in inside if r["population"] >= start]
    assert len(rest) > len(within)
    expect(page.locator(STATS)).to_have_text(stats_text(len(rest)))
    expect(upper).to_have_attribute("aria-valuenow", str(high))


def test_pagination_walks_every_hit_once(
    page: Page, page_origin: str, open_server: Server, rows: list[Row]
) -> None:
    open_page(page, page_origin, open_server, len(rows))
    search_for(page, "san")
    expected = {r["id"] for r in rows if matches(r, "san")}
    pages = -(-len(expected) // PER_PAGE)
    assert pages >= 3
    expect(page.locator(STATS)).to_have_text(stats_text(len(expected)))
    expect(page.locator(".ais-Pagination-item--page")).to_have_count(pages)
    expect(page.locator(".ais-Pagination-item--selected")).to_have_text("1")
    seen = [hit_ids(page)]

    seen.append(show_page(page, "Next Page", 2))
    seen.append(show_page(page, f"Last Page, Page {pages}", pages))
    seen.extend(show_page(page, f"Page {number}", number) for number in range(3, pages))

    assert [len(ids) for ids in seen] == [
        *[PER_PAGE] * 2, len(expected) - (pages - 1) * PER_PAGE, *[PER_PAGE] * (pages - 3)
    ]
    flat = [i for ids in seen for i in ids]
    assert len(flat) == len(set(flat)) and set(flat) == expected
    # back to page 1: the same first page
    assert show_page(page, "First Page", 1) == seen[0]


@pytest.mark.parametrize("auth_mode", ["WithinQueryParameters", "WithinHeaders"])
def test_the_client_api_key_is_the_token(
    page: Page, page_origin: str, key_server: Server, rows: list[Row], auth_mode: str
) -> None:
    # in headers the key makes the browser ask CORS first (x-algolia-* headers allowed)
    sent: list[tuple[str, str, str | None]] = []
    page.on("request", lambda r: sent.append((r.method, r.url, r.headers.get("x-algolia-api-key")))
            if r.url.startswith(key_server.url) else None)
    open_page(page, page_origin, key_server, len(rows), apiKey=API_KEY, authMode=auth_mode)
    in_url = f"x-algolia-api-key={API_KEY}"
    assert sent and all(method == "POST" for method, _, _ in sent)
    if auth_mode == "WithinHeaders":
        assert all(key == API_KEY and in_url not in url for _, url, key in sent)
    else:
        assert all(key is None and in_url in url for _, url, key in sent)
    search_for(page, "shanghai")
    expect(page.locator(STATS)).to_have_text(
        stats_text(len([r for r in rows if matches(r, "shanghai")]))
    )
    expect(page.locator("#hits mark.ais-Highlight-highlighted").first).to_have_text("Shanghai")
    toggle(page, "#region", "Asia")
    asia = [r for r in rows if r["continent"] == "Asia" and matches(r, "shanghai")]
    expect(page.locator(STATS)).to_have_text(stats_text(len(asia)))


def test_a_wrong_api_key_is_refused(
    page: Page, page_origin: str, key_server: Server
) -> None:
    refused = key_server.client.post(
        "/1/indexes/*/queries", headers={"x-algolia-api-key": "wrong"}, json={"requests": []}
    )
    assert refused.status_code == 401
    assert refused.json() == {"error": "Unauthorized", "message": "Unauthorized", "status": 401}
    query = f"host={key_server.url.removeprefix('http://')}&index=cities&apiKey=wrong"
    page.goto(f"{page_origin}/index.html?{query}")
    # the client's error carries the status and, as its message, the body's "message" (which
    # searchport sends on the Algolia routes next to "error"); a body with an "error" field
    # makes it a DetailedApiError, the client's subclass of ApiError
    expect(page.locator("#error")).to_have_text("DetailedApiError 401: Unauthorized")
    expect(page.locator("#hits article.hit")).to_have_count(0)


def test_dynamic_widgets_show_the_handles_default_facets_in_order(
    page: Page, page_origin: str, open_server: Server, rows: list[Row]
) -> None:
    """``renderingContent.facetOrdering`` names the handle's ``defaults.facets`` (region,
    then country): dynamicWidgets renders one list each, in that order, with its counts."""
    open_page(page, page_origin, open_server, len(rows), dynamic="1")
    lists = page.locator("#dynamic .ais-RefinementList")
    expect(lists).to_have_count(2)
    regions = Counter(r["continent"] for r in rows)
    countries = Counter(r["country"] for r in rows)
    expect(lists.nth(0).locator(".ais-RefinementList-item")).to_have_text(list_items(regions))
    expect(lists.nth(1).locator(".ais-RefinementList-item")).to_have_text(list_items(countries))
    # and they refine: a region narrows the hits and the country list
    lists.nth(0).locator('input.ais-RefinementList-checkbox[value="Oceania"]').click()
    oceania = [r for r in rows if r["continent"] == "Oceania"]
    expect(page.locator(STATS)).to_have_text(stats_text(len(oceania)))
    expect(lists.nth(1).locator(".ais-RefinementList-item")).to_have_text(
        list_items(Counter(r["country"] for r in oceania)))


HIERARCHY = "#hierarchy .ais-HierarchicalMenu-item"
CRUMBS = "#breadcrumb .ais-Breadcrumb-item"


def levels(counts: Counter[str]) -> list[str]:
    """A hierarchicalMenu level as its items read: the last part of each value, then its
    count, by count then name."""
    ordered = sorted(counts, key=lambda v: (-counts[v], v.split(" > ")[-1]))
    return [f"{value.split(' > ')[-1]}{counts[value]}" for value in ordered]


def test_hierarchical_menu_and_breadcrumb_walk_continent_then_country(
    page: Page, page_origin: str, open_server: Server, rows: list[Row]
) -> None:
    open_page(page, page_origin, open_server, len(rows))
    top = page.locator("#hierarchy > .ais-HierarchicalMenu > .ais-HierarchicalMenu-list"
                       " > .ais-HierarchicalMenu-item")
    expect(top).to_have_text(levels(Counter(r["lvl0"] for r in rows)))

    page.locator("#hierarchy .ais-HierarchicalMenu-link", has_text="Europe").first.click()
    europe = [r for r in rows if r["lvl0"] == "Europe"]
    expect(page.locator(STATS)).to_have_text(stats_text(len(europe)))
    children = page.locator("#hierarchy .ais-HierarchicalMenu-list--child"
                            " .ais-HierarchicalMenu-item")
    countries = Counter(r["lvl1"] for r in europe)
    expect(children).to_have_text(levels(countries))
    expect(page.locator(CRUMBS)).to_have_text(["Home", ">Europe"])

    country = sorted(countries, key=lambda v: (-countries[v], v))[0]
    name = country.split(" > ")[-1]
    children.locator(".ais-HierarchicalMenu-link", has_text=name).first.click()
    chosen = [r for r in europe if r["lvl1"] == country]
    expect(page.locator(STATS)).to_have_text(stats_text(len(chosen)))
    expect(page.locator(CRUMBS)).to_have_text(["Home", ">Europe", f">{name}"])
    assert set(hit_ids(page)) <= {r["id"] for r in chosen}

    page.locator("#breadcrumb .ais-Breadcrumb-link", has_text="Home").click()
    expect(page.locator(STATS)).to_have_text(stats_text(len(rows)))
