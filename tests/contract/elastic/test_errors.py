"""Engine failures of every kind, as the client sees them (docs/errors.md):
an engine's rejection of a query is a 400 carrying the engine's reason; an engine that is
unreachable, refuses searchport's credentials, lacks the index, is overloaded or answers
what searchport cannot read is a 502; one that does not answer in time is a 504. No
answer, header or log line carries the engine's address or a credential."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import httpx
import pytest

from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import AppPool, EngineDouble, EsApp, Reply, city_yaml
from tests.contract.scripted import OffSpec

CREDENTIALS = "the engine rejected searchport's credentials"


def assert_error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and isinstance(body["error"], str)
    assert "Traceback" not in response.text
    return str(body["error"])


def endpoints(app: EsApp) -> dict[str, Callable[[], httpx.Response]]:
    """Every endpoint that searches the index, each as one call."""
    return {
        "search": lambda: app.get("/cities/search", params={"q": "x"}),
        "facets": lambda: app.get("/cities/facets/region", params={"q": "x"}),
        "autocomplete": lambda: app.get("/cities/autocomplete", params={"q": "x"}),
        "query": lambda: app.post("/cities/query", content=b'{"query": {"match_all": {}}}',
                                  headers={"Content-Type": "application/json"}),
    }


# ---------------------------------------------------------------- the engine rejects a query


@pytest.mark.parametrize(("answer", "reason"), [
    (es.search_phase_failure("query_shard_exception",
                             'failed to create query: For input string: "abc"'),
     'failed to create query: For input string: "abc"'),
    (es.text_sort_failure(), "Text fields are not optimised for operations that require"),
    (es.parsing_exception(), "unknown query [matchh]"),
    (es.error("illegal_argument_exception",
              "Result window is too large, from + size must be less than or equal to: [10000] "
              "but was [10020].", 400),
     "Result window is too large, from + size must be less than or equal to: [10000]"),
    ({"error": "ElasticsearchParseException[Failed to derive xcontent]", "status": 400},
     "ElasticsearchParseException[Failed to derive xcontent]"),
])
@pytest.mark.parametrize("endpoint", ["search", "facets", "autocomplete", "query"])
def test_an_engine_400_is_a_400_with_the_engine_reason(
    cities: EsApp, double: EngineDouble, answer: dict[str, Any], reason: str, endpoint: str
) -> None:
    # an error as a bare string (not in either specification: older servers' shape)
    double.search(OffSpec((400, answer)) if isinstance(answer["error"], str) else (400, answer))
    message = assert_error(endpoints(cities)[endpoint](), 400)
    assert reason in message
    assert message.startswith(f"The {double.engine} engine rejected the query: ")


def test_a_long_reason_is_cut_and_flattened(cities: EsApp, double: EngineDouble) -> None:
    reason = "failed to parse field [population] of type [long]\n\tcaused by " + "x" * 1000
    double.search((400, es.error("mapper_parsing_exception", reason, 400)))
    message = assert_error(cities.get("/cities/search"), 400)
    assert "\n" not in message and "\t" not in message
    assert "failed to parse field [population] of type [long] caused by xxx" in message
    assert len(message) < 400


# ---------------------------------------------------------------- the engine fails


SECRETS_YAML = {
    "elasticsearch": ("https://ops:url-secret-7@es.internal.example:9243/prod",
                      "apiKey: c2VjcmV0LWtleS1kbzpub3QtbGVhaw=="),
    "opensearch": ("https://ops:url-secret-7@es.internal.example:9243/prod",
                   "username: searchport\npassword: pass-secret-3"),
}
SECRETS = ("url-secret-7", "c2VjcmV0LWtleS1kbzpub3QtbGVhaw==", "pass-secret-3",
           "es.internal.example", "/prod/")


def secret_yaml(engine: str) -> str:
    host, settings = SECRETS_YAML[engine]
    return city_yaml(engine, host=host, settings=settings)


def assert_nothing_leaks(response: httpx.Response, caplog: pytest.LogCaptureFixture) -> None:
    seen = [response.text, *(f"{k}: {v}" for k, v in response.headers.items()),
            *(r.getMessage() for r in caplog.records)]
    for secret in SECRETS:
        for text in seen:
            assert secret not in text
    assert "www-authenticate" not in response.headers




def failures(engine: str) -> list[tuple[str, Reply, int, str]]:
    body_401, headers_401 = es.security_401(engine)
    return [
        ("401", (401, body_401, headers_401), 502, CREDENTIALS),
        ("403", (403, es.security_403(engine)), 502, CREDENTIALS),
        ("404", (404, es.index_not_found()), 502,
         f"The index configured for this handle does not exist in the {engine} engine"),
        ("429", (429, es.rejected_429(engine)), 502, "overloaded"),
        ("503", (503, es.unavailable_503()), 502, f"The {engine} engine failed (HTTP 503)"),
        ("500", (500, es.error("null_pointer_exception", "boom", 500)), 502,
         f"The {engine} engine failed (HTTP 500)"),
        ("502 html", (502, "<html><body>Bad Gateway</body></html>",
                      {"Content-Type": "text/html"}), 502, "failed (HTTP 502)"),
        ("504", (504, "upstream timed out", {"Content-Type": "text/plain"}), 504, "timed out"),
        ("refused", httpx.ConnectError("[Errno 111] Connection refused"), 502,
         f"The {engine} engine cannot be reached"),
        ("dns", httpx.ConnectError("[Errno -2] Name or service not known"), 502,
         "cannot be reached"),
        ("reset", httpx.RemoteProtocolError("Server disconnected without sending a response."),
         502, "cannot be reached"),
        ("read timeout", httpx.ReadTimeout("The read operation timed out"), 504,
         f"The {engine} engine did not answer within 5 s"),
        ("connect timeout", httpx.ConnectTimeout("timed out"), 504, "did not answer within"),
    ]


FAILURE_IDS = [f[0] for f in failures("elasticsearch")]


@pytest.mark.parametrize("case", FAILURE_IDS)
@pytest.mark.parametrize("endpoint", ["search", "facets", "autocomplete", "query", "document",
                                      "mapping"])
def test_engine_failures(
    engine: str, app_pool: AppPool, caplog: pytest.LogCaptureFixture,
    case: str, endpoint: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    _, reply, status, wording = next(f for f in failures(engine) if f[0] == case)
    app = app_pool.get(secret_yaml(engine), lambda: EngineDouble(engine, prefix="/prod"))
    app.double.search(reply)
    app.double.on("GET", "/cities/_doc/1", reply)
    app.double.on("GET", "/cities/_mapping", reply)
    calls = endpoints(app)
    calls["document"] = lambda: app.get("/cities/documents/1")
    calls["mapping"] = lambda: app.get("/cities/mapping")
    response = calls[endpoint]()
    message = assert_error(response, status)
    if case in ("401", "403"):
        assert message == f"The {engine} engine rejected searchport's credentials"
    else:
        assert wording in message
    assert_nothing_leaks(response, caplog)


@pytest.mark.parametrize("case", ["401", "refused", "read timeout"])
def test_a_failing_engine_at_startup_does_not_stop_the_app(
    engine: str, es_app: Callable[..., EsApp], caplog: pytest.LogCaptureFixture, case: str
) -> None:
    caplog.set_level(logging.WARNING)
    _, reply, _, _ = next(f for f in failures(engine) if f[0] == case)
    double = EngineDouble(engine, prefix="/prod")
    double.on("GET", "/cities/_mapping", reply)
    double.search(reply)  # /health's background ping meets the same failing engine
    app = es_app(secret_yaml(engine), double)
    assert app.get("/health").status_code == 200  # the app is up and answers
    deadline = time.monotonic() + 5
    while (health := app.get("/health").json())["engines"] != {"cities": "unreachable"}:
        assert time.monotonic() < deadline, "the failed ping never showed in /health"
        time.sleep(0.01)
    assert health["status"] == "degraded"
    assert any("the mapping could not be read" in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        for secret in SECRETS:
            assert secret not in record.getMessage()


# ---------------------------------------------------------------- unreadable answers


@pytest.mark.parametrize("answer", [
    b"<html>It works!</html>",
    b"",
    b'{"took": 1, "hits": ',
    b"[]",
    b'{"took": 1}',
    b'{"hits": []}',
    b'{"hits": {"total": "many", "hits": []}}',
    b'{"hits": {"total": {"value": 1}, "hits": {"_id": "1"}}}',
    b'{"hits": {"total": 1, "hits": ["doc"]}}',
])
def test_an_unreadable_search_answer_is_a_502(
    cities: EsApp, double: EngineDouble, answer: bytes
) -> None:
    double.search(OffSpec((200, answer)))  # broken on purpose
    message = assert_error(cities.get("/cities/search"), 502)
    assert message == f"The {double.engine} engine sent an answer searchport cannot read"


@pytest.mark.parametrize("aggregations", [
    {"facet_0": {"buckets": {"Europe": {"doc_count": 3}}}},
    {"facet_0": {"buckets": [{"key": "Europe"}]}},
    {"facet_0": {"doc_count": 3}},
    {"facet_0": []},
])
def test_an_unreadable_aggregation_is_a_502(
    cities: EsApp, double: EngineDouble, aggregations: dict[str, Any]
) -> None:
    double.search(OffSpec((200, {**es.empty_search(), "aggregations": aggregations})))
    assert_error(cities.get("/cities/search", params={"facets": "region"}), 502)


@pytest.mark.parametrize("answer", [b"not json", b'{"hits": {"hits": []}}', b"[1]"])
def test_an_unreadable_facet_values_answer_is_a_502(
    cities: EsApp, double: EngineDouble, answer: bytes
) -> None:
    double.search(OffSpec((200, answer)))
    assert_error(cities.get("/cities/facets/region"), 502)


@pytest.mark.parametrize("answer", [b"<html/>", b"[]", b'"found"'])
def test_an_unreadable_document_or_mapping_is_a_502(
    cities: EsApp, double: EngineDouble, answer: bytes
) -> None:
    double.on("GET", "/cities/_doc/1", (200, answer))
    double.on("GET", "/cities/_mapping", (200, answer))
    assert_error(cities.get("/cities/documents/1"), 502)
    assert_error(cities.get("/cities/mapping"), 502)


def test_a_raw_query_answer_is_passed_through_even_when_it_is_not_json(
    cities: EsApp, double: EngineDouble
) -> None:
    double.search((200, b"\x00 not json"))
    response = cities.post("/cities/query", content=json.dumps({"size": 0}),
                           headers={"Content-Type": "application/json"})
    assert (response.status_code, response.content) == (200, b"\x00 not json")


# ---------------------------------------------------------------- documents


def test_a_document_missing_because_the_index_is_missing_is_a_502(
    cities: EsApp, double: EngineDouble
) -> None:
    double.on("GET", "/cities/_doc/1", (404, es.index_not_found()))
    message = assert_error(cities.get("/cities/documents/1"), 502)
    assert "does not exist" in message


def test_a_document_not_found_is_a_404(
    cities: EsApp, double: EngineDouble, engine: str
) -> None:
    double.on("GET", "/cities/_doc/a%2Fb", (404, es.doc_not_found("a/b", engine=engine)))
    assert assert_error(cities.get("/cities/documents/a%2Fb"), 404) == "Document not found"


def test_a_raw_query_the_engine_rejects_is_a_400_with_the_reason(
    cities: EsApp, double: EngineDouble
) -> None:
    double.search(OffSpec((400, es.parsing_exception(  # a raw query the engine refuses
        "[match] query malformed, no start_object after query name", 1, 11))))
    response = cities.post("/cities/query", content=b'{"query": {"match": "x"}}',
                           headers={"Content-Type": "application/json"})
    message = assert_error(response, 400)
    assert "[match] query malformed, no start_object after query name" in message
    assert cities.last_search().body == {"query": {"match": "x"}}


# ---------------------------------------------------------------- refused before the engine


def test_a_raw_query_switched_off_is_a_403_without_engine_traffic(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble(engine)
    app = es_app(city_yaml(engine, settings="rawQuery: false"), double)
    response = app.post("/cities/query", content=b'{"size": 0}',
                        headers={"Content-Type": "application/json"})
    assert_error(response, 403)
    assert app.data_requests() == []


@pytest.mark.parametrize("params", [
    {"page": "501", "perPage": "20"},
    {"sort": "{nope"},
    {"filters": '{"region": {}}'},
    {"geoGrid": '{"field": "location", "precision": 30}'},
    {"histogram": '{"area": 0}'},
])
def test_requests_refused_by_validation_never_reach_the_engine(
    cities: EsApp, params: dict[str, str]
) -> None:
    assert_error(cities.get("/cities/search", params=params), 400)
    assert cities.data_requests() == []


def test_a_raw_query_too_large_for_the_engine_is_a_400(
    cities: EsApp, double: EngineDouble
) -> None:
    """A body over the engine's ``http.max_content_length`` gets a bare 413 (no body): the
    caller's query is too large, so a 400 saying so, not a 502."""
    double.search((413, "", {"Content-Length": "0"}))
    response = cities.post("/cities/query", content=b'{"query": {"match_all": {}}}',
                           headers={"Content-Type": "application/json"})
    message = assert_error(response, 400)
    assert message == (f"The {double.engine} engine rejected the query: "
                       f"413 {HTTPStatus(413).phrase}")


@pytest.mark.parametrize(("reply", "status", "wording"), [
    ((404, es.index_not_found()), 502, "does not exist"),
    ((429, es.rejected_429("elasticsearch")), 502, "overloaded"),
    ((500, es.error("null_pointer_exception", "boom", 500)), 502, "failed (HTTP 500)"),
    ((504, "upstream timed out", {"Content-Type": "text/plain"}), 504, "timed out"),
])
def test_a_raw_query_the_engine_fails_on_is_not_the_callers_fault(
    cities: EsApp, double: EngineDouble, reply: Reply, status: int, wording: str
) -> None:
    double.search(reply)
    response = cities.post("/cities/query", content=b'{"query": {"match_all": {}}}',
                           headers={"Content-Type": "application/json"})
    assert wording in assert_error(response, status)
