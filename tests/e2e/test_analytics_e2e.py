"""The query log and Insights events through a real ``searchport serve`` process: searches
on the JSON and Algolia routes, events as ``search-insights`` sends them, the figures read
back on the Analytics API (every answer held against Algolia's specifications), the SQLite
file written on a graceful stop, and a store that cannot be used costing no search.
test_analytics_backends_e2e.py holds the same promises on PostgreSQL too, under load."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from searchport.entrypoints.container import ANALYTICS_REPORTS
from tests.e2e.conftest import Server, day_clear_of_midnight, sample_config, start_server
from tests.specs.checker import check

KEY = "analytics-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
FAST = "analytics:\n  flushInterval: 0.1\n"


@pytest.fixture
def today() -> str:
    """The day (UTC) the test's searches are counted under: one day throughout."""
    return day_clear_of_midnight(60).isoformat()


def read(server: Server, path: str, spec: str, **params: Any) -> dict[str, Any]:
    answer = server.client.get(path, params={"index": "cities", **params}, headers=AUTH)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    check("analytics", spec, body, what=path)
    return body


def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the figures did not arrive in time"
        time.sleep(0.1)


def send_events(server: Server, events: list[dict[str, Any]], key: str = KEY) -> httpx.Response:
    """As search-insights sends them with sendBeacon: the key in the query string, the
    body as text/plain."""
    return server.client.post(
        "/1/events", params={"X-Algolia-Application-Id": "app", "X-Algolia-API-Key": key,
                             "X-Algolia-Agent": "insights-js (2.17.3)"},
        content=json.dumps({"events": events}), headers={"Content-Type": "text/plain"})


def test_searches_and_events_come_back_as_figures(server_factory: Callable[..., Server],
                                                  today: str) -> None:
    server = server_factory(sample_config(extra_top=f"apiKey: {KEY}\n{FAST}"))
    paris = server.client.get("/cities/search", params={
        "q": "  PARIS ", "clickAnalytics": "true", "userToken": "user-1"}, headers=AUTH)
    assert paris.status_code == 200
    query_id = paris.json()["queryID"]
    assert re.fullmatch(r"[0-9a-f]{32}", query_id)
    assert server.client.get("/cities/search", params={"q": "zzzqqq"},
                             headers=AUTH).json()["totalHits"] == 0
    assert "queryID" not in server.client.get(
        "/cities/search", params={"q": "Lyon", "analytics": "false"}, headers=AUTH).json()
    multi = server.client.post("/1/indexes/*/queries", headers=AUTH, json={"requests": [
        {"indexName": "cities", "params": "query=Barcelona&clickAnalytics=true"},
        {"indexName": "cities", "query": "zzzqqq", "facetFilters": [["region:Europe"]]}]})
    assert multi.status_code == 200
    berlin = multi.json()["results"][0]["queryID"]
    assert re.fullmatch(r"[0-9a-f]{32}", berlin) and berlin != query_id
    check("algolia", "multi.response", multi.json())

    sent = send_events(server, [
        {"eventType": "click", "eventName": "Hit Clicked", "index": "cities",
         "userToken": "user-1", "objectIDs": [paris.json()["hits"][0]["id"]],
         "positions": [2], "queryID": query_id, "algoliaSource": ["instantsearch"]},
        {"eventType": "conversion", "eventName": "Bought", "index": "cities",
         "userToken": "user-1", "objectIDs": ["x"], "queryID": query_id},
        {"eventType": "instantsearch", "eventName": "__start__", "widgets": []},
    ])
    assert (sent.status_code, sent.json()) == (200, {"status": 200, "message": "OK"})
    check("insights", "events.response", sent.json())

    until(lambda: read(server, "/2/searches/count", "searches.count.response")["count"] == 4)
    count = read(server, "/2/searches/count", "searches.count.response")
    assert {d["date"]: d["count"] for d in count["dates"]}[today] == 4
    until(lambda: read(server, "/2/clicks/clickThroughRate",
                       "clicks.clickThroughRate.response")["clickCount"] == 1)
    ctr = read(server, "/2/clicks/clickThroughRate", "clicks.clickThroughRate.response")
    assert (ctr["rate"], ctr["trackedSearchCount"]) == (0.5, 2)
    conversions = read(server, "/2/conversions/conversionRate",
                       "conversions.conversionRate.response")
    assert (conversions["rate"], conversions["conversionCount"]) == (0.5, 1)
    average = read(server, "/2/clicks/averageClickPosition",
                   "clicks.averageClickPosition.response")
    assert (average["average"], average["clickCount"]) == (2.0, 1)
    none = read(server, "/2/searches/noResults", "searches.noResults.response")
    assert none["searches"] == [{"search": "zzzqqq", "count": 2, "withFilterCount": 1}]
    users = read(server, "/2/users/count", "users.count.response")
    assert users["count"] == 2  # user-1, and this test's client address
    status = read(server, "/2/status", "status.response")
    assert status["updatedAt"].startswith(today)
    metrics = server.client.get("/metrics", headers=AUTH).text
    assert "searchport_analytics_dropped_total 0.0" in metrics


def test_the_events_route_answers_in_the_insights_shape(
        server_factory: Callable[..., Server]) -> None:
    server = server_factory(sample_config(
        extra_top=f"apiKey: {KEY}\nkeys:\n  films:\n    key: films-key\n    handles: [nope*]\n"))
    event = {"eventType": "click", "eventName": "c", "index": "cities", "userToken": "u",
             "objectIDs": ["1"]}
    for answer, status in (
        (send_events(server, [event], key="wrong"), 401),
        (send_events(server, [{**event, "positions": [0], "queryID": "a" * 32}]), 422),
        (send_events(server, []), 422),
        (send_events(server, [event], key="films-key"), 403),
        (server.client.post("/1/events", headers=AUTH, content=b"{"), 422),
    ):
        assert answer.status_code == status, answer.text
        assert set(answer.json()) == {"status", "message"} and answer.json()["status"] == status
        check("insights", "events.response", answer.json())
    refused = send_events(server, [event, {**event, "positions": [0], "queryID": "a" * 32}])
    assert refused.json()["message"].startswith("events[1].positions: ")
    big = [{**event, "objectIDs": [f"object-{i}-{'x' * 60}" for i in range(3)]}
           for _ in range(1000)]
    assert len(json.dumps({"events": big})) > 65_536  # past the default maxBodyBytes
    assert send_events(server, big).status_code == 200
    assert send_events(server, [*big, event]).json() == {
        "status": 422, "message": "Cannot process more than 1000 events in a batch"}
    for path in (*ANALYTICS_REPORTS, "/2/filters/region"):
        if "{" in path:
            continue
        refused = server.client.get(path, params={"index": "cities"},
                                    headers={"Authorization": "Bearer films-key"})
        assert refused.status_code == 403, path


def test_a_graceful_stop_writes_what_is_buffered(tmp_path: Path) -> None:
    server = start_server(sample_config(extra_top="analytics:\n  flushInterval: 60\n"),
                          tmp_path)
    try:
        for word in ("paris", "lyon", "berlin", "paris", "rome"):
            assert server.client.get("/cities/search", params={"q": word}).status_code == 200
    finally:
        server.stop()  # SIGTERM, then the process's own graceful shutdown
    with sqlite3.connect(tmp_path / "analytics.sqlite3") as db:
        found = sorted(q for (q,) in db.execute("SELECT query FROM analytics_searches"))
    assert found == ["berlin", "lyon", "paris", "paris", "rome"]


def test_a_store_that_cannot_be_used_costs_no_search(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where a folder should be")
    server = start_server(sample_config(
        extra_top="analytics:\n  path: taken/analytics.sqlite3\n  flushInterval: 0.1\n"),
        tmp_path)
    try:
        for word in ("paris", "lyon", "berlin"):
            assert server.client.get("/cities/search", params={"q": word}).status_code == 200

        def dropped() -> float:
            text = server.client.get("/metrics").text
            found = re.search(r"^searchport_analytics_dropped_total (\S+)$", text, re.M)
            return float(found.group(1)) if found else 0.0

        until(lambda: dropped() == 3)
    finally:
        server.stop()
    assert "analytics:" in server.output()  # the log says why nothing is written


def clients(server: Server, key: str) -> tuple[Any, Any, Any]:
    """The stock algoliasearch clients (search, insights, analytics), only their host
    changed."""
    from algoliasearch.analytics.client import AnalyticsClientSync
    from algoliasearch.analytics.config import AnalyticsConfig
    from algoliasearch.http.hosts import Host, HostsCollection
    from algoliasearch.insights.client import InsightsClientSync
    from algoliasearch.insights.config import InsightsConfig
    from algoliasearch.search.client import SearchClientSync
    from algoliasearch.search.config import SearchConfig

    host, port = server.url.removeprefix("http://").split(":")
    made = []
    for config, client in ((SearchConfig("app", key), SearchClientSync),
                           (InsightsConfig("app", key), InsightsClientSync),
                           (AnalyticsConfig("app", key), AnalyticsClientSync)):
        config.hosts = HostsCollection([Host(url=host, port=int(port), scheme="http")])
        made.append(client.create_with_config(config))
    return made[0], made[1], made[2]


def test_the_stock_python_clients_read_what_they_sent(
        server_factory: Callable[..., Server], today: str) -> None:
    server = server_factory(sample_config(extra_top=f"apiKey: {KEY}\n{FAST}"))
    search, insights, analytics = clients(server, KEY)
    found = search.search_single_index("cities", {"query": "Barcelona", "clickAnalytics": True,
                                                  "userToken": "user-9"})
    assert found.query_id and found.hits
    search.search_single_index("cities", {"query": "qqqzzz"})
    answer = insights.push_events({"events": [
        {"eventType": "click", "eventName": "Hit Clicked", "index": "cities",
         "userToken": "user-9", "objectIDs": [found.hits[0].object_id], "positions": [1],
         "queryID": found.query_id},
        {"eventType": "conversion", "eventName": "Bought", "index": "cities",
         "userToken": "user-9", "objectIDs": [found.hits[0].object_id],
         "queryID": found.query_id}]})
    assert (answer.status, answer.message) == (200, "OK")
    until(lambda: analytics.get_searches_count(index="cities").count == 2)
    until(lambda: analytics.get_click_through_rate(index="cities").click_count == 1)
    ctr = analytics.get_click_through_rate(index="cities", start_date=today,
                                           end_date=today)
    assert (ctr.rate, ctr.tracked_search_count, len(ctr.dates)) == (1.0, 1, 1)
    assert analytics.get_conversion_rate(index="cities").rate == 1.0
    assert analytics.get_average_click_position(index="cities").average == 1.0
    positions = analytics.get_click_positions(index="cities").positions
    assert [(p.position, p.click_count) for p in positions][:2] == [([1, 1], 1), ([2, 2], 0)]
    none = analytics.get_searches_no_results(index="cities").searches
    assert [(s.search, s.count) for s in none] == [("qqqzzz", 1)]
    assert analytics.get_no_results_rate(index="cities").rate == 0.5
    assert analytics.get_no_click_rate(index="cities").rate == 0.0
    assert analytics.get_searches_no_clicks(index="cities").searches == []
    assert analytics.get_users_count(index="cities").count == 2
    assert analytics.get_status(index="cities").updated_at.startswith(today)


def test_top_searches_hits_and_filters_through_the_stock_client(
        server_factory: Callable[..., Server]) -> None:
    server = server_factory(sample_config(extra_top=f"apiKey: {KEY}\n{FAST}"))
    search, insights, analytics = clients(server, KEY)
    found = search.search_single_index("cities", {
        "query": "Barcelona", "clickAnalytics": True, "userToken": "user-7",
        "analyticsTags": ["mobile", "lang:en"]})
    assert found.query_id and found.hits
    shown = [h.object_id for h in found.hits]
    search.search_single_index("cities", {"query": "barcelona", "analyticsTags": ["desktop"]})
    search.search_single_index("cities", {"query": "qqqzzz", "facetFilters": [["region:Europe"]],
                                          "analyticsTags": ["mobile"]})
    sent = insights.push_events({"events": [
        {"eventType": "click", "eventName": "Hit Clicked", "index": "cities",
         "userToken": "user-7", "objectIDs": [shown[0]], "positions": [1],
         "queryID": found.query_id},
        {"eventType": "conversion", "eventSubtype": "purchase", "eventName": "Bought",
         "index": "cities", "userToken": "user-7", "objectIDs": [shown[0]],
         "queryID": found.query_id, "value": 30, "currency": "EUR"}]})
    assert sent.status == 200
    until(lambda: analytics.get_searches_count(index="cities").count == 3)
    until(lambda: analytics.get_click_through_rate(index="cities").click_count == 1)

    def raw(path: str, spec: str, **params: Any) -> dict[str, Any]:
        return read(server, path, spec, **params)

    top = raw("/2/searches", "searches.response", direction="desc")
    assert top["searches"] == [{"search": "barcelona", "count": 2, "nbHits": found.nb_hits},
                               {"search": "qqqzzz", "count": 1, "nbHits": 0}]
    rich = raw("/2/searches", "searches.response", clickAnalytics="true",
               revenueAnalytics="true", orderBy="clickThroughRate", direction="desc")
    first = rich["searches"][0]
    assert (first["search"], first["trackedSearchCount"], first["clickCount"],
            first["clickThroughRate"], first["averageClickPosition"],
            first["purchaseCount"], first["purchaseRate"]) == (
        "barcelona", 1, 1, 1.0, 1.0, 1, 1.0)
    assert first["currencies"] == {"EUR": {"currency": "EUR", "revenue": 30.0}}
    assert first["clickPositions"][0] == {"position": [1, 1], "clickCount": 1}
    assert rich["searches"][1]["clickThroughRate"] is None  # no tracked search: null
    client_top = analytics.get_top_searches(index="cities", click_analytics=True,
                                            direction="desc", tags="mobile")
    assert [(s.search, s.count)
            for s in client_top.actual_instance.searches] == [("barcelona", 1), ("qqqzzz", 1)]

    hits = raw("/2/hits", "hits.response", clickAnalytics="true", search="Barcelona")
    assert hits["hits"][0] == {"hit": shown[0], "count": 2, "clickThroughRate": 1.0,
                               "conversionRate": 1.0, "trackedHitCount": 1, "clickCount": 1,
                               "conversionCount": 1}
    assert {h["hit"] for h in hits["hits"]} <= set(shown)
    assert len(analytics.get_top_hits(index="cities").actual_instance.hits) > 0

    attributes = analytics.get_top_filter_attributes(index="cities")
    assert [(a.attribute, a.count) for a in attributes.attributes] == [("region", 1)]
    values = raw("/2/filters/region", "filters.attribute.response")
    assert values == {"values": [{"attribute": "region", "operator": ":", "value": "Europe",
                                  "count": 1}]}
    none = raw("/2/filters/noResults", "filters.noResults.response")
    assert none == {"values": [{"count": 1, "values": [
        {"attribute": "region", "operator": ":", "value": "Europe"}]}]}
    assert analytics.get_top_filters_no_results(index="cities").values is not None
    assert raw("/2/filters", "filters.response", tags="desktop") == {"attributes": []}
    count = raw("/2/searches/count", "searches.count.response", tags="mobile OR desktop")
    assert count["count"] == 3
    assert raw("/2/searches/count", "searches.count.response",
               tags="mobile AND lang:en")["count"] == 1
    bad = server.client.get("/2/searches", params={"index": "cities", "orderBy": "clickCount"},
                            headers=AUTH)
    assert bad.status_code == 400 and "orderBy" in bad.text
    check("analytics", "error.response", bad.json())
