"""Every InstantSearch.js widget that asks something of the server, on one page
(``tests/e2e/instantsearch/widgets.html``) in Chromium, against a real ``searchport serve``
over the fixture rows (each with a ``stars`` size class for ratingMenu, its ``latitude`` in
whole degrees for rangeSlider and its ``hemisphere``) on the embedded engine and on a real
Typesense server.

The handles: ``cities`` with a query rule (a context that ``queryRuleContext`` sends when
the region menu picks Europe: ``userData`` for ``queryRuleCustomData`` and a facet ordering
for ``dynamicWidgets``), its standard replica ``cities-smallest`` (population ascending) and
its virtual replica ``cities-relevant`` (relevant sort, population descending). Each widget
is refined in the browser and what the page shows is computed from the rows. Without
chromium, node, npm or typesense-server the module is skipped, except in CI.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import FIELDS_YAML, Server, load_rows
from tests.e2e.ui_support import require_chromium, served_folder

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
RULE_ORDER = ["countryCode", "hemisphere"]  # the rule's facet ordering
DEFAULT_ORDER = ["hemisphere", "countryCode"]  # the handle's defaults.facets
RULES = [{
    "objectID": "europe-banner",
    "conditions": [{"context": CONTEXT}],
    "consequence": {
        "userData": {"title": "Cities of Europe", "link": "/europe"},
        "params": {"renderingContent": {"facetOrdering": {"facets": {"order": RULE_ORDER}}}},
    },
}]


# --- the handles, on each engine ------------------------------------------------------------

def size_class(population: int) -> int:
    """The rows' ``stars`` (for ratingMenu): 0 to 5 by the population's digits."""
    return max(0, min(5, len(str(population)) - 3))


def latitude(row: Row) -> dict[str, Any]:
    """The rows' ``latitude`` (for rangeSlider), whole degrees, and ``hemisphere`` (a list of
    dynamicWidgets), when the row has a point."""
    point = row.get("location")
    return {} if point is None else {"latitude": round(point["lat"]),
                                     "hemisphere": "north" if point["lat"] >= 0 else "south"}


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    """The fixture rows, each with its ``stars``, ``latitude`` and ``hemisphere``."""
    return [{**row, "stars": size_class(row["population"]), **latitude(row)}
            for row in load_rows()]


def handles_yaml(engine_yaml: str) -> str:
    fields = FIELDS_YAML.replace("facets: [region, country]",
                                 f"facets: [{', '.join(DEFAULT_ORDER)}]").replace(
        "      population: { type: integer }\n",
        "      population: { type: integer }\n      stars: { type: integer }\n"
        "      latitude: { type: integer }\n      hemisphere: { type: keyword }\n")
    return (
        f"indexes:\n  cities:\n{engine_yaml}"
        # no typos: Typesense is asked for none, and the rows' words decide every match
        "    typoTolerance: {enabled: false}\n"
        f"{fields}"
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
    ("capital", "bool"), ("stars", "int32"), ("latitude", "int32"), ("hemisphere", "string"),
    ("lvl0", "string"), ("lvl1", "string"), ("location", "geopoint"),
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


@pytest.fixture(scope="module")
def page_origin(npm_project: Path) -> Iterator[str]:
    """The page and its node_modules, on 127.0.0.1 at a port of its own (cross-origin)."""
    with served_folder(npm_project, "widgets-page") as origin:
        yield origin


@pytest.fixture(scope="module", params=["tantivy", "typesense"])
def served(request: pytest.FixtureRequest, server_factory: Callable[..., Server],
           tmp_path_factory: pytest.TempPathFactory, page_origin: str,
           rows: list[Row]) -> Iterator[Server]:
    top = f'corsOrigins: ["{page_origin}"]\n'
    if request.param == "tantivy":
        source = tmp_path_factory.mktemp("widgets-rows") / "cities.jsonl"
        source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        engine = f"    engine: tantivy\n    path: index/cities\n    source: {source}\n"
        yield server_factory(top + handles_yaml(engine))
        return
    typesense = session_server(request.config, tmp_path_factory)
    name = f"widgets_{uuid.uuid4().hex[:8]}"
    typesense.create_collection(*typesense_collection(name, rows))
    engine = (f"    engine: typesense\n    host: {typesense.url}\n"
              f"    apiKey: {typesense.api_key}\n    indexName: {name}\n    timeout: 10\n")
    yield server_factory(top + handles_yaml(engine))
    typesense.drop_collection(name)


# Headless Chromium has no microphone: this stand-in for the Web Speech API hears
# ``window.spoken`` when the voiceSearch widget starts listening, as the browser's would.
SPEECH = """
class Heard extends EventTarget {
  start() {
    setTimeout(() => {
      this.dispatchEvent(new Event("start"));
      const result = Object.assign([{ transcript: window.spoken }], { isFinal: true });
      this.dispatchEvent(Object.assign(new Event("result"), { results: [result] }));
      this.dispatchEvent(new Event("end"));
    });
  }
  stop() {}
}
window.SpeechRecognition = window.webkitSpeechRecognition = Heard;
"""


@pytest.fixture
def widgets(page: Page, page_origin: str, served: Server, rows: list[Row]) -> Iterator[Page]:
    """The page, open on every row; no error shown at the end."""
    page.add_init_script(SPEECH)
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


def expect_ids(page: Page, ids: list[str], where: str = "#hits") -> None:
    """Wait until the hits of ``where`` are ``ids``, in that order."""
    try:
        page.wait_for_function(
            "([where, ids]) => JSON.stringify([...document.querySelectorAll("
            "`${where} article.hit`)].map(e => e.dataset.id)) === JSON.stringify(ids)",
            arg=[where, ids], timeout=10_000)
    except Exception:
        assert hit_ids(page, where) == ids
        raise


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

def expect_slider(page: Page, rows: list[Row], lower: int | None = None) -> None:
    """The rangeSlider's bounds (from facets_stats) are the rows' extremes, its lower handle
    at ``lower`` (default: the lowest); each handle moves between the other and its end."""
    degrees = [r["latitude"] for r in rows if "latitude" in r]
    low, high = min(degrees), max(degrees)
    now = low if lower is None else lower
    for end, at, (start, stop) in (("lower", now, (low, high)), ("upper", high, (now, high))):
        handle = page.locator(f"#latitude .rheostat-handle-{end}")
        expect(handle).to_have_attribute("aria-valuemin", str(start))
        expect(handle).to_have_attribute("aria-valuemax", str(stop))
        expect(handle).to_have_attribute("aria-valuenow", str(at))


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

    expect_slider(page, rows)

    # menu: one region
    page.locator("#region .ais-Menu-link", has_text="Europe").click()
    europe = [r for r in rows if r["continent"] == "Europe"]
    expect(page.locator(STATS)).to_have_text(stats_text(len(europe)))
    expect_slider(page, europe)
    # the slider's lower handle to its end, by the keyboard: the northernmost degree only
    north = max(r["latitude"] for r in europe if "latitude" in r)
    page.locator("#latitude .rheostat-handle-lower").press("End")
    northern = [r for r in europe if r.get("latitude") == north]
    expect(page.locator(STATS)).to_have_text(stats_text(len(northern)))
    expect_slider(page, europe, lower=north)
    page.locator("#latitude .rheostat-handle-lower").press("Home")
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


def test_sort_by_replicas_relevant_sort_hits_per_page_and_pagination(
        widgets: Page, rows: list[Row]) -> None:
    page = widgets
    sort = page.locator("#sort select.ais-SortBy-select")
    smallest = by_population(rows)
    sort.select_option("cities-smallest")  # the standard replica: population ascending
    expect_ids(page, smallest[:PER_PAGE])
    page.locator("#per-page select.ais-HitsPerPage-select").select_option("25")
    expect_ids(page, smallest[:25])
    page.locator("#pagination").get_by_role("link", name="Page 2", exact=True).click()
    expect_ids(page, smallest[25:50])
    expect(page.locator("#pagination .ais-Pagination-item--page")).to_have_count(
        min(7, -(-len(rows) // 25)))  # the current page and 3 on each side
    expect(page.locator("#pagination .ais-Pagination-item--selected")).to_have_text("2")
    expect(page.locator(STATS)).to_have_text(stats_text(len(rows)))
    expect(page.locator("#relevant .ais-RelevantSort")).to_have_count(0)  # not virtual

    # the virtual replica: without text every record is as relevant, all sorted
    sort.select_option("cities-relevant")
    largest = by_population(rows, descending=True)
    expect_ids(page, largest[:25])
    expect(page.locator(STATS)).to_have_text(stats_text(len(rows)))
    button = page.locator("#relevant button.ais-RelevantSort-button")
    expect(button).to_have_text("See all results")

    # two words, both optional: the records with either match, only the most relevant
    # (those with both) are sorted and shown
    page.evaluate("page.configure({optionalWords: ['ciudad', 'miguel']})")
    page.locator("#searchbox input.ais-SearchBox-input").fill("ciudad miguel")
    either = [r for r in rows if has_word(r, "ciudad") or has_word(r, "miguel", prefix=True)]
    both = [r for r in either if has_word(r, "ciudad") and has_word(r, "miguel", prefix=True)]
    assert len(both) == 1 and len(either) > 3
    assert not [w for w in every_word(rows) if w.startswith("miguel") and w != "miguel"]
    expect(page.locator(STATS)).to_have_text(stats_text(len(either), len(both)))
    expect_ids(page, [r["id"] for r in both])
    # relevantSort: every match, sorted (strictness 0), and back
    button.click()
    expect(page.locator(STATS)).to_have_text(stats_text(len(either)))
    expect_ids(page, by_population(either, descending=True))
    expect(button).to_have_text("See relevant results")
    button.click()
    expect(page.locator(STATS)).to_have_text(stats_text(len(either), len(both)))
    expect_ids(page, [r["id"] for r in both])


def test_query_rule_context_custom_data_and_dynamic_widgets(widgets: Page, rows: list[Row]
                                                            ) -> None:
    page = widgets
    lists = page.locator("#dynamic .ais-DynamicWidgets-widget")

    def order() -> list[str]:
        found: list[str] = lists.evaluate_all(
            "els => els.map(e => e.querySelector('[data-attribute]')?.dataset.attribute"
            " ?? e.dataset.attribute)")
        return found

    # the handle's defaults.facets, in order, each list with its counts
    expect(lists).to_have_count(len(DEFAULT_ORDER))
    assert order() == DEFAULT_ORDER
    expect(lists.nth(0).locator(".ais-RefinementList-item")).to_have_text(
        items(counts_of(rows, DEFAULT_ORDER[0]), 10))
    expect(page.locator("#banner .banner")).to_have_count(0)

    # Europe in the region menu: queryRuleContext sends its context, the rule applies
    page.locator("#region .ais-Menu-link", has_text="Europe").click()
    europe = [r for r in rows if r["continent"] == "Europe"]
    expect(page.locator(STATS)).to_have_text(stats_text(len(europe)))
    banner = page.locator("#banner .banner")
    expect(banner).to_have_text(RULES[0]["consequence"]["userData"]["title"])
    expect(banner).to_have_attribute("data-link", RULES[0]["consequence"]["userData"]["link"])
    page.wait_for_function(
        "order => JSON.stringify([...document.querySelectorAll('#dynamic [data-attribute]')]"
        ".map(e => e.dataset.attribute)) === JSON.stringify(order)", arg=RULE_ORDER)
    codes = counts_of(europe, "countryCode")
    assert len(codes) <= 100  # every value in the answer: the list's top 10 is exact
    first = lists.nth(0).locator(".ais-RefinementList-item")
    expect(first).to_have_text(items(codes, 10))
    # a list the rule brought refines like any other
    code = by_count(codes, 1)[0]
    lists.nth(0).locator(f'input.ais-RefinementList-checkbox[value="{code}"]').click()
    chosen = [r for r in europe if r["countryCode"] == code]
    expect(page.locator(STATS)).to_have_text(stats_text(len(chosen)))
    assert sorted(hit_ids(page)) == sorted(r["id"] for r in chosen)

    # clearing: no context, no banner, the handle's own ordering again
    page.locator("#clear button.ais-ClearRefinements-button").click()
    expect(page.locator(STATS)).to_have_text(stats_text(len(rows)))
    expect(page.locator("#banner .banner")).to_have_count(0)
    page.wait_for_function(
        "order => JSON.stringify([...document.querySelectorAll('#dynamic [data-attribute]')]"
        ".map(e => e.dataset.attribute)) === JSON.stringify(order)", arg=DEFAULT_ORDER)


def markers(page: Page) -> list[tuple[str, float, float]]:
    found: list[list[Any]] = page.locator("#geo li.marker").evaluate_all(
        "els => els.map(e => [e.dataset.id, Number(e.dataset.lat), Number(e.dataset.lng)])")
    return [(i, lat, lng) for i, lat, lng in found]


def expect_markers(page: Page, rows: list[Row], inside: list[Row]) -> None:
    """Stats count ``inside``; each hit shown is one of them, with its marker at its point."""
    expect(page.locator(STATS)).to_have_text(stats_text(len(inside)))
    expect(page.locator("#hits article.hit")).to_have_count(min(PER_PAGE, len(inside)))
    by_id = {r["id"]: r for r in rows}
    shown = hit_ids(page)
    assert set(shown) <= {r["id"] for r in inside}
    assert markers(page) == [(i, by_id[i]["location"]["lat"], by_id[i]["location"]["lon"])
                             for i in shown if by_id[i].get("location")]


def test_geo_search_connector_with_a_box_several_boxes_and_a_polygon(
        widgets: Page, rows: list[Row]) -> None:
    page = widgets
    by_id = {r["id"]: r for r in rows}
    expect(page.locator("#geo li.marker")).to_have_count(
        len([i for i in hit_ids(page) if by_id[i].get("location")]))
    europe_box = (60.0, 30.0, 35.0, -10.0)  # north, east, south, west
    page.evaluate("([n, e, s, w]) => page.geo.refine("
                  "{northEast: {lat: n, lng: e}, southWest: {lat: s, lng: w}})", list(europe_box))
    in_europe = [r for r in rows if in_box(r, *europe_box)]
    assert 10 < len(in_europe) < len(rows)
    expect_markers(page, rows, in_europe)
    assert page.evaluate("page.geo.isRefinedWithMap()") is True
    page.evaluate("page.geo.clearMapRefinement()")
    expect(page.locator(STATS)).to_have_text(stats_text(len(rows)))

    # two boxes (Europe, Australia): a record in either
    australia_box = (-10.0, 155.0, -45.0, 110.0)
    page.evaluate("boxes => page.configure({insideBoundingBox: boxes})",
                  [list(europe_box), list(australia_box)])
    either = [r for r in rows if in_box(r, *europe_box) or in_box(r, *australia_box)]
    assert len(either) > len(in_europe)
    expect_markers(page, rows, either)

    # a polygon: a triangle over India (edges straight in latitude/longitude)
    triangle = [(35.0, 68.0), (8.0, 77.0), (25.0, 92.0)]
    page.evaluate("polygon => page.configure({insidePolygon: [polygon]})",
                  [c for corner in triangle for c in corner])
    inside = [r for r in rows if in_polygon(r, triangle)]
    lats, lngs = [c[0] for c in triangle], [c[1] for c in triangle]
    around = [r for r in rows if in_box(r, max(lats), max(lngs), min(lats), min(lngs))]
    assert len(inside) > PER_PAGE and len(around) > len(inside)  # a box would keep more
    expect_markers(page, rows, inside)


def snippet_of(row: Row, word: str) -> str:
    """The name's window of SNIPPET_WORDS words from its first word holding ``word``
    (the first words when only another attribute matched), ellipses where words were cut."""
    names = row["name"].split()
    hit = [i for i, w in enumerate(names) if word in re.findall(r"[^\W_]+", fold(w))]
    first = hit[0] if hit else 0
    start = max(0, min(first - (SNIPPET_WORDS - 1) // 2, len(names) - SNIPPET_WORDS))
    end = min(len(names), start + SNIPPET_WORDS)
    return " ".join([*(["…"] if start > 0 else []), *names[start:end],
                     *(["…"] if end < len(names) else [])])


def test_snippets_and_a_second_handle_with_infinite_hits(widgets: Page, rows: list[Row]
                                                         ) -> None:
    page = widgets
    # index: the smallest places, from the standard replica, five at a time
    smallest = by_population(rows)
    expect_ids(page, smallest[:SMALLEST_PAGE], "#smallest")
    page.locator("#smallest button.ais-InfiniteHits-loadMore").click()
    expect_ids(page, smallest[:2 * SMALLEST_PAGE], "#smallest")

    word = "ciudad"
    assert not [w for w in every_word(rows) if w.startswith(word) and w != word]
    page.locator("#searchbox input.ais-SearchBox-input").fill(word)
    found = [r for r in rows if has_word(r, word)]
    expect(page.locator(STATS)).to_have_text(stats_text(len(found)))
    assert sorted(hit_ids(page)) == sorted(r["id"] for r in found)
    # the second handle searches the same words: its matches, smallest first
    expect_ids(page, by_population(found)[:SMALLEST_PAGE], "#smallest")
    # snippet: two words of the name from the match; the match marked
    for row in found:
        hit = page.locator(f'#hits article.hit[data-id="{row["id"]}"]')
        expect(hit.locator(".hit-snippet")).to_have_text(snippet_of(row, word))
        marked = hit.locator(".hit-snippet mark.ais-Snippet-highlighted")
        if any(word in re.findall(r"[^\W_]+", fold(w)) for w in row["name"].split()):
            expect(marked).to_have_count(1)
            expect(marked).to_have_text(re.compile(f"^{word}$", re.IGNORECASE))
        else:
            expect(marked).to_have_count(0)


def test_voice_search_sends_its_language_parameters(
        widgets: Page, served: Server, rows: list[Row]) -> None:
    page = widgets
    page.evaluate("window.spoken = 'ciudad bradford'")
    with page.expect_request(lambda r: r.url.startswith(served.url)
                             and "ciudad bradford" in (r.post_data or "")) as request:
        page.locator("#voice button.ais-VoiceSearch-button").click()
    expect(page.locator("#searchbox input.ais-SearchBox-input")).to_have_value(
        "ciudad bradford")
    sent = json.loads(request.value.post_data or "{}")["requests"]
    asked = [r for r in sent if r.get("query") == "ciudad bradford"]
    assert asked and all(
        (r["queryLanguages"], r["ignorePlurals"], r["removeStopWords"], r["optionalWords"])
        == (["en"], True, True, "ciudad bradford") for r in asked)
    # every word optional: a record with either word
    either = [r for r in rows if has_word(r, "ciudad") or has_word(r, "bradford", prefix=True)]
    assert len(either) > 2 and not [r for r in either if has_word(r, "ciudad")
                                   and has_word(r, "bradford", prefix=True)]
    expect(page.locator(STATS)).to_have_text(stats_text(len(either)))
    assert sorted(hit_ids(page)) == sorted(r["id"] for r in either)


def test_rating_menu_counts_each_step_and_refines(widgets: Page, rows: list[Row]) -> None:
    page = widgets
    steps = page.locator("#stars .ais-RatingMenu-item")
    # 4 & up down to 1 & up (the widget's max is 5), each counting the rows from it to 5
    expect(steps).to_have_text([f"& Up{sum(1 for r in rows if n <= r['stars'] <= 5)}"
                                for n in (4, 3, 2, 1)])
    steps.nth(1).locator("a.ais-RatingMenu-link").click()  # 3 & up
    chosen = [r for r in rows if 3 <= r["stars"] <= 5]
    expect(page.locator(STATS)).to_have_text(stats_text(len(chosen)))
    expect(page.locator("#stars .ais-RatingMenu-item--selected")).to_have_text(
        f"& Up{len(chosen)}")
    assert set(hit_ids(page)) <= {r["id"] for r in chosen}
    # the region menu counts within the choice
    expect(page.locator("#region .ais-Menu-item")).to_have_text(
        items(counts_of(chosen, "continent"), 10))


def levels(counts: Counter[str]) -> list[str]:
    """A hierarchicalMenu level as its items read: the last part of each value, then its
    count, by count then name."""
    ordered = sorted(counts, key=lambda v: (-counts[v], v.split(" > ")[-1]))
    return [f"{value.split(' > ')[-1]}{counts[value]}" for value in ordered]


def test_hierarchical_menu_and_breadcrumb(widgets: Page, rows: list[Row]) -> None:
    page = widgets
    top = page.locator("#hierarchy > .ais-HierarchicalMenu > .ais-HierarchicalMenu-list"
                       " > .ais-HierarchicalMenu-item")
    expect(top).to_have_text(levels(counts_of(rows, "lvl0")))
    page.locator("#hierarchy .ais-HierarchicalMenu-link", has_text="Africa").first.click()
    africa = [r for r in rows if r["lvl0"] == "Africa"]
    expect(page.locator(STATS)).to_have_text(stats_text(len(africa)))
    children = page.locator("#hierarchy .ais-HierarchicalMenu-list--child"
                            " .ais-HierarchicalMenu-item")
    countries = counts_of(africa, "lvl1")
    expect(children).to_have_text(levels(countries))
    crumbs = page.locator("#breadcrumb .ais-Breadcrumb-item")
    expect(crumbs).to_have_text(["Home", ">Africa"])

    country = sorted(countries, key=lambda v: (-countries[v], v))[0]
    name = country.split(" > ")[-1]
    children.locator(".ais-HierarchicalMenu-link", has_text=name).first.click()
    chosen = [r for r in africa if r["lvl1"] == country]
    expect(page.locator(STATS)).to_have_text(stats_text(len(chosen)))
    expect(crumbs).to_have_text(["Home", ">Africa", f">{name}"])
    shown = hit_ids(page)
    assert set(shown) <= {r["id"] for r in chosen} and len(shown) == min(PER_PAGE, len(chosen))

    page.locator("#breadcrumb .ais-Breadcrumb-link", has_text="Africa").click()
    expect(page.locator(STATS)).to_have_text(stats_text(len(africa)))
    page.locator("#breadcrumb .ais-Breadcrumb-link", has_text="Home").click()
    expect(page.locator(STATS)).to_have_text(stats_text(len(rows)))
