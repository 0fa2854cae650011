"""The search page's Keywords <-> Meaning slider, in a real Chromium against a real
``searchport serve`` with the builtin model: on a handle with a ``semantic`` section the
slider is shown and moving it searches again with ``semantic=<value>``; a paraphrase (a
description of a place in other words than its own) ranks differently by words and by
meaning. Expected rankings are the API's own answers to the same searches."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable

import pytest

from searchport import demo
from tests.e2e.conftest import Server
from tests.e2e.ui_support import require_chromium

pytest.importorskip("onnxruntime")
require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402  (only once chromium is known to be there)

pytestmark = pytest.mark.e2e

PLACES = 150  # the demo's most populous places: their vectors take a few seconds
TOKYO = "1850147"
PARAPHRASE = "where they pay with the yen"  # no place says "yen" beside "pay"; Tokyo's says
# "The language is Japanese, the currency the yen"


@pytest.fixture(scope="module")
def meaning_server(server_factory: Callable[..., Server],
                   tmp_path_factory: pytest.TempPathFactory) -> Server:
    folder = tmp_path_factory.mktemp("places")
    with gzip.open(demo.PLACES, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines][:PLACES]
    assert TOKYO in {row["id"] for row in rows}
    source = folder / "places.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = f"""
analytics: {{ backend: none }}
indexes:
  places:
    engine: tantivy
    path: {json.dumps(str(folder / "index"))}
    source: {json.dumps(str(source))}
    idField: id
    fields:
      name: {{ type: text, weight: 3 }}
      description: {{ type: text, weight: 1 }}
      region: {{ type: keyword }}
      population: {{ type: integer }}
      location: {{ type: geo_point }}
    defaults: {{ facets: [region] }}
    semantic: {{ fields: [description] }}
  words:
    engine: tantivy
    path: {json.dumps(str(folder / "words"))}
    source: {json.dumps(str(source))}
    idField: id
    fields:
      name: {{ type: text, weight: 3 }}
      region: {{ type: keyword }}
      location: {{ type: geo_point }}
"""
    return server_factory(config, timeout=180.0)


def ranked(server: Server, semantic: float) -> list[str]:
    answer = server.client.get("/places/search", params={
        "q": PARAPHRASE, "semantic": semantic, "perPage": 5, "fields": "name"})
    assert answer.status_code == 200, answer.text
    return [hit["objectID"] for hit in answer.json()["hits"]]


def shown(page: Page) -> list[str]:
    return page.locator("#hits li.hit").evaluate_all(
        "items => items.slice(0, 5).map(item => item.dataset.id)")


def test_the_slider_moves_the_ranking_from_words_to_meaning(
        page: Page, meaning_server: Server) -> None:
    by_words, by_meaning = ranked(meaning_server, 0), ranked(meaning_server, 1)
    assert by_meaning[0] == TOKYO and by_words[0] != TOKYO

    page.goto(f"{meaning_server.url}/ui?index=places")
    expect(page.locator("#hits li.hit").first).to_be_visible()
    slider = page.locator("#semantic")
    expect(page.locator("#meaning")).to_be_visible()
    expect(slider).to_have_value("0.5")
    expect(page.locator("#meaning-value")).to_have_text("50% meaning")

    page.locator("#q").fill(PARAPHRASE)
    with page.expect_response(lambda r: "/places/search" in r.url and "semantic=0&" in r.url):
        slider.fill("0")
    expect(page.locator("#meaning-value")).to_have_text("words only")
    expect(page.locator("#hits li.hit").first).to_have_attribute("data-id", by_words[0])
    assert shown(page) == by_words
    assert "semantic=0" in page.url

    with page.expect_response(lambda r: "/places/search" in r.url and "semantic=1&" in r.url):
        slider.fill("1")
    expect(page.locator("#hits li.hit").first).to_have_attribute("data-id", TOKYO)
    assert shown(page) == by_meaning != by_words
    assert "semantic=1" in page.url

    # a reload keeps the slider where it was; Back returns to the words' ranking
    page.reload()
    expect(slider).to_have_value("1")
    expect(page.locator("#hits li.hit").first).to_have_attribute("data-id", TOKYO)
    page.go_back()
    expect(page.locator("#hits li.hit").first).to_have_attribute("data-id", by_words[0])
    expect(slider).to_have_value("0")


def test_a_sort_turns_the_slider_off_and_a_handle_without_meaning_hides_it(
        page: Page, meaning_server: Server) -> None:
    page.goto(f"{meaning_server.url}/ui?index=places&q=yen")
    expect(page.locator("#hits li.hit").first).to_be_visible()
    with page.expect_response(lambda r: "/places/search" in r.url and "sort=" in r.url) as sent:
        page.locator("#sort").select_option("population:desc")
    assert "semantic=" not in sent.value.url
    expect(page.locator("#semantic")).to_be_disabled()
    expect(page.locator("#error")).to_be_hidden()

    with page.expect_response(lambda r: "/words/search" in r.url) as sent:
        page.locator("#handle").select_option("words")
    assert "semantic=" not in sent.value.url
    expect(page.locator("#meaning")).to_be_hidden()
    expect(page.locator("#hits li.hit").first).to_be_visible()
