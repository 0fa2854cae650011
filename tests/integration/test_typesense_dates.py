"""Dates on a real Typesense 0.24.1: a field stored as ``int64`` Unix seconds and typed
``date`` in the handle's config has ISO-8601 facet values (search facets, facet-value
search, autocomplete), ordered by count then that text; and ``exists: false`` on a field
every document has finds nothing, with facet counts to match.

The rows are written as ISO-8601 text; the loaded documents carry the seconds. Expected
values come from the text, never from converting the engine's numbers back.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.adapters.network.pools import EnginePools
from searchport.adapters.resources import EngineResources
from searchport.adapters.typesense import TypesenseEngine, translate
from searchport.domain.config import IndexConfig
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import FacetValuesQuery, SearchQuery
from searchport.domain.results import FacetValue
from searchport.ports.engine import SearchEnginePort
from tests.integration.typesense_server import app_client, index_settings
from tests.typesense_server import TypesenseServer, session_server

DATED = "dated"
# (moment, documents with it): ties at every count; 999999999 and 1000000000 seconds tie,
# and so do -1 and 0, where the order of the digits is not the order of the dates.
MOMENTS = [
    ("1950-06-01T00:00:00Z", 1),
    ("1969-12-31T23:59:59Z", 2),
    ("1970-01-01T00:00:00Z", 2),
    ("1999-12-31T23:59:59Z", 3),
    ("2001-09-09T01:46:39Z", 2),
    ("2001-09-09T01:46:40Z", 2),
    ("2002-07-18T12:54:00Z", 3),
    ("2020-05-10T00:00:00Z", 1),
]
KINDS = ("essay", "novel", "poem")
SCHEMA: dict[str, Any] = {
    "name": DATED,
    "fields": [
        {"name": "kind", "type": "string", "facet": True},
        {"name": "flag", "type": "bool", "facet": True},
        {"name": "n", "type": "int32", "facet": True},
        {"name": "day", "type": "int64", "facet": True},
        {"name": "note", "type": "string", "optional": True},
    ],
}
DATE_FIELDS = {"day": {"type": "date"}}
ALIASED = {"when": {"field": "day", "type": "date"}}  # an alias: the real field is typed


def build_rows() -> list[dict[str, Any]]:
    rows = []
    for moment, copies in MOMENTS:
        for _ in range(copies):
            i = len(rows)
            rows.append({"id": f"d{i:02d}", "kind": KINDS[i % 3], "flag": i % 2 == 0,
                         "n": i, "day": moment})
    return rows


ROWS = build_rows()


def loaded(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "day": int(datetime.fromisoformat(row["day"]).timestamp())}


def counted(rows: list[dict[str, Any]], field: str) -> list[dict[str, Any]]:
    counts = Counter(str(r[field]).lower() if isinstance(r[field], bool) else str(r[field])
                     for r in rows)
    return [{"value": v, "count": c}
            for v, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> TypesenseServer:
    server = session_server(request.config, tmp_path_factory)
    if not server.has_collection(DATED):
        server.create_collection(SCHEMA, [loaded(r) for r in ROWS])
    return server


@pytest.fixture(scope="module")
def client(server: TypesenseServer) -> Iterator[TestClient[Any]]:
    with app_client({"dated": index_settings(server, DATED, fields=DATE_FIELDS),
                     "aliased": index_settings(server, DATED, fields=ALIASED),
                     "plain": index_settings(server, DATED)}) as client:
        yield client


def get(client: TestClient[Any], path: str, **params: Any) -> Any:
    encoded = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in params.items()}
    response = client.get(path, params=encoded)
    assert response.status_code == 200, response.text
    return response.json()


def engine(server: TypesenseServer, pools: EnginePools) -> SearchEnginePort:
    config = msgspec.convert(index_settings(server, DATED, fields=DATE_FIELDS), IndexConfig)
    return TypesenseEngine("dated", config, EngineResources(Path("."), pools))


# ---------------------------------------------------------------- date facet values


def test_search_facets_on_dates_are_iso_strings_by_count_then_value(
        client: TestClient[Any]) -> None:
    for handle, name in (("dated", "day"), ("aliased", "when")):
        body = get(client, f"/{handle}/search", facets=name, perPage=1)
        assert body["facets"] == {name: counted(ROWS, "day")}


def test_a_date_facets_own_filter_does_not_narrow_it(client: TestClient[Any]) -> None:
    filters = {"day": {"min": "2000-01-01"}, "kind": "novel"}
    body = get(client, "/dated/search", facets="day,kind", filters=filters, perPage=100)
    late = [r for r in ROWS if r["day"] >= "2000-01-01"]
    assert {h["objectID"] for h in body["hits"]} == {r["id"] for r in late
                                                     if r["kind"] == "novel"}
    assert body["facets"] == {"day": counted([r for r in ROWS if r["kind"] == "novel"], "day"),
                              "kind": counted(late, "kind")}


def test_without_type_date_the_seconds_stay_numbers(client: TestClient[Any]) -> None:
    body = get(client, "/plain/search", facets="day", perPage=1)
    seconds = Counter(str(loaded(r)["day"]) for r in ROWS)
    assert {v["value"]: v["count"] for v in body["facets"]["day"]} == dict(seconds)


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5])
def test_facet_values_cut_between_ties_keeps_the_earliest(client: TestClient[Any],
                                                          limit: int) -> None:
    body = get(client, "/dated/facets/day", maxValues=limit)
    assert body == {"field": "day", "values": counted(ROWS, "day")[:limit]}


@pytest.mark.anyio
async def test_search_facet_cut_between_ties_is_settled(server: TypesenseServer) -> None:
    pools = EnginePools()
    try:
        for limit in (1, 2, 4):
            result = await engine(server, pools).search(
                SearchQuery(facets=("day",), max_facet_values=limit, limit=0))
            best = sorted(result.facets["day"], key=lambda v: (-v.count, v.value))[:limit]
            assert best == [FacetValue(value=v["value"], count=v["count"])
                            for v in counted(ROWS, "day")[:limit]]
    finally:
        await pools.aclose()


@pytest.mark.parametrize(("text", "filters"), [
    ("2001-09", None), ("T23:59", None), ("t23:59", None), ("12-31", {"kind": "poem"}),
    ("z", None), ("1970", None), ("0000", None), ("999999999", None), ("-", {"flag": True}),
])
def test_facet_value_search_matches_the_iso_text(client: TestClient[Any], text: str,
                                                 filters: dict[str, Any] | None) -> None:
    rows = [r for r in ROWS if all(r[f] == v for f, v in (filters or {}).items())]
    params: dict[str, Any] = {"q": text, "maxValues": 100}
    if filters:
        params["filters"] = filters
    body = get(client, "/aliased/facets/when", **params)
    expected = [v for v in counted(rows, "day") if text.casefold() in v["value"].casefold()]
    assert body == {"field": "when", "values": expected}


def test_autocomplete_offers_date_values_containing_the_text(client: TestClient[Any]) -> None:
    body = get(client, "/dated/autocomplete", q="2001", facets="day")
    assert body["facets"] == {"day": [v for v in counted(ROWS, "day") if "2001" in v["value"]]}


@pytest.mark.anyio
async def test_date_facet_search_past_the_scan_is_refused(
        server: TypesenseServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """With more values than it reads, the text could match one it never saw: a 400
    naming the field, never a silently short list."""
    monkeypatch.setattr(translate, "DATE_SCAN", len(MOMENTS) - 1)
    pools = EnginePools()
    try:
        with pytest.raises(InvalidRequest, match="'day'"):
            await engine(server, pools).facet_values(FacetValuesQuery(field="day", text="19"))
        monkeypatch.setattr(translate, "DATE_SCAN", len(MOMENTS))
        values = await engine(server, pools).facet_values(FacetValuesQuery(field="day",
                                                                          text="19"))
    finally:
        await pools.aclose()
    assert sorted(values, key=lambda v: (-v.count, v.value)) == [
        FacetValue(value=v["value"], count=v["count"])
        for v in counted(ROWS, "day") if "19" in v["value"]][:20]


# ---------------------------------------------------------------- exists: false


@pytest.mark.parametrize("field", ["id", "kind", "flag", "n", "day"])
def test_exists_false_on_a_field_every_document_has_finds_nothing(
        client: TestClient[Any], field: str) -> None:
    body = get(client, "/dated/search", filters={field: {"exists": False}}, perPage=100,
               facets="kind,flag")
    assert body["totalHits"] == 0 and body["hits"] == []
    own = counted(ROWS, field) if field in ("kind", "flag") else []
    for facet in ("kind", "flag"):
        assert body["facets"].get(facet, []) == (own if facet == field else []), facet


def test_exists_false_with_other_filters_and_text(client: TestClient[Any]) -> None:
    body = get(client, "/dated/search", q="novel", perPage=100, facets="kind",
               filters={"kind": {"exists": False}, "flag": True})
    assert body["totalHits"] == 0 and body["hits"] == []
    novels = [r for r in ROWS if r["kind"] == "novel" and r["flag"]]
    assert body["facets"]["kind"] == counted(novels, "kind")


def test_exists_true_on_such_a_field_finds_everything(client: TestClient[Any]) -> None:
    for field in ("id", "kind", "flag", "n", "day"):
        body = get(client, "/dated/search", filters={field: {"exists": True}}, perPage=100)
        assert {h["objectID"] for h in body["hits"]} == {r["id"] for r in ROWS}, field


def test_exists_on_an_optional_string_is_still_refused(client: TestClient[Any]) -> None:
    response = client.get("/dated/search",
                          params={"filters": json.dumps({"note": {"exists": False}})})
    assert response.status_code == 400
    assert response.json() == {"error": "An exists filter on the string field 'note' is not "
                                        "supported by the typesense engine"}
