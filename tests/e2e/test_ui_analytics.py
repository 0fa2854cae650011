"""The analytics page (``/ui/analytics``) in Debian's chromium, at desktop and phone width,
against a real ``searchport serve``: every figure it shows is computed here, in plain Python,
from the rows of the query log (written to its SQLite file before the server starts, over
several days, plus searches and a click made through the server itself).

Screenshots are kept in ``tests/e2e/artifacts/`` (look at them after a layout change).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from random import Random
from typing import Any

import httpx
import pytest

from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import Refinement, SearchRecord, new_query_id
from tests.e2e.conftest import (
    FIELDS_YAML,
    ROWS_FILE,
    Server,
    day_clear_of_midnight,
    sample_config,
    start_server,
)
from tests.e2e.ui_support import ARTIFACTS, DESKTOP, PHONE, require_chromium

require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402  (only once chromium is known to be there)

pytestmark = pytest.mark.e2e

KEY = "analytics-page-key"
NO_ANALYTICS = "search-only-key"  # a named key that reads the handle, not its analytics
# the module reads figures by day (UTC) as the server counts them: it starts clear of
# midnight, so that its rows, the server's searches and the page all have the same today
CLEAR_OF_MIDNIGHT = 300  # seconds: far more than the module takes
NONE = "\N{EN DASH}"  # what the page shows for a rate without searches to divide by
DEFAULT_DAYS = 8  # Algolia's default period: the last eight days, today included
# the seeded queries and how many hits each finds (the same every time it is searched)
HITS = {"paris": 12, "lyon": 3, "berlin": 7, "new york": 20, "tokyo": 9, "rome": 4,
        "madrid": 5, "oslo": 2, "cairo": 6, "lima": 1, "quito": 8, "zzzqqq": 0, "xylo": 0,
        "qwfp": 0}
WEIGHTS = {"paris": 9, "lyon": 6, "berlin": 5, "new york": 4, "zzzqqq": 4, "xylo": 3}
FILTERS = ((), (), (("region", ":", "Europe"),), (("country", ":", "France"),),
           (("region", ":", "Asia"), ("population", ">=", "1000000")))
PER_DAY = (3, 0, 6, 2, 9, 1, 5)  # searches on the days from six days ago to today
# queries as long as clients may send: 2,048 characters of words (the cap of /search), and
# 5,000 without a space (the Algolia routes); the tables show their start
LONG_WORDS = ("lorem ipsum dolor sit amet " * 80)[:2048]
LONG_RUN = "x" * 5000
SHOWN_CHARACTERS = 60  # of a query, in a table


@dataclass
class Logged:
    """One search of the log, with what the events later said about it."""

    day: date
    query: str
    nb_hits: int
    filters: tuple[tuple[str, str, str], ...] = ()
    user: str = "user-0"
    query_id: str | None = None
    clicks: list[int] = field(default_factory=list)  # the positions clicked
    converted: bool = False


def logged_rows(today: date) -> list[Logged]:
    rng = Random(24)
    names = sorted(HITS)
    bag = [q for q in names for _ in range(WEIGHTS.get(q, 1))]
    rows = []
    for back, n in zip(range(len(PER_DAY) - 1, -1, -1), PER_DAY, strict=True):
        for _ in range(n):
            query = rng.choice(bag)
            row = Logged(today - timedelta(days=back), query, HITS[query],
                         rng.choice(FILTERS), f"user-{rng.randrange(6)}")
            if rng.random() < 0.7:
                row.query_id = new_query_id()
                if row.nb_hits and rng.random() < 0.7:
                    row.clicks = [rng.randint(1, min(10, row.nb_hits))
                                  for _ in range(rng.choice((1, 1, 2)))]
                    row.converted = rng.random() < 0.5
            rows.append(row)
    # a search without results under a filter
    rows.append(Logged(today - timedelta(days=1), "qwfp", 0, (("region", ":", "Europe"),),
                       "user-2"))
    # before the default period: only a wider one shows it
    rows.append(Logged(today - timedelta(days=20), "history", 3, user="user-old"))
    rows += [Logged(today, LONG_WORDS, 5, user="user-long") for _ in range(4)]
    rows += [Logged(today, LONG_RUN, 0, user="user-long") for _ in range(2)]
    # a query whose hits changed between its searches: the table shows their average
    rows += [Logged(today, "pari", 10, user="user-3"), Logged(today, "pari", 14, user="user-3")]
    return rows


def write_log(path: Path, rows: list[Logged]) -> None:
    """The rows through the SQLite store searchport itself writes with, on a thread of
    its own (Playwright's loop may be running on this one)."""
    searches, events = [], []
    for n, row in enumerate(rows):
        at = datetime(row.day.year, row.day.month, row.day.day, tzinfo=UTC).timestamp() + n
        searches.append(SearchRecord(
            at=at, handle="cities", query=row.query, nb_hits=row.nb_hits, page=0,
            refinements=tuple(Refinement(*f) for f in row.filters), tags=(),
            user_token=row.user, latency_ms=1.0, query_id=row.query_id))
        for position in row.clicks:
            events.append(InsightsEvent(
                at=at + 1, handle="cities", type="click", subtype=None, name="Hit Clicked",
                user_token=row.user, object_ids=(f"object-{position}",),
                positions=(position,), query_id=row.query_id))
        if row.converted:
            events.append(InsightsEvent(
                at=at + 2, handle="cities", type="conversion", subtype=None, name="Bought",
                user_token=row.user, object_ids=("object-1",), query_id=row.query_id))

    async def write() -> None:
        store = SqliteAnalyticsStore(path)
        await store.open()
        await store.write_searches(searches)
        await store.write_events(events)
        await store.close()

    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, write()).result()


# --- what the page should show, from the rows -------------------------------------------

def share(part: int, whole: int) -> str:
    """A rate as the page writes it (en-US percent, at most one decimal), NONE without a
    whole."""
    if not whole:
        return NONE
    text = f"{(Decimal(part) * 100 / Decimal(whole)).quantize(Decimal('0.1'), ROUND_HALF_UP):f}"
    return text.removesuffix(".0") + "%"


def mean(values: list[int]) -> str:
    if not values:
        return NONE
    text = f"{(Decimal(sum(values)) / len(values)).quantize(Decimal('0.1'), ROUND_HALF_UP):f}"
    return text.removesuffix(".0")


def day_name(day: date, start: date, end: date) -> str:
    """A day as the page names it: "20 Nov" in a period within one year."""
    return f"{day.day} {day:%b}" if start.year == end.year else day.isoformat()


def cut(query: str) -> str:
    """A query as a table shows it: its start when it is long."""
    if len(query) <= SHOWN_CHARACTERS:
        return query
    return query[:SHOWN_CHARACTERS].rstrip() + "\N{HORIZONTAL ELLIPSIS}"


def expected(rows: list[Logged], start: date, end: date) -> dict[str, Any]:
    inside = [r for r in rows if start <= r.day <= end]
    tracked = [r for r in inside if r.query_id]
    per_day = Counter(r.day for r in inside)
    days = [start + timedelta(days=n) for n in range((end - start).days + 1)]
    clicks = []
    for day in days:
        on_day = [r for r in tracked if r.day == day]
        positions = [p for r in on_day for p in r.clicks]
        if on_day:
            clicks.append([day_name(day, start, end), str(len(on_day)), str(len(positions)),
                           share(sum(1 for r in on_day if r.clicks), len(on_day)),
                           mean(positions)])
    counts = Counter(r.query for r in inside)
    found: dict[str, list[int]] = {}
    for r in inside:
        found.setdefault(r.query, []).append(r.nb_hits)
    hits = {q: sum(n) / len(n) for q, n in found.items()}  # the average: whole numbers here
    assert all(h == int(h) for h in hits.values())
    top = sorted(counts, key=lambda q: (-counts[q], q))[:10]
    empty = Counter(r.query for r in inside if r.nb_hits == 0)
    filtered = Counter(r.query for r in inside if r.nb_hits == 0 and r.filters)
    attributes = Counter(a for r in inside for (a, _, _) in r.filters)
    return {
        "totals": {
            "searches": f"{len(inside):,}",
            "users": f"{len({r.user for r in inside}):,}",
            "noResultRate": share(sum(1 for r in inside if r.nb_hits == 0), len(inside)),
            "clickThroughRate": share(sum(1 for r in tracked if r.clicks), len(tracked)),
            "averageClickPosition": mean([p for r in tracked for p in r.clicks]),
            "conversionRate": share(sum(1 for r in tracked if r.converted), len(tracked)),
        },
        "per_day": [(day.isoformat(), per_day[day]) for day in days],
        "clicks": clicks,
        "top": [[cut(q), str(counts[q]), f"{int(hits[q]):,}"] for q in top],
        "no_results": [[cut(q), str(n), str(filtered[q])] for q, n in sorted(
            empty.items(), key=lambda item: (-item[1], item[0]))[:10]],
        "filters": sorted([[a, str(n)] for a, n in attributes.items()],
                          key=lambda r: (-int(r[1]), r[0]))[:10],
    }


LIVE = "shanghai"  # searched through the server during the test


# --- the server, and reading the page -----------------------------------------------------

@pytest.fixture(scope="module")
def today() -> date:
    return day_clear_of_midnight(CLEAR_OF_MIDNIGHT)


@pytest.fixture(scope="module")
def seeded(today: date) -> list[Logged]:
    return logged_rows(today)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, seeded: list[Logged], today: date
           ) -> Iterator[Server]:
    workdir = tmp_path_factory.mktemp("analytics-page")
    write_log(workdir / "analytics.sqlite3", seeded)
    config = sample_config(extra_top=(
        f"apiKey: {KEY}\nkeys:\n  search:\n    key: {NO_ANALYTICS}\n    handles: [cities]\n"
        "analytics:\n  flushInterval: 0.1\n"))
    # a second handle for the search page to search (its searches are logged too, under
    # towns: the figures of cities stay those of the rows)
    config += f"  towns:\n    engine: tantivy\n    path: index/towns\n    source: {ROWS_FILE}\n"
    config += FIELDS_YAML
    started = start_server(config, workdir)
    try:
        live(started, seeded, today)
        yield started
    finally:
        started.stop()


def live(server: Server, rows: list[Logged], today: date) -> None:
    """Two searches and a click through the server itself, added to the rows once the
    server says it has written them."""
    auth = {"Authorization": f"Bearer {KEY}"}
    answer = server.client.get("/cities/search", headers=auth, params={
        "q": LIVE, "clickAnalytics": "true", "userToken": "user-live"}).json()
    assert answer["totalHits"] > 0
    server.client.get("/cities/search", headers=auth,
                      params={"q": LIVE, "userToken": "user-live"})
    sent = server.client.post(
        "/1/events", headers=auth, content=json.dumps({"events": [{
            "eventType": "click", "eventName": "Hit Clicked", "index": "cities",
            "userToken": "user-live", "objectIDs": [answer["hits"][0]["id"]], "positions": [3],
            "queryID": answer["queryID"]}]}))
    assert sent.status_code == 200, sent.text
    rows += [Logged(today, LIVE, answer["totalHits"], user="user-live",
                    query_id=answer["queryID"], clicks=[3]),
             Logged(today, LIVE, answer["totalHits"], user="user-live")]
    total = sum(1 for r in rows if r.day >= today - timedelta(days=DEFAULT_DAYS - 1))
    deadline = time.monotonic() + 10
    while True:
        counted = server.client.get("/2/searches/count", headers=auth, params={
            "index": "cities"}).json()["count"]
        clicked = server.client.get("/2/clicks/clickThroughRate", headers=auth, params={
            "index": "cities"}).json()["clickCount"]
        if (counted, clicked) == (total, sum(len(r.clicks) for r in rows if r.query_id
                                             and r.day >= today - timedelta(days=7))):
            return
        assert time.monotonic() < deadline, f"the live searches were not written ({counted})"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def rows(server: Server, seeded: list[Logged]) -> list[Logged]:
    """Every row of the log: the seeded ones and those made through the server."""
    return seeded


def texts(page: Page, selector: str) -> list[list[str]]:
    found: list[list[str]] = page.locator(selector).evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))")
    return found


def shown(page: Page) -> dict[str, Any]:
    totals = {name: page.locator(f'.total[data-figure="{name}"] dd').inner_text().strip()
              for name in ("searches", "users", "noResultRate", "clickThroughRate",
                           "averageClickPosition", "conversionRate")}
    bars = page.locator("#per-day g.day").evaluate_all(
        "bars => bars.map(b => [b.dataset.date, Number(b.dataset.count)])")
    return {
        "totals": totals,
        "per_day": [tuple(bar) for bar in bars],
        "clicks": texts(page, "#clicks tbody tr:not(.empty-row)"),
        "top": texts(page, "#top-searches tbody tr:not(.empty-row)"),
        "no_results": texts(page, "#no-results tbody tr:not(.empty-row)"),
        "filters": texts(page, "#top-filters tbody tr:not(.empty-row)"),
    }


def use_key(page: Page, key: str) -> None:
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Use key").click()


def open_report(page: Page, server: Server, query: str = "") -> None:
    page.goto(f"{server.url}/ui/analytics{query}")
    expect(page.get_by_role("heading", name="This service needs a key")).to_be_visible()
    use_key(page, KEY)
    # busy from the start until every report of the first period has been drawn (or refused)
    expect(page.locator("#report")).to_have_attribute("aria-busy", "false")


def screenshot(page: Page, name: str) -> None:
    page.mouse.move(0, 0)  # no bar highlighted under the pointer
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000  # a picture of something, not a blank page


# --- the tests ----------------------------------------------------------------------------

def test_the_search_page_links_to_it(page: Page, server: Server, today: date) -> None:
    page.goto(f"{server.url}/ui?index=towns")
    use_key(page, KEY)
    expect(page.locator("#hits li.hit").first).to_be_visible()
    page.get_by_role("link", name="Search analytics").click()
    # the handle searched, and the key of this tab: no second prompt
    expect(page).to_have_url(f"{server.url}/ui/analytics?index=towns&startDate="
                             f"{today - timedelta(days=DEFAULT_DAYS - 1)}&endDate={today}")
    expect(page.locator("#report")).to_be_visible()
    expect(page.locator("#key-panel")).to_be_hidden()


def test_a_period_the_api_refuses_is_said_once(page: Page, server: Server) -> None:
    open_report(page, server, "?index=cities&startDate=2020-01-01")
    expect(page.locator("#error")).to_have_text(
        "the period from startDate to endDate is at most 400 days")
    expect(page.locator("#report")).to_be_hidden()


def test_the_figures_of_the_last_eight_days_on_a_desktop(
        page: Page, server: Server, rows: list[Logged], today: date) -> None:
    page.set_viewport_size(DESKTOP)
    open_report(page, server)
    expect(page.locator("#report")).to_be_visible()
    start = today - timedelta(days=DEFAULT_DAYS - 1)
    assert page.locator("#start").input_value() == start.isoformat()
    assert page.locator("#end").input_value() == today.isoformat()
    screenshot(page, "ui-analytics-desktop.png")  # before the checks: it shows what failed
    want = expected(rows, start, today)
    assert shown(page) == want
    # the chart draws the counts: the tallest bar is the busiest day
    heights = page.locator("#per-day g.day rect").evaluate_all(
        "rects => rects.map(r => Number(r.getAttribute('height')))")
    busiest = max(range(len(heights)), key=lambda i: want["per_day"][i][1])
    assert heights[busiest] == max(heights) > 0
    assert [h == 0 for h in heights] == [c == 0 for _, c in want["per_day"]]


def test_long_queries_are_cut_and_averages_said(
        page: Page, server: Server, rows: list[Logged], today: date) -> None:
    page.set_viewport_size(DESKTOP)
    open_report(page, server)
    want = expected(rows, today - timedelta(days=DEFAULT_DAYS - 1), today)
    assert cut(LONG_WORDS) in [row[0] for row in want["top"]]
    assert cut(LONG_RUN) in [row[0] for row in want["no_results"]]
    assert texts(page, "#top-searches thead tr") == [["Search", "Searches", "Average hits"]]
    assert texts(page, "#clicks thead tr")[0][-1] == "Average position"
    # the whole query on hover
    for panel, query in (("#top-searches", LONG_WORDS), ("#no-results", LONG_RUN)):
        heading = page.locator(f"{panel} tbody th", has_text=cut(query))
        expect(heading).to_have_attribute("title", query)
        box = heading.bounding_box()
        assert box is not None and box["height"] < 80  # a line or two, not a column of text
    assert page.locator("#top-searches tbody th", has_text="paris").get_attribute(
        "title") is None
    # the three tables share the row evenly: none is stretched by its text
    widths = [page.locator(part).bounding_box() for part in
              ("#top-searches", "#no-results", "#top-filters")]
    assert all(w is not None for w in widths)
    assert max(w["width"] for w in widths if w) - min(w["width"] for w in widths if w) < 1
    assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"]
    screenshot(page, "ui-analytics-long-queries.png")


def test_a_wider_period_and_another_link(page: Page, server: Server, rows: list[Logged],
                                         today: date) -> None:
    open_report(page, server)
    start = today - timedelta(days=25)
    page.locator("#start").fill(start.isoformat())
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#per-day g.day")).to_have_count(26)
    assert shown(page) == expected(rows, start, today)
    # the period is in the URL: a reload shows the same figures
    assert f"startDate={start.isoformat()}" in page.url
    page.reload()
    expect(page.locator("#per-day g.day")).to_have_count(26)
    one = today - timedelta(days=2)
    page.locator("#start").fill(one.isoformat())
    page.locator("#end").fill(one.isoformat())
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#per-day g.day")).to_have_count(1)
    assert shown(page) == expected(rows, one, one)


def test_the_figures_fit_a_phone(page: Page, server: Server, rows: list[Logged],
                                 today: date) -> None:
    page.set_viewport_size(PHONE)
    open_report(page, server)
    screenshot(page, "ui-analytics-phone.png")
    assert shown(page) == expected(rows, today - timedelta(days=DEFAULT_DAYS - 1), today)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for part in ("#period-form", "#totals", "#per-day", "#clicks", "#top-searches"):
        area = page.locator(part).bounding_box()
        assert area is not None and area["x"] >= 0
        assert area["x"] + area["width"] <= PHONE["width"], part


def test_a_key_is_asked_for_and_one_without_analytics_is_refused(
        page: Page, server: Server) -> None:
    page.set_viewport_size(PHONE)
    page.goto(f"{server.url}/ui/analytics")
    expect(page.get_by_role("heading", name="This service needs a key")).to_be_visible()
    expect(page.locator("#report")).to_be_hidden()
    use_key(page, "not-a-key")
    expect(page.locator("#key-error")).to_have_text(
        "That key was refused: check it and try again.")
    use_key(page, NO_ANALYTICS)
    expect(page.locator("#key-error")).to_contain_text("This key may not read analytics")
    expect(page.locator("#report")).to_be_hidden()
    use_key(page, KEY)
    expect(page.locator("#report")).to_be_visible()
    # what the page sends is what a client sends: the key is the one entered
    assert httpx.get(f"{server.url}/2/status", params={"index": "cities"},
                     headers={"Authorization": f"Bearer {NO_ANALYTICS}"}).status_code == 403
