"""The OpenAPI document reads like the product: the search routes first, one error body on
every error answer with a real sentence as its example, no generated example values, no
doubled optional types. (``tests/e2e/test_openapi_e2e.py`` provokes each documented error
from a real server and compares the bodies.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from searchport.adapters.meilisearch.api import read_error as meilisearch_error
from searchport.adapters.network.api import exchange_failure, status_error
from searchport.adapters.network.exchange import Refused, TimedOut
from searchport.domain.config import Config, FieldConfig, IndexConfig
from searchport.entrypoints.http.app import create_app
from searchport.entrypoints.http.auth import UNAUTHORIZED
from searchport.entrypoints.http.openapi import plain_types
from searchport.entrypoints.http.openapi_errors import ENGINE_REFUSED, SENTENCES
from tests.fakes import FakeEngine, fake_container

# a value polyfactory makes up: twenty letters of random case (or a status out of range)
RANDOM_TEXT = re.compile(r"^(?=[A-Za-z]*[a-z][A-Z])[A-Za-z]{15,}$")
ALGOLIA = re.compile(r"^/[12]/|/instantsearch$")  # Algolia's search, Insights, Analytics
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module", params=[False, True], ids=["open", "key"])
def document(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    index = IndexConfig(engine="tantivy", path="unused", fields={"name": FieldConfig(weight=3)})
    config = Config(indexes={"cities": index}, api_key="k" if request.param else None)
    app = create_app(fake_container(config, {"cities": FakeEngine()}))
    with TestClient(app) as client:
        served = client.get("/openapi/json")
        assert served.status_code == 200
        page = client.get("/openapi")
        assert page.status_code == 200 and "swagger" in page.text.lower()
        yield served.json()


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def error_answers(doc: dict[str, Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    for path, _, operation in operations(doc):
        for code, answer in operation["responses"].items():
            if int(code) >= 400:
                yield path, int(code), answer


def walk(node: Any, trail: str = "") -> Iterator[tuple[str, Any]]:
    yield trail, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, f"{trail}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{trail}[{i}]")


def test_no_example_is_made_up(document: dict[str, Any]) -> None:
    made_up = [(trail, node) for trail, node in walk(document)
               if "example" in trail and isinstance(node, str) and RANDOM_TEXT.match(node)]
    assert made_up == []
    statuses = [(trail, node) for trail, node in walk(document)
                if trail.endswith("/status") and isinstance(node, int) and not 400 <= node < 600]
    assert statuses == []
    # the component schemas carry no generated examples: only the error bodies have one
    with_examples = {name for name, schema in document["components"]["schemas"].items()
                     if any("examples" in trail for trail, _ in walk(schema))}
    assert with_examples == {"ErrorBody", "AlgoliaErrorBody"}


def test_every_error_answer_is_the_one_error_body_with_a_sentence(
    document: dict[str, Any],
) -> None:
    seen = 0
    for path, code, answer in error_answers(document):
        seen += 1
        content = answer["content"]
        assert list(content) == ["application/json"], (path, code)
        algolia = bool(ALGOLIA.search(path))
        insights = path == "/1/events"  # Insights' {status, message}, errors included
        name = ("InsightsBody" if insights else "AlgoliaErrorBody" if algolia
                else "ErrorBody")
        assert content["application/json"]["schema"] == {"$ref": f"#/components/schemas/{name}"}
        examples = list(content["application/json"]["examples"].values())
        assert len(examples) == 1, (path, code)
        value = examples[0]["value"]
        if insights:
            assert value == {"status": code, "message": value["message"]}, (path, code)
            assert " " in value["message"] or value["message"] == UNAUTHORIZED, (path, code)
            continue
        said = value["error"]
        assert " " in said or said == UNAUTHORIZED, (path, code, said)
        if algolia:
            assert value == {"error": said, "message": said, "status": code}
        else:
            assert value == {"error": said}
        assert answer["description"].strip(), (path, code)
    assert seen > 100
    # Litestar's own validation body ({status_code, detail, extra}) appears nowhere
    assert not [trail for trail, node in walk(document)
                if isinstance(node, dict) and "status_code" in node.get("properties", {})]


def test_fields_documents_only_what_it_can_send(document: dict[str, Any]) -> None:
    answers = document["paths"]["/{handle}/fields"]["get"]["responses"]
    assert {"401", "404", "429"} <= set(answers) and "400" not in answers


def test_error_bodies_are_described(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    assert schemas["ErrorBody"]["required"] == ["error"]
    assert set(schemas["AlgoliaErrorBody"]["required"]) == {"error", "message", "status"}
    for name in ("ErrorBody", "AlgoliaErrorBody"):
        for field, schema in schemas[name]["properties"].items():
            assert schema["description"].endswith("."), (name, field)


def test_search_routes_come_first(document: dict[str, Any]) -> None:
    paths = list(document["paths"])
    assert paths[0] == "/{handle}/search"
    tags = [operation["tags"][0] for _, _, operation in operations(document)]
    order = ["search", "service", "algolia", "analytics"]
    assert tags == sorted(tags, key=order.index)
    assert [t["name"] for t in document["tags"]] == order
    assert tags.count("search") >= 7
    assert tags.count("analytics") == 17  # /1/events and the sixteen /2 routes


def test_no_doubled_or_nested_optional_types(document: dict[str, Any]) -> None:
    for trail, node in walk(document):
        if not isinstance(node, dict):
            continue
        for key in ("oneOf", "anyOf"):
            if key in node:
                members = node[key]
                assert len(members) >= 2, trail
                assert not any(k in m for m in members for k in ("oneOf", "anyOf")), trail
                assert sum(m == {"type": "null"} for m in members) <= 1, trail
    for path, _, operation in operations(document):
        for parameter in operation.get("parameters", []):
            schema = parameter["schema"]
            kinds = schema.get("type")
            assert isinstance(kinds, str) and kinds != "null", (path, parameter["name"], schema)
            assert "oneOf" not in schema and "anyOf" not in schema, (path, parameter["name"])
    per_page = next(p for p in document["paths"]["/{handle}/search"]["get"]["parameters"]
                    if p["name"] == "perPage")
    assert per_page["schema"]["type"] == "integer" and per_page["schema"]["examples"] == [20]


def test_plain_types_flattens_what_litestar_generates() -> None:
    assert plain_types({"oneOf": [{"type": "string"}, {"type": "null"}]}) == {
        "type": ["string", "null"]}
    assert plain_types({"oneOf": [{"type": "string"}, {"type": "null"}]}, nullable=False) == {
        "type": "string"}
    nested = {"description": "d", "oneOf": [{"oneOf": [{"type": "string"}, {"type": "null"}]},
                                            {"type": "integer"}]}
    assert plain_types(nested) == {
        "description": "d", "oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
    assert plain_types({"oneOf": [{"type": "array", "items": {"type": "string"}}]}) == {
        "type": "array", "items": {"type": "string"}}
    ref = {"oneOf": [{"$ref": "#/x"}, {"type": "null"}]}
    assert plain_types(ref) == {"oneOf": [{"$ref": "#/x"}, {"type": "null"}]}


def test_the_engine_sentences_are_what_the_adapters_say() -> None:
    """The examples of answers only a server engine gives (a tantivy demo cannot fail so)."""
    assert SENTENCES[502] == exchange_failure(Refused(), engine="elasticsearch",
                                              timeout=5).message
    assert SENTENCES[504] == exchange_failure(TimedOut(), engine="elasticsearch",
                                              timeout=5).message
    reason = ENGINE_REFUSED.split(": ", 1)[1]
    said = meilisearch_error(400, {"message": reason, "code": "invalid_index_uid",
                                   "type": "invalid_request"})
    assert status_error(400, said, engine="meilisearch", missing="index").message == (
        ENGINE_REFUSED)
