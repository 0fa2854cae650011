"""The stock Python ``algoliasearch`` client's read calls against a real ``searchport serve``:
get_object, get_objects, browse (and the client's browse_objects loop), get_settings,
list_indices, and how it sees an error."""

from __future__ import annotations

from typing import Any

import pytest
from algoliasearch.http.exceptions import RequestException
from algoliasearch.http.hosts import Host, HostsCollection
from algoliasearch.search.client import SearchClientSync
from algoliasearch.search.config import SearchConfig

from tests.e2e.conftest import Server

Rows = list[dict[str, Any]]


@pytest.fixture(scope="module")
def client(server: Server) -> SearchClientSync:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    config = SearchConfig("any-app-id", "any-key")
    config.hosts = HostsCollection([Host(url=host, port=int(port), scheme="http")])
    return SearchClientSync.create_with_config(config)


def test_get_object_returns_the_record(client: SearchClientSync, rows: Rows) -> None:
    row = rows[7]
    record = client.get_object("cities", row["id"])
    assert record == {"objectID": row["id"], **{k: v for k, v in row.items()
                                                if k != "continent"}, "region": row["continent"]}
    chosen = client.get_object("cities", row["id"], attributes_to_retrieve=["name", "region"])
    assert chosen == {"objectID": row["id"], "name": row["name"], "region": row["continent"]}


def test_a_missing_object_is_a_404_the_client_can_read(client: SearchClientSync) -> None:
    with pytest.raises(RequestException) as caught:
        client.get_object("cities", "no-such-id")
    assert caught.value.status_code == 404
    assert str(caught.value) == "ObjectID does not exist"
    with pytest.raises(RequestException) as unknown:
        client.get_object("no-such-handle", "1")
    assert unknown.value.status_code == 404 and "no-such-handle" in str(unknown.value)


def test_get_objects_answers_in_request_order(client: SearchClientSync, rows: Rows) -> None:
    answer = client.get_objects({"requests": [
        {"indexName": "cities", "objectID": rows[3]["id"]},
        {"indexName": "cities", "objectID": "missing"},
        {"indexName": "cities", "objectID": rows[0]["id"], "attributesToRetrieve": ["name"]},
    ]})
    first, missing, last = answer.results
    assert first is not None and first["name"] == rows[3]["name"]
    assert missing is None
    assert last == {"objectID": rows[0]["id"], "name": rows[0]["name"]}


def test_browse_pages_through_every_matching_record(client: SearchClientSync,
                                                    rows: Rows) -> None:
    first = client.browse("cities", {"hitsPerPage": 40, "filters": "region:Europe"})
    want = {r["id"] for r in rows if r["continent"] == "Europe"}
    assert first.nb_hits == len(want) > 40 and first.cursor
    seen: list[str] = []
    client.browse_objects(
        "cities", aggregator=lambda page: seen.extend(h.object_id for h in page.hits),
        browse_params={"hitsPerPage": 40, "filters": "region:Europe"},
    )
    assert sorted(seen) == sorted(want)  # each record once
    last = client.browse("cities", {"hitsPerPage": 40, "filters": "region:Europe",
                                    "page": first.nb_pages - 1})
    assert last.cursor is None


def test_a_forged_cursor_is_a_400(client: SearchClientSync) -> None:
    with pytest.raises(RequestException) as caught:
        client.browse("cities", {"cursor": "not-a-cursor!"})
    assert caught.value.status_code == 400 and "cursor" in str(caught.value)


def test_get_settings_tells_what_the_config_says(client: SearchClientSync) -> None:
    settings = client.get_settings("cities").to_dict()
    assert settings["searchableAttributes"] == ["name", "alternateNames", "country"]
    assert settings["attributesForFaceting"][:2] == ["region", "country"]
    assert {"population", "capital"} <= set(settings["attributesForFaceting"])
    # the tags are those a search without tags of its own really puts around a match
    hit = client.search_single_index("cities", {"query": "paris", "hitsPerPage": 1}
                                     ).to_dict()["hits"][0]
    marked = hit["_highlightResult"]["name"]["value"]
    assert (settings["highlightPreTag"], settings["highlightPostTag"]) == ("<em>", "</em>")
    assert marked.count(settings["highlightPreTag"]) == 1
    assert marked.count(settings["highlightPostTag"]) == 1


def test_list_indices_lists_each_handle_with_its_entries(client: SearchClientSync,
                                                         rows: Rows) -> None:
    listing = client.list_indices()
    assert [(i.name, i.entries) for i in listing.items] == [("cities", len(rows))]


def test_a_call_searchport_does_not_answer_is_a_404_with_a_message(
        client: SearchClientSync) -> None:
    with pytest.raises(RequestException) as caught:
        client.list_api_keys()
    assert caught.value.status_code == 404 and str(caught.value)
    assert "searchport does not support this Algolia call" in str(caught.value)


def test_a_write_says_searchport_is_read_only(client: SearchClientSync) -> None:
    """What a developer who points an indexing script at searchport sees: the client's
    exception says searchport is read-only, not a bare route error."""
    for call in (lambda: client.save_object("cities", {"objectID": "x1", "name": "X"}),
                 lambda: client.set_settings("cities", {"hitsPerPage": 5}),
                 lambda: client.delete_index("cities")):
        with pytest.raises(RequestException) as caught:
            call()
        assert caught.value.status_code in (404, 405)
        assert "read-only" in str(caught.value), str(caught.value)
