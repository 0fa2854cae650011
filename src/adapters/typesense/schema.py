"""What searchport learns from a collection schema (``GET /collections/<name>``).

Typesense needs explicit field names everywhere (``query_by``, ``facet_by``, ``sort_by``,
``filter_by``) and answers 400 or 404 for a field it does not know or cannot use that way.
The schema says which fields exist, their types, which are facets, sortable, optional, and
how strings are tokenised. Every name searchport writes into a Typesense parameter is checked
here first, so a name can never carry filter syntax into an expression.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from searchport.domain.errors import InvalidRequest, UnsupportedFeature

ENGINE = "typesense"
STRING_TYPES = frozenset({"string", "string[]", "string*"})
INTEGER_TYPES = frozenset({"int32", "int64", "int32[]", "int64[]"})
FLOAT_TYPES = frozenset({"float", "float[]"})
NUMBER_TYPES = INTEGER_TYPES | FLOAT_TYPES
BOOL_TYPES = frozenset({"bool", "bool[]"})
# characters of Typesense's parameter syntax: a field name holding one is never written out
_SYNTAX = re.compile(r"[\s`:,()\[\]&|!=<>{}*\\]")


@dataclass(frozen=True)
class FieldInfo:
    name: str
    type: str
    facet: bool = False
    sort: bool = False
    optional: bool = False
    index: bool = True
    vector: bool = False  # float[] with num_dim, or embedded by Typesense (embed)
    embedded: bool = False  # Typesense computes its vectors (an embed config)

    @property
    def is_string(self) -> bool:
        return self.type in STRING_TYPES

    @property
    def is_number(self) -> bool:
        return self.type in NUMBER_TYPES

    @property
    def is_integer(self) -> bool:
        return self.type in INTEGER_TYPES

    @property
    def is_bool(self) -> bool:
        return self.type in BOOL_TYPES

    @property
    def is_array(self) -> bool:
        return self.type.endswith("[]")


# Every document has an ``id``; it is not listed in the schema. Filters on it compare the
# whole string (no tokenising), and Typesense cannot negate, facet or sort on it.
ID_FIELD = FieldInfo(name="id", type="id")


@dataclass(frozen=True)
class Schema:
    fields: Mapping[str, FieldInfo] = field(default_factory=dict)
    symbols_to_index: frozenset[str] = frozenset()
    token_separators: frozenset[str] = frozenset()

    def get(self, name: str, use: str) -> FieldInfo:
        """The field ``name``, for ``use`` (a word for messages: "filter", "sort"...)."""
        if name == ID_FIELD.name:
            return ID_FIELD
        info = self.fields.get(name)
        if info is None or _SYNTAX.search(name):
            raise InvalidRequest(
                f"Cannot {use} on '{name}': the {ENGINE} collection has no such field"
            )
        return info

    def facet(self, name: str) -> FieldInfo:
        info = self.get(name, "facet")
        if info is ID_FIELD or not info.facet:
            raise InvalidRequest(
                f"Cannot facet on '{name}': the {ENGINE} collection schema does not mark it "
                "as a facet (facet: true)"
            )
        if info.type in FLOAT_TYPES:
            # 0.24 prints float facet values with 6 significant digits and strips trailing
            # zeros and dots, so 10.0 comes back as "1": the values would be wrong.
            raise UnsupportedFeature(f"A facet on the float field '{name}'", ENGINE)
        return info

    def stats(self, name: str) -> FieldInfo:
        """A numeric facet field: Typesense gives stats only of fields in ``facet_by``."""
        info = self.get(name, "compute stats")
        if info is ID_FIELD or not info.facet or not info.is_number:
            raise InvalidRequest(
                f"Cannot compute stats on '{name}': it is not a numeric field marked as a "
                f"facet (facet: true) in the {ENGINE} collection schema"
            )
        return info

    def sortable(self, name: str) -> FieldInfo:
        info = self.get(name, "sort")
        if info is ID_FIELD or not info.sort or info.type == "geopoint":
            raise InvalidRequest(
                f"Cannot sort on '{name}': the {ENGINE} collection schema does not mark it "
                "as sortable (sort: true)"
            )
        return info

    def geo_sortable(self, name: str) -> FieldInfo:
        """A ``geopoint`` field marked sortable (Typesense's default for geopoints)."""
        info = self.get(name, "sort by distance")
        if info.type != "geopoint":
            raise InvalidRequest(f"Cannot sort by distance on '{name}': it is not a geopoint "
                                 f"field of the {ENGINE} collection")
        if not info.sort:
            raise InvalidRequest(
                f"Cannot sort by distance on '{name}': the {ENGINE} collection schema does not "
                "mark it as sortable (sort: true)"
            )
        return info

    def searchable(self, name: str) -> FieldInfo:
        info = self.get(name, "search")
        if info is ID_FIELD or not info.is_string or not info.index:
            raise InvalidRequest(
                f"Cannot search '{name}': it is not an indexed string field of the {ENGINE} "
                "collection"
            )
        return info

    def vector_field(self, name: str, engine_embeds: bool) -> FieldInfo:
        """The field holding the records' vectors (``semantic.field``): a ``float[]`` with
        ``num_dim``; with ``embedder: engine``, one Typesense embeds itself (``embed``)."""
        info = self.fields.get(name)
        if info is None or _SYNTAX.search(name) or not info.vector:
            raise InvalidRequest(
                f"Cannot search by meaning on '{name}' (semantic.field): it is not a vector "
                f"field (float[] with num_dim) of the {ENGINE} collection")
        if engine_embeds and not info.embedded:
            raise InvalidRequest(
                f"Cannot search by meaning on '{name}' with embedder engine: the {ENGINE} "
                "collection does not embed it (the field has no embed config); use embedder "
                "builtin or openai")
        return info

    @property
    def string_fields(self) -> tuple[str, ...]:
        """The fields a text query searches when none are chosen: every indexed string."""
        return tuple(n for n, f in self.fields.items() if f.is_string and f.index)


def read_schema(answer: Mapping[str, Any]) -> Schema:
    """A ``GET /collections/<name>`` answer. Pattern fields (``.*``, ``year_.*``) describe
    fields Typesense adds when it sees them; only the concrete ones are kept."""
    fields: dict[str, FieldInfo] = {}
    raw_fields = answer.get("fields")
    if not isinstance(raw_fields, list):
        raise ValueError("the collection schema has no field list")
    for raw in raw_fields:
        if not isinstance(raw, Mapping):
            continue
        name, kind = raw.get("name"), raw.get("type")
        if not isinstance(name, str) or not isinstance(kind, str) or "*" in name:
            continue
        if kind in ("auto", "object", "object[]"):
            continue
        fields[name] = FieldInfo(
            name=name,
            type=kind,
            facet=raw.get("facet") is True,
            sort=raw.get("sort") is True,
            optional=raw.get("optional") is True,
            index=raw.get("index") is not False,
            vector=kind == "float[]" and (isinstance(raw.get("num_dim"), int)
                                          or isinstance(raw.get("embed"), Mapping)),
            embedded=isinstance(raw.get("embed"), Mapping),
        )
    return Schema(
        fields=fields,
        symbols_to_index=_chars(answer.get("symbols_to_index")),
        token_separators=_chars(answer.get("token_separators")),
    )


def _chars(value: Any) -> frozenset[str]:
    if not isinstance(value, list):
        return frozenset()
    return frozenset(v for v in value if isinstance(v, str))
