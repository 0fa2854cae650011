"""Every InstantSearch.js widget that asks something of the server, on one page
(``tests/e2e/instantsearch/widgets.html``) in Chromium, against a real ``searchport serve``
over the fixture rows on the embedded engine and on a real Typesense server.

The handles: ``cities`` with a query rule (a context that ``queryRuleContext`` sends when
the region menu picks Europe: ``userData`` for ``queryRuleCustomData`` and a facet ordering
for ``dynamicWidgets``), its standard replica ``cities-smallest`` (population ascending) and
its virtual replica ``cities-relevant`` (relevant sort, population descending). Each widget
is refined in the browser and what the page shows is computed from the rows. Without
chromium, node, npm or typesense-server the module is skipped, except in CI.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
import unicodedata
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import FIELDS_YAML, ROWS_FILE, Server
from tests.e2e.ui_support import require_chromium

require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402  (only once chromium is there)

from tests.typesense_server import session_server  # noqa: E402

pytestmark = pytest.mark.e2e
Row = dict[str, Any]

PER_PAGE = 10  # the hitsPerPage widget's default item
SNIPPET_WORDS = 2  # configure({attributesToSnippet: ["name:2"]})
SMALLEST_PAGE = 5  # the smallest-places index widget's configure({hitsPerPage})
STATS = "#stats .ais-Stats-text"
CONTEXT = "ais-region-Europe"  # what queryRuleContext sends for region = Europe
RULE_ORDER = ["countryCode", "currency"]  # the rule's facet ordering
DEFAULT_ORDER = ["currency", "lvl0"]  # the handle's defaults.facets
RULES = [{
    "objectID": "europe-banner",
    "conditions": [{"context": CONTEXT}],
    "consequence": {
        "userData": {"title": "Cities of Europe", "link": "/europe"},
        "params": {"renderingContent": {"facetOrdering": {"facets": {"order": RULE_ORDER}}}},
    },
}]


# --- the handles, on each engine ------------------------------------------------------------

def handles_yaml(engine_yaml: str) -> str:
    fields = FIELDS_YAML.replace("facets: [region, country]",
                                 f"facets: [{', '.join(DEFAULT_ORDER)}]")
    return (
        f"indexes:\n  cities:\n{engine_yaml}{fields}"
        f"    rules: {json.dumps(RULES)}\n"
        "  cities-smallest:\n    replicaOf: cities\n"
        "    sort: [{field: population, order: asc}]\n"
        "  cities-relevant:\n    replicaOf: cities\n    relevantSort: {strictness: 100}\n"
        "    customRanking: [{field: population, order: desc}]\n"
    )


TYPESENSE_FIELDS = [
    ("name", "string"), ("alternateNames", "string[]"), ("country", "string"),
    ("countryCode", "string"), ("continent", "string"), ("timezone", "string"),
    ("currency", "string"), ("languages", "string[]"), ("population", "int32"),
    ("capital", "bool"), ("lvl0", "string"), ("lvl1", "string"), ("location", "geopoint"),
]


def typesense_collection(name: str, rows: list[Row]) -> tuple[dict[str, Any], list[Row]]:
    """The rows as a Typesense collection: every field a facet (text ones excepted), a field
    some row lacks optional, a point as ``[lat, lng]``."""
    schema = {"name": name, "fields": [
        {"name": field, "type": kind, "facet": field not in ("name", "alternateNames"),
         "optional": any(row.get(field) is None for row in rows)}
        for field, kind in TYPESENSE_FIELDS
    ]}
    documents = []
    for row in rows:
        doc = {k: v for k, v in row.items() if v is not None}
        if "location" in doc:
            doc["location"] = [doc["location"]["lat"], doc["location"]["lon"]]
        documents.append(doc)
    return schema, documents


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def page_origin(npm_project: Path) -> Iterator[str]:
    """The page and its node_modules, on 127.0.0.1 at a port of its own (cross-origin)."""
    handler = functools.partial(_QuietHandler, directory=str(npm_project))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, name="widgets-page", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="module", params=["tantivy", "typesense"])
def served(request: pytest.FixtureRequest, server_factory: Callable[..., Server],
           tmp_path_factory: pytest.TempPathFactory, page_origin: str,
           rows: list[Row]) -> Iterator[Server]:
    top = f'corsOrigins: ["{page_origin}"]\n'
    if request.param == "tantivy":
        engine = f"    engine: tantivy\n    path: index/cities\n    source: {ROWS_FILE}\n"
        yield server_factory(top + handles_yaml(engine))
        return
    typesense = session_server(request.config, tmp_path_factory)
    name = f"widgets_{uuid.uuid4().hex[:8]}"
    typesense.create_collection(*typesense_collection(name, rows))
    engine = (f"    engine: typesense\n    host: {typesense.url}\n"
              f"    apiKey: {typesense.api_key}\n    indexName: {name}\n    timeout: 10\n")
    yield server_factory(top + handles_yaml(engine))
    typesense.drop_collection(name)


@pytest.fixture
def widgets(page: Page, page_origin: str, served: Server, rows: list[Row]) -> Iterator[Page]:
    """The page, open on every row; no error shown at the end."""
    page.goto(f"{page_origin}/widgets.html?host={served.url.removeprefix('http://')}")
    expect(page.locator(STATS)).to_have_text(stats_text(len(rows)))
    yield page
    expect(page.locator("#error")).to_have_text("")


# --- what the page should show, from the rows -------------------------------------------

def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words_of(row: Row) -> set[str]:
    texts = [row["name"], *row.get("alternateNames", [])]
    return {w for text in texts for w in re.findall(r"[^\W_]+", fold(text))}


def every_word(rows: list[Row]) -> set[str]:
    return {w for row in rows for w in words_of(row)}


def has_word(row: Row, word: str, prefix: bool = False) -> bool:
    return any(w == word or (prefix and w.startswith(word)) for w in words_of(row))


def stats_text(total: int, sorted_hits: int | None = None) -> re.Pattern[str]:
    """The stats widget's default text; with ``sorted_hits`` below ``total``, its sentence
    for a relevant sort."""
    if sorted_hits is not None and sorted_hits != total:
        head = f"{sorted_hits:,} relevant result{'' if sorted_hits == 1 else 's'}" \
               f" sorted out of {total:,}"
    else:
        head = "No results" if total == 0 else f"{total:,} result{'' if total == 1 else 's'}"
    return re.compile("^" + re.escape(head) + r" found in \d+ms$")


def by_count(counts: Counter[str], limit: int) -> list[str]:
    """Facet values as a list widget sorted count:desc then name:asc shows them."""
    return sorted(counts, key=lambda v: (-counts[v], v))[:limit]


def items(counts: Counter[str], limit: int) -> list[str]:
    """A list's items as their text reads: the value, then its count."""
    return [f"{value}{counts[value]}" for value in by_count(counts, limit)]


def counts_of(rows: list[Row], field: str) -> Counter[str]:
    found: Counter[str] = Counter()
    for row in rows:
        value = row.get(field)
        for one in value if isinstance(value, list) else [] if value is None else [value]:
            found[str(one)] += 1
    return found


def hit_ids(page: Page, where: str = "#hits") -> list[str]:
    ids: list[str] = page.locator(f"{where} article.hit").evaluate_all(
        "els => els.map(e => e.dataset.id)")
    return ids


def by_population(rows: list[Row], descending: bool = False) -> list[str]:
    return [r["id"] for r in sorted(rows, key=lambda r: r["population"], reverse=descending)]


def in_box(row: Row, north: float, east: float, south: float, west: float) -> bool:
    point = row.get("location")
    return point is not None and south <= point["lat"] <= north and west <= point["lon"] <= east


def in_polygon(row: Row, corners: list[tuple[float, float]]) -> bool:
    """Even-odd rule, edges as straight lines in latitude/longitude."""
    point = row.get("location")
    if point is None:
        return False
    lat, lng = point["lat"], point["lon"]
    inside = False
    for (lat1, lng1), (lat2, lng2) in zip(corners, corners[1:] + corners[:1], strict=True):
        if (lng1 > lng) != (lng2 > lng):
            cross = lat1 + (lng - lng1) * (lat2 - lat1) / (lng2 - lng1)
            if lat < cross:
                inside = not inside
    return inside


# --- the tests ------------------------------------------------------------------------------

def test_menus_lists_ranges_toggle_and_current_refinements(widgets: Page, rows: list[Row]
                                                           ) -> None:
    page = widgets
    regions = counts_of(rows, "continent")
    expect(page.locator("#region .ais-Menu-item")).to_have_text(items(regions, 10))
    countries = counts_of(rows, "country")
    country_items = page.locator("#country .ais-RefinementList-item")
    expect(country_items).to_have_text(items(countries, 5))
    # no tie across the limits: the values shown do not depend on how an engine breaks ties
    ranked = sorted(countries.values(), reverse=True)
    assert ranked[4] != ranked[5] and ranked[9] != ranked[10]
    page.locator("#country button.ais-RefinementList-showMore").click()
    expect(country_items).to_have_text(items(countries, 10))

    # menu: one region
    page.locator("#region .ais-Menu-link", has_text="Europe").click()
    europe = [r for r in rows if r["continent"] == "Europe"]
    expect(page.locator(STATS)).to_have_text(stats_text(len(europe)))
    expect(page.locator("#region .ais-Menu-item--selected")).to_have_text(
        f"Europe{len(europe)}")
    expect(country_items).to_have_text(items(counts_of(europe, "country"), 10))
    currencies = counts_of(europe, "currency")
    options = page.locator("#currency option.ais-MenuSelect-option")
    expect(options).to_have_text(["See all", *[f"{v} ({currencies[v]})"
                                               for v in by_count(currencies, 8)]])

    # menuSelect: one currency
    page.locator("#currency select").select_option("EUR")
    euro = [r for r in europe if r.get("currency") == "EUR"]
    expect(page.locator(STATS)).to_have_text(stats_text(len(euro)))
    assert set(hit_ids(page)) <= {r["id"] for r in euro}

    # a searchable list: values containing the text, within the refined rows
    page.locator("#country input.ais-SearchBox-input").fill("an")
    found = Counter({c: n for c, n in counts_of(euro, "country").items() if "an" in c.lower()})
    expect(country_items).to_have_text(items(found, 10))

    # numericMenu: 1M to 5M, both ends included
    page.locator("#country input.ais-SearchBox-input").fill("")
    page.locator("#size label", has_text="1M to 5M").click()
    middle = [r for r in euro if 1_000_000 <= r["population"] <= 5_000_000]
    expect(page.locator(STATS)).to_have_text(stats_text(len(middle)))
    assert sorted(hit_ids(page)) == sorted(r["id"] for r in middle)

    # currentRefinements lists each refined attribute; removing one widens the hits
    current = page.locator("#current .ais-CurrentRefinements-item")
    expect(current.locator(".ais-CurrentRefinements-label")).to_have_text(
        ["Region:", "Currency:", "Population:"])
    expect(current.locator(".ais-CurrentRefinements-categoryLabel")).to_have_text(
        ["Europe", "EUR", "≥ 1000000", "≤ 5000000"])
    current.nth(1).locator(".ais-CurrentRefinements-delete").click()
    wide = [r for r in europe if 1_000_000 <= r["population"] <= 5_000_000]
    expect(page.locator(STATS)).to_have_text(stats_text(len(wide)))

    # rangeInput: its own bounds replace the menu's
    page.locator("#size label", has_text="All").click()
    expect(page.locator(STATS)).to_have_text(stats_text(len(europe)))
    populations = sorted(r["population"] for r in europe)
    low, high = populations[10], populations[40]
    page.locator("#population input.ais-RangeInput-input--min").fill(str(low))
    page.locator("#population input.ais-RangeInput-input--max").fill(str(high))
    page.locator("#population button.ais-RangeInput-submit").click()
    ranged = [r for r in europe if low <= r["population"] <= high]
    expect(page.locator(STATS)).to_have_text(stats_text(len(ranged)))
    assert 0 < len(ranged) < len(europe)

    # clearRefinements: every row again; then the capitals toggle
    page.locator("#clear button.ais-ClearRefinements-button").click()
    expect(page.locator(STATS)).to_have_text(stats_text(len(rows)))
    expect(current).to_have_count(0)
    page.locator("#capital input.ais-ToggleRefinement-checkbox").check()
    capitals = [r for r in rows if r["capital"] is True]
    expect(page.locator(STATS)).to_have_text(stats_text(len(capitals)))
    assert sorted(hit_ids(page)) == sorted(r["id"] for r in capitals)
