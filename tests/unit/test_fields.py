"""FieldMap: aliases both ways, searched fields and their weights, alias conflicts."""

from __future__ import annotations

import pytest

from searchport.domain.config import FieldConfig
from searchport.domain.fields import METADATA_KEYS, FieldMap, alias_conflicts
from searchport.domain.query import FieldWeight


def test_aliases_translate_both_ways() -> None:
    fields = FieldMap({"region": FieldConfig(field="continent"), "name": FieldConfig()})
    assert fields.real("region") == "continent"
    assert fields.public("continent") == "region"
    # names without an alias pass through unchanged in both directions
    assert fields.real("name") == "name"
    assert fields.public("name") == "name"
    assert fields.real("anything") == "anything"
    assert fields.real_all(["region", "name", "region"]) == ("continent", "name", "continent")
    assert fields.has_aliases
    assert not FieldMap({"name": FieldConfig(weight=2)}).has_aliases


def test_public_keys_renames_only_aliased_keys() -> None:
    fields = FieldMap({"region": FieldConfig(field="continent")})
    assert fields.public_keys({"continent": ["<mark>Eu</mark>rope"], "name": ["x"]}) == {
        "region": ["<mark>Eu</mark>rope"],
        "name": ["x"],
    }
    assert FieldMap({}).public_keys({"a": 1}) == {"a": 1}


def test_document_uses_public_names_and_drops_metadata_clashes() -> None:
    fields = FieldMap({"region": FieldConfig(field="continent")})
    source = {
        "continent": "Europe",
        "name": "Paris",
        "objectID": "stored-id",
        "_index": "stored-index",
        "_score": 99,
        "_highlights": {"x": ["y"]},
    }
    assert fields.document(source) == {"region": "Europe", "name": "Paris"}
    assert set(METADATA_KEYS) == {"objectID", "_index", "_score", "_highlights"}


def test_document_without_aliases_is_a_copy_minus_metadata_clashes() -> None:
    fields = FieldMap({"name": FieldConfig(weight=2)})  # no alias: the short path
    plain = {"name": "Paris", "pop": 2_100_000}
    document = fields.document(plain)
    assert document == {"name": "Paris", "pop": 2_100_000}
    document["name"] = "changed"  # a copy: the engine's source is not shaped in place
    assert plain["name"] == "Paris"
    for key in ("objectID", "_index", "_score", "_highlights"):
        assert fields.document({"name": "Paris", key: "stored"}) == {"name": "Paris"}


def test_types_and_nested_paths_are_keyed_by_real_name() -> None:
    fields = FieldMap({
        "region": FieldConfig(field="continent", type="keyword"),
        "color": FieldConfig(field="variants.color", nested_path="variants"),
        "name": FieldConfig(type="text"),
    })
    assert fields.types == {"continent": "keyword", "name": "text"}
    assert fields.nested_paths == {"variants.color": "variants"}


# -- searched fields precedence: weights + searchable (weight 1) together -----------------


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({}, {}),
        ({"name": FieldConfig(), "region": FieldConfig(field="continent")}, {}),
        (
            {"name": FieldConfig(weight=3), "alt": FieldConfig(weight=0.5)},
            {"name": 3.0, "alt": 0.5},
        ),
        (
            {"country": FieldConfig(searchable=True), "code": FieldConfig(searchable=True)},
            {"country": 1.0, "code": 1.0},
        ),
        (
            {
                "name": FieldConfig(weight=3),
                "country": FieldConfig(searchable=True),
                "region": FieldConfig(field="continent", searchable=True),
                "label": FieldConfig(field="title", weight=2),
                "both": FieldConfig(weight=4, searchable=True),
                "plain": FieldConfig(type="keyword"),
            },
            {"name": 3.0, "country": 1.0, "continent": 1.0, "title": 2.0, "both": 4.0},
        ),
    ],
)
def test_configured_weights(
    config: dict[str, FieldConfig], expected: dict[str, float]
) -> None:
    weights = FieldMap(config).configured_weights
    assert isinstance(weights, tuple)
    assert all(isinstance(w, FieldWeight) for w in weights)
    assert {w.field: w.weight for w in weights} == expected
    assert len(weights) == len(expected)


# -- alias conflicts -----------------------------------------------------------------------


def test_no_conflicts() -> None:
    assert alias_conflicts({
        "region": FieldConfig(field="continent"),
        "name": FieldConfig(weight=2),
        "same": FieldConfig(field="same"),
    }) == []


def test_two_aliases_of_one_field_conflict() -> None:
    problems = alias_conflicts({
        "region": FieldConfig(field="continent"),
        "area": FieldConfig(field="continent"),
    })
    assert len(problems) == 1
    assert "region" in problems[0] and "area" in problems[0] and "continent" in problems[0]


def test_an_alias_and_the_real_entry_conflict() -> None:
    problems = alias_conflicts({
        "region": FieldConfig(field="continent"),
        "continent": FieldConfig(type="keyword"),
    })
    assert problems and "continent" in problems[0]
