"""What the query log promises, through real ``searchport serve`` processes, on each store:
an SQLite file and a real PostgreSQL server of the tests' own.

- a browser page with InstantSearch (``insights: true``) and ``search-insights`` pointed at
  searchport: its searches, a click and a conversion come back through the stock Python
  analytics client, and no request leaves for another host;
- keys without analytics permission get a 403 on every route of Algolia's Analytics
  specification;
- the store going down under load costs no search, and ``/metrics`` counts exactly the
  records that were not written;
- a graceful restart (SIGTERM) in the middle of the load loses nothing acknowledged;
- two instances on one store give one set of figures.

Every expected figure is counted here from what the clients sent and got back.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from algoliasearch.search.client import SearchClientSync

from tests.e2e.conftest import Server, sample_config, start_server
from tests.e2e.ui_support import served_folder
from tests.postgres_server import PostgresServer
from tests.specs.checker import HERE as SPECS
from tests.specs.checker import check

pytestmark = pytest.mark.e2e

ADMIN = "admin-key"  # the plain apiKey: reads everything, analytics included
ANALYST = "analyst-key"  # a named key with analytics: true
READER = "reader-key"  # a named key without it
KEYS = (f"apiKey: {ADMIN}\nkeys:\n  analyst: {{key: {ANALYST}, analytics: true}}\n"
        f"  reader: {{key: {READER}}}\n")


# --- the two stores -------------------------------------------------------------------------

@dataclass
class Store:
    """One analytics store for the servers of a test: ``config`` is a whole config with
    this store as its ``analytics:`` section, and the options a test adds."""

    kind: str
    folder: Path
    postgres: PostgresServer | None = None
    url: str = ""
    servers: list[Server] = field(default_factory=list)

    def config(self, extra: str = "", top: str = "") -> str:
        where = (f"  backend: postgres\n  url: {self.url}\n" if self.kind == "postgres"
                 else f"  path: {self.folder / 'analytics.sqlite3'}\n")
        return sample_config(extra_top=f"{KEYS}{top}analytics:\n{where}{extra}")

    def serve(self, extra: str = "  flushInterval: 0.1\n", top: str = "") -> Server:
        workdir = self.folder / f"server-{len(self.servers)}"
        workdir.mkdir()
        server = start_server(self.config(extra, top), workdir)
        self.servers.append(server)
        return server

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made = Store(request.param, tmp_path)
    if request.param == "postgres":
        made.postgres = request.getfixturevalue("postgres")
        made.url = made.postgres.create_database()
    try:
        yield made
    finally:
        made.stop()


# --- reading the figures ------------------------------------------------------------------

def auth(key: str = ADMIN) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def figure(server: Server, path: str, **params: Any) -> dict[str, Any]:
    answer = server.client.get(path, params={"index": "cities", **params}, headers=auth())
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def until(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.1)


def dropped(server: Server) -> int:
    text = server.client.get("/metrics", headers=auth()).text
    found = re.search(r"^searchport_analytics_dropped_total (\S+)$", text, re.M)
    return int(float(found.group(1))) if found else 0


def searched(server: Server) -> int:
    return int(figure(server, "/2/searches/count")["count"])


# --- every route of the Analytics specification refuses keys without analytics --------------

def analytics_paths() -> list[str]:
    """Every ``GET`` route of Algolia's Analytics API, from the pinned specification's
    endpoints (``filters.attribute`` is ``/2/filters/{attribute}``)."""
    endpoints = json.loads((SPECS / "analytics.json").read_text(encoding="utf-8"))["endpoints"]
    names = sorted(name.removesuffix(".response") for name in endpoints
                   if name != "error.response")
    return ["/2/" + name.replace(".", "/").replace("/attribute", "/region") for name in names]


def test_keys_without_analytics_get_a_403_on_every_route(store: Store) -> None:
    server = store.serve()
    secured = SearchClientSync("app", "unused").generate_secured_api_key(
        ANALYST, {"restrictIndices": ["cities"]})
    paths = analytics_paths()
    assert len(paths) == 16 and "/2/filters/region" in paths
    for path in paths:
        for key in (ADMIN, ANALYST):
            allowed = server.client.get(path, params={"index": "cities"}, headers=auth(key))
            assert allowed.status_code == 200, (path, allowed.text)
            check("analytics", path.removeprefix("/2/").replace("/", ".").replace(
                ".region", ".attribute") + ".response", allowed.json(), what=path)
        for key in (READER, secured):
            refused = server.client.get(path, params={"index": "cities"}, headers=auth(key))
            assert refused.status_code == 403, (path, key, refused.text)
            check("analytics", "error.response", refused.json(), what=path)
            assert "analytics" in refused.json()["message"]
        # as the stock clients send the key, too
        refused = server.client.get(path, params={"index": "cities"}, headers={
            "X-Algolia-API-Key": READER, "X-Algolia-Application-Id": "app"})
        assert refused.status_code == 403, (path, refused.text)


# --- load, an outage, a restart -------------------------------------------------------------

@dataclass
class Load:
    """Searches with new words, ``workers`` at a time, until ``stop`` (or ``cap`` searches);
    with ``tracked``, every search asks for a queryID and every third one is clicked."""

    server: Server
    tracked: bool = False
    workers: int = 4
    cap: int = 900
    stop: threading.Event = field(default_factory=threading.Event)
    statuses: list[int] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)  # the words answered with a 200
    clicks: int = 0  # click events answered with a 200
    clicks_sent: int = 0
    asked: int = 0  # searches started
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> Load:
        self._threads = [threading.Thread(target=self._work, daemon=True)
                         for _ in range(self.workers)]
        for thread in self._threads:
            thread.start()
        return self

    def join(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def _word(self) -> str | None:
        with self._lock:
            if self.asked >= self.cap or self.stop.is_set():
                return None
            self.asked += 1
            return f"word{self.asked}"

    def _work(self) -> None:
        with httpx.Client(base_url=self.server.url, timeout=30, headers=auth()) as client:
            while (word := self._word()) is not None:
                params = {"q": word, **({"clickAnalytics": "true"} if self.tracked else {})}
                try:
                    answer = client.get("/cities/search", params=params)
                except httpx.TransportError:  # the server is gone: nothing acknowledged
                    return
                with self._lock:
                    self.statuses.append(answer.status_code)
                    if answer.status_code == 200:
                        self.acknowledged.append(word)
                if self.tracked and answer.status_code == 200 and int(word[4:]) % 3 == 0:
                    self._click(client, answer.json()["queryID"])

    def _click(self, client: httpx.Client, query_id: str) -> None:
        event = {"eventType": "click", "eventName": "Hit Clicked", "index": "cities",
                 "userToken": "loader", "objectIDs": ["any"], "positions": [1],
                 "queryID": query_id}
        with self._lock:
            self.clicks_sent += 1
        try:
            sent = client.post("/1/events", json={"events": [event]})
        except httpx.TransportError:
            return
        if sent.status_code == 200:
            with self._lock:
                self.clicks += 1


@contextmanager
def outage(store: Store) -> Iterator[None]:
    """The store unusable for a while: PostgreSQL stopped; the SQLite file locked by
    another writer (as a backup or a second program holding it would)."""
    if store.kind == "postgres":
        assert store.postgres is not None
        store.postgres.stop()
        try:
            yield
        finally:
            store.postgres.start()
        return
    holder = sqlite3.connect(store.folder / "analytics.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        holder.rollback()
        holder.close()


def test_the_store_going_down_under_load_loses_no_search(store: Store) -> None:
    server = store.serve("  flushInterval: 0.1\n  timeout: 0.5\n")
    work = Load(server, cap=100_000).start()
    try:
        until(lambda: searched(server) >= 50, "the first searches written")
        with outage(store):
            time.sleep(3)  # searches go on, the writes fail
        time.sleep(1)
    finally:
        work.join()
    assert work.statuses and set(work.statuses) == {200}  # every search answered
    total = len(work.statuses)
    # each search is either written or counted as dropped, once the buffer is empty again
    until(lambda: searched(server) + dropped(server) == total,
          f"written + dropped = {total} searches")
    assert dropped(server) > 0
    assert searched(server) > 50
    log = server.output()
    assert "records are dropped" in log and "the store works again" in log


def test_a_graceful_restart_loses_nothing_acknowledged(store: Store) -> None:
    # written only at the shutdown: a flush long after the test, batches larger than the load
    server = store.serve("  flushInterval: 60\n")
    work = Load(server, tracked=True, cap=800).start()
    until(lambda: len(work.acknowledged) >= 150, "searches under way")
    server.stop()  # SIGTERM while the searches go on; waits for the process to exit
    work.join()
    assert set(work.statuses) == {200} and work.clicks > 0
    assert "Traceback" not in server.output()
    again = store.serve()
    found = figure(again, "/2/searches", limit=1000)["searches"]
    words = {row["search"] for row in found}
    assert set(work.acknowledged) <= words  # every search answered with a 200 was kept
    assert len(words) <= work.asked  # and nothing that was not asked
    assert searched(again) == len(words)
    ctr = figure(again, "/2/clicks/clickThroughRate")
    assert work.clicks <= ctr["clickCount"] <= work.clicks_sent
    assert ctr["trackedSearchCount"] == len(words)


# --- two instances, one store -----------------------------------------------------------------

def test_two_instances_on_one_store_give_one_set_of_figures(store: Store) -> None:
    one, two = store.serve(), store.serve()
    sent = [("paris", one), ("shanghai", two), ("paris", two), ("qqqzzz", one),
            ("barcelona", one), ("qqqzzz", two)]
    query_ids = []
    for word, server in sent:
        answer = server.client.get("/cities/search", headers=auth(),
                                   params={"q": word, "clickAnalytics": "true"})
        assert answer.status_code == 200
        query_ids.append(answer.json()["queryID"])
    # a click on instance one for a search made on instance two
    clicked = two.client.post("/1/events", headers=auth(), json={"events": [{
        "eventType": "click", "eventName": "c", "index": "cities", "userToken": "u",
        "objectIDs": ["x"], "positions": [2], "queryID": query_ids[1]}]})
    assert clicked.status_code == 200
    until(lambda: searched(one) == len(sent), "the searches of both instances written")
    until(lambda: figure(two, "/2/clicks/clickThroughRate")["clickCount"] == 1,
          "the click written")
    for path in ("/2/searches/count", "/2/searches/noResults", "/2/clicks/clickThroughRate",
                 "/2/clicks/averageClickPosition", "/2/users/count", "/2/searches"):
        assert figure(one, path) == figure(two, path), path
    assert figure(one, "/2/searches/noResults")["searches"] == [
        {"search": "qqqzzz", "count": 2, "withFilterCount": 0}]
    ctr = figure(one, "/2/clicks/clickThroughRate")
    assert (ctr["trackedSearchCount"], ctr["rate"]) == (6, 1 / 6)


# --- a browser page with InstantSearch and search-insights ---------------------------------

@pytest.fixture(scope="module")
def page_origin(npm_project: Path) -> Iterator[str]:
    """tests/e2e/instantsearch (its page and node_modules) on a port of its own: the page
    is on another origin than searchport, as in production."""
    assert (npm_project / "node_modules/search-insights/dist/search-insights.min.js").is_file()
    with served_folder(npm_project, "insights-page") as origin:
        yield origin


def analytics_client(server: Server) -> Any:
    """The stock Python analytics client, only its host changed."""
    from algoliasearch.analytics.client import AnalyticsClientSync
    from algoliasearch.analytics.config import AnalyticsConfig
    from algoliasearch.http.hosts import Host, HostsCollection

    address = urlsplit(server.url)
    config = AnalyticsConfig("searchport-e2e", ADMIN)
    config.hosts = HostsCollection([Host(url=address.hostname or "", port=address.port,
                                         scheme="http")])
    return AnalyticsClientSync.create_with_config(config)


def test_a_page_with_instantsearch_insights_sends_its_events_to_searchport(
        store: Store, page_origin: str, page: Any) -> None:
    from playwright.sync_api import Request, expect

    server = store.serve(top=f'corsOrigins: ["{page_origin}"]\n')
    sent: list[Request] = []
    page.on("request", lambda request: sent.append(request))
    host = urlsplit(server.url).netloc
    page.goto(f"{page_origin}/insights.html?host={host}&index=cities&apiKey={ADMIN}")
    expect(page.locator("#hits article.hit").first).to_be_visible()
    page.locator("#searchbox input.ais-SearchBox-input").fill("shanghai")
    expect(page.locator("#hits article.hit").first).to_contain_text("Shanghai")
    page.locator("#hits .hit-name").first.click()  # InstantSearch sends the click itself
    page.locator("#hits button.buy").first.click()  # the page sends the conversion

    def events(kind: str) -> list[dict[str, Any]]:
        return [event for request in sent if urlsplit(request.url).path == "/1/events"
                for event in json.loads(request.post_data or "{}")["events"]
                if event["eventType"] == kind]

    until(lambda: events("click") and events("conversion"), "the page's events sent")
    # nothing went anywhere but the page's own origin and searchport
    assert {urlsplit(r.url).netloc for r in sent} <= {urlsplit(page_origin).netloc, host}
    beacons = [r for r in sent if urlsplit(r.url).path == "/1/events"]
    assert all(f"X-Algolia-API-Key={ADMIN}" in r.url for r in beacons)

    # what the page asked and sent, counted from its own requests
    searches = [query for r in sent if r.url.startswith(server.url) and r.method == "POST"
                and urlsplit(r.url).path == "/1/indexes/*/queries"
                for query in json.loads(r.post_data or "{}")["requests"]]
    assert searches and all(q.get("clickAnalytics") is True for q in searches)
    words = [q.get("query", "") for q in searches]
    clicks, conversions = events("click"), events("conversion")
    clicked = {e["queryID"] for e in clicks}
    converted = {e["queryID"] for e in conversions}
    assert len(clicked) == len(converted) == 1

    analytics = analytics_client(server)
    until(lambda: analytics.get_searches_count(index="cities").count == len(searches),
          "the page's searches counted")
    until(lambda: analytics.get_click_through_rate(index="cities").click_count == len(clicks),
          "the page's clicks counted")
    until(lambda: analytics.get_conversion_rate(index="cities").conversion_count
          == len(conversions), "the page's conversions counted")
    ctr = analytics.get_click_through_rate(index="cities")
    assert (ctr.tracked_search_count, ctr.rate) == (len(searches), len(clicked) / len(searches))
    conversion = analytics.get_conversion_rate(index="cities")
    assert (conversion.conversion_count, conversion.rate) == (
        len(conversions), len(converted) / len(searches))
    top = analytics.get_top_searches(index="cities").actual_instance.searches
    assert sorted((s.search, s.count) for s in top) == sorted(
        (word, words.count(word)) for word in set(words))
