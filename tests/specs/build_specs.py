"""Build the vendored specifications of ``tests/specs/`` from a pinned commit of each
published API specification.

    python tests/specs/build_specs.py <name> <snapshot git dir> <commit>

``<name>`` is one of ``SPECS`` (opensearch, elasticsearch, typesense, algolia, insights,
recommend, analytics);
the snapshot is a clone (bare or not) of the specification's repository, read with ``git
show <commit>:<path>`` only, so the output depends on the commit alone. It writes
``tests/specs/<name>.json``: one self-contained JSON Schema document (draft 2020-12) with

- ``source``: the repository, the commit, the files read and the licence notice;
- ``endpoints``: one entry per exchange searchport has with that API (``search.request``,
  ``search.response``...), each a ``$ref`` into ``$defs``;
- ``$defs``: only the schemas those endpoints reach, every ``$ref`` rewritten to point
  inside the document.

Schemas are trimmed to what validates (descriptions, examples and vendor extensions are
dropped), OpenAPI 3.0 is turned into JSON Schema (``nullable``, boolean
``exclusiveMinimum``...), and every object schema is closed to unknown keys the way the
OpenSearch specification's own test runner does (``tools/src/tester/MergedOpenApiSpec.ts``):
an object schema is closed where it is used, never on a shared component itself nor on
what applies to the same object as the members of an ``allOf`` (the enclosing schema is
closed instead); an object the specification declares open (``additionalProperties``)
stays open. The runner also leaves open every value inside such an object (it skips
everything below an ``allOf``); here only a value that several members of the ``allOf``
describe together is left open, the others are closed too, which checks more.
``additionalProperties: false`` is read the way the clients generated from these
specifications read it: the object is closed where it is used, and an ``allOf`` merges
its members (Algolia's ``searchResponse`` is an ``allOf`` of closed parts). Where the runner writes
``unevaluatedProperties: false``, the same keys are listed statically (``propertyNames``,
see ``close_objects``), which keeps validation linear.
The Elasticsearch OpenAPI document first gets back what its generation lost
(``es_restore.py``); every ``oneOf`` is read as ``anyOf`` (see ``Spec.unions_are_anyof``).
"""

from __future__ import annotations

import json
import posixpath
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from tests.specs.es_restore import TypeScriptSources

HERE = Path(__file__).resolve().parent
DRAFT = "https://json-schema.org/draft/2020-12/schema"

# keywords whose value is one schema, a list of schemas, or a map of names to schemas
ONE_SCHEMA = ("items", "additionalProperties", "not", "contains", "propertyNames", "if",
              "then", "else", "unevaluatedProperties", "unevaluatedItems")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
# the validation keywords kept as they are; everything else is an annotation and dropped
KEPT = frozenset({
    "type", "enum", "const", "required", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "minItems",
    "maxItems", "uniqueItems", "minProperties", "maxProperties", "dependentRequired",
})
# keywords whose subschemas apply to the object itself, not to a value inside it
SAME_INSTANCE = frozenset({"not", "if", "then", "else", "allOf", "anyOf", "oneOf",
                           "dependentSchemas"})
ALL_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})

Json = Any
Location = tuple[str, str]  # (file path in the repository, JSON pointer)


# ---------------------------------------------------------------- reading a snapshot


class SpecLoader(yaml.SafeLoader):
    """YAML's safe loader, reading a bare ``=`` as the string it is in these documents (YAML
    1.1 gives it a "value" tag of its own, which PyYAML cannot construct; Algolia's Analytics
    specification lists ``=`` among its filter operators)."""


def _plain_scalar(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


SpecLoader.add_constructor("tag:yaml.org,2002:value", _plain_scalar)


@dataclass
class Snapshot:
    git_dir: str
    commit: str
    read: set[str] = field(default_factory=set)
    _files: dict[str, Json] = field(default_factory=dict)

    def text(self, path: str) -> str:
        out = subprocess.run(["git", "-C", self.git_dir, "show", f"{self.commit}:{path}"],
                             check=True, capture_output=True)
        return out.stdout.decode("utf-8")

    def load(self, path: str) -> Json:
        if path not in self._files:
            text = self.text(path)
            self._files[path] = json.loads(text) if path.endswith(".json") \
                else yaml.load(text, Loader=SpecLoader)  # a safe loader
            self.read.add(path)
        return self._files[path]

    def node(self, where: Location) -> Json:
        found = self.load(where[0])
        for part in pointer_parts(where[1]):
            found = found[int(part)] if isinstance(found, list) else found[part]
        return found


def pointer_parts(pointer: str) -> list[str]:
    pointer = pointer.lstrip("#")
    if not pointer:
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]


def pointer(*parts: str) -> str:
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


# ---------------------------------------------------------------- bundling


@dataclass
class Bundle:
    """The schemas reached from the endpoints, in JSON Schema 2020-12."""

    snapshot: Snapshot
    name_of: Callable[[Location], str]
    openapi_30: bool
    unions_are_anyof: bool = False
    defs: dict[str, Json] = field(default_factory=dict)
    _pending: list[tuple[str, Location]] = field(default_factory=list)

    def ref(self, where: Location) -> Json:
        target = self._follow(where)
        name = self.name_of(target)
        if name not in self.defs:
            self.defs[name] = None  # reserved: cycles stop here
            self._pending.append((name, target))
        return {"$ref": "#/$defs/" + name}

    def _follow(self, where: Location) -> Location:
        """A schema that is only a ``$ref`` is the schema it points at."""
        seen = set()
        node = self.snapshot.node(where)
        while isinstance(node, dict) and set(node) <= {"$ref", "description", "title"} \
                and "$ref" in node and where not in seen:
            seen.add(where)
            where = self._target(where[0], node["$ref"])
            node = self.snapshot.node(where)
        return where

    def _target(self, base_file: str, ref: str) -> Location:
        path, _, ptr = ref.partition("#")
        file = posixpath.normpath(posixpath.join(posixpath.dirname(base_file), path)) \
            if path else base_file
        return file, ptr

    def finish(self) -> dict[str, Json]:
        while self._pending:
            name, where = self._pending.pop()
            self.defs[name] = self.schema(where[0], self.snapshot.node(where))
        return self.defs

    def schema(self, file: str, node: Json) -> Json:
        """One schema node converted; ``file`` is where its relative ``$ref``s start."""
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise ValueError(f"not a schema in {file}: {node!r}")
        if "$ref" in node:
            target = self.ref(self._target(file, node["$ref"]))
            if self.openapi_30:  # OpenAPI 3.0 ignores what stands beside a $ref
                return self._nullable(node, target)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            if rest:
                converted = self.schema(file, rest)
                if converted:
                    return {"allOf": [target, converted]} if "allOf" in converted \
                        else {**converted, **target}
            return target
        out: dict[str, Json] = {}
        for key, value in node.items():
            if key in ONE_SCHEMA:
                if isinstance(value, list):  # the old tuple form of ``items``
                    out["prefixItems"] = [self.schema(file, v) for v in value]
                else:
                    out[key] = self.schema(file, value)
            elif key in SCHEMA_LISTS:
                name = "anyOf" if key == "oneOf" and self.unions_are_anyof else key
                out[name] = [self.schema(file, v) for v in value]
            elif key in SCHEMA_MAPS:
                out[key] = {k: self.schema(file, v) for k, v in value.items()}
            elif key in KEPT:
                out[key] = value
        if self.openapi_30:
            for bound, limit in (("exclusiveMinimum", "minimum"),
                                 ("exclusiveMaximum", "maximum")):
                if isinstance(out.get(bound), bool) and out.pop(bound) and limit in out:
                    out[bound] = out.pop(limit)
        return self._nullable(node, out)

    def _nullable(self, node: Json, out: dict[str, Json]) -> dict[str, Json]:
        if not (self.openapi_30 and node.get("nullable") is True):
            return out
        kind = out.get("type")
        if isinstance(kind, str) and "$ref" not in out:
            out["type"] = [kind, "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
            return out
        return {"anyOf": [out, {"type": "null"}]}


# ---------------------------------------------------------------- closing objects


class Keys:
    """The property names a schema declares, through ``$ref``, ``allOf``, ``anyOf`` and
    ``oneOf`` (every branch's); ``None`` when the schema takes any other key
    (``additionalProperties``, ``patternProperties``, an ``unevaluatedProperties`` that is
    not ``false``)."""

    def __init__(self, defs: dict[str, Json]) -> None:
        self.defs = defs

    def of(self, node: Json, seen: frozenset[str] = frozenset()) -> frozenset[str] | None:
        if node is False:
            return frozenset()
        if not isinstance(node, dict):
            return None
        if any(node.get(k, False) is not False
               for k in ("additionalProperties", "patternProperties")) \
                or node.get("unevaluatedProperties", False) is not False:
            return None
        out = frozenset(node.get("properties", {}))
        if "$ref" in node:
            name = node["$ref"].removeprefix("#/$defs/")
            if name in seen:
                return out
            found = self.of(self.defs[name], seen | {name})
            if found is None:
                return None
            out |= found
        for key in ("allOf", "anyOf", "oneOf"):
            for member in node.get(key, []):
                found = self.of(member, seen)
                if found is None:
                    return None
                out |= found
        return out


def close_objects(document: dict[str, Json]) -> None:
    """Close every object schema where it is used (see the module docstring).

    ``unevaluatedProperties`` is what the OpenSearch test runner writes, but a validator
    must then evaluate every subschema again at each level, which grows exponentially with
    the nesting of queries and aggregations. The same keys are known statically
    (``Keys``), so the closed object gets ``propertyNames: {enum: <its keys>}`` instead
    (where a union allows the keys of all its branches), and an ``unevaluatedProperties``
    schema of the specification becomes ``additionalProperties`` beside its known keys.
    """
    defs = document["$defs"]
    keys = Keys(defs)
    interned: dict[frozenset[str], str] = {}

    def overlap(members: list[Json]) -> frozenset[str] | None:
        """The keys more than one member of an ``allOf`` declares (``None``: any key, a
        member being open): what those members say of such a key's value is merged."""
        seen: set[str] = set()
        twice: set[str] = set()
        for member in members:
            found = keys.of(member)
            if found is None:
                return None
            twice |= seen & found
            seen |= found
        return frozenset(twice)

    def every(node: Json, visit: Callable[[dict[str, Json], bool, bool], None],
              closable: bool, in_all_of: bool, merged: frozenset[str] | None = frozenset(),
              inside_merge: bool = False) -> None:
        """``in_all_of``: the node applies to the same object as the members of an
        enclosing ``allOf``, which declare more of its keys; ``merged``: the keys whose
        values several of those members describe; ``inside_merge``: the node describes
        (part of) such a value, with its siblings: nothing below is closed, as the
        OpenSearch runner leaves everything below an ``allOf``. A value only one member
        describes starts afresh, and is closed where it is used."""
        if not isinstance(node, dict):
            return
        visit(node, closable and not inside_merge, in_all_of or inside_merge)
        inner = in_all_of or inside_merge
        for key in ONE_SCHEMA:
            if key in node:
                if key in SAME_INSTANCE:
                    every(node[key], visit, True, in_all_of, merged, inside_merge)
                else:
                    every(node[key], visit, True, False, frozenset(), inner)
        for member in node.get("allOf", []):
            every(member, visit, True, True, overlap(node["allOf"]), inside_merge)
        for key in ("anyOf", "oneOf"):
            for member in node.get(key, []):
                every(member, visit, True, in_all_of, merged, inside_merge)
        for member in node.get("prefixItems", []):
            every(member, visit, True, False, frozenset(), inner)
        for name, member in node.get("properties", {}).items():
            shared = in_all_of and (merged is None or name in merged)
            every(member, visit, True, False, frozenset(), inside_merge or shared)
        for member in node.get("patternProperties", {}).values():
            every(member, visit, True, False, frozenset(), inner)
        for member in node.get("dependentSchemas", {}).values():
            every(member, visit, True, in_all_of, merged, inside_merge)

    def each(visit: Callable[[dict[str, Json], bool, bool], None]) -> None:
        for schema in list(defs.values()):
            every(schema, visit, False, False)
        for schema in document["endpoints"].values():
            every(schema, visit, True, False)

    def unevaluated_as_additional(node: dict[str, Json], *_: bool) -> None:
        if node.get("additionalProperties") is False and "properties" in node:
            del node["additionalProperties"]  # closed where used (``close``)
            node.setdefault("type", "object")
        rest = node.get("unevaluatedProperties")
        if rest is True:
            del node["unevaluatedProperties"]  # a no-op: nothing else is closed that way
        elif isinstance(rest, dict):
            known = keys.of({k: v for k, v in node.items() if k != "unevaluatedProperties"})
            del node["unevaluatedProperties"]
            if known is not None and "additionalProperties" not in node:
                props = node.setdefault("properties", {})
                props.update({k: True for k in sorted(known) if k not in props})
                node["additionalProperties"] = rest

    def close(node: dict[str, Json], closable: bool, in_all_of: bool) -> None:
        if (not closable or in_all_of or "additionalProperties" in node
                or not set(node) - {"type"} or types(node) != {"object"}):
            return
        known = keys.of(node)
        if known is None:
            return
        if known not in interned:
            interned[known] = f"keys.{len(interned)}"
            defs[interned[known]] = {"enum": sorted(known)}
        node["propertyNames"] = {"$ref": "#/$defs/" + interned[known]}

    def types(node: Json, seen: frozenset[str] = frozenset()) -> frozenset[str]:
        if node is True or not isinstance(node, dict):
            return ALL_TYPES
        if "$ref" in node:
            name = node["$ref"].removeprefix("#/$defs/")
            if name in seen:
                return ALL_TYPES
            found = types(defs[name], seen | {name})
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return found & types(rest, seen) if rest else found
        kind = node.get("type")
        if kind is not None:
            return frozenset([kind] if isinstance(kind, str) else kind)
        if "allOf" in node:
            out = ALL_TYPES
            for member in node["allOf"]:
                out &= types(member, seen)
            return out
        for key in ("anyOf", "oneOf"):
            if key in node:
                union: frozenset[str] = frozenset()
                for member in node[key]:
                    union |= types(member, seen)
                return union
        if "properties" in node or "additionalProperties" in node:
            return frozenset({"object"})
        return ALL_TYPES

    each(unevaluated_as_additional)
    each(close)
    each(cheap_first)


FIRST = ("type", "enum", "const", "required", "propertyNames", "minProperties",
         "maxProperties", "minItems", "maxItems")


def cheap_first(node: dict[str, Json], *_: bool) -> None:
    """The cheap keywords first: a validator stops a union's branch at its first error, so
    a wrong branch fails on its type or keys before its subschemas are walked."""
    ordered = {k: node[k] for k in FIRST if k in node}
    ordered.update({k: v for k, v in node.items() if k not in ordered})
    node.clear()
    node.update(ordered)


# ---------------------------------------------------------------- the specifications


@dataclass(frozen=True)
class Spec:
    repository: str
    licence_files: tuple[str, ...]
    licence: str  # the licence in a few words
    openapi_30: bool
    endpoints: dict[str, Location]
    name_of: Callable[[Location], str]
    note: str = ""
    # a ``oneOf`` is read as ``anyOf``: what is checked is that a body fits the
    # specification, not which branch it fits (Elasticsearch's unions are TypeScript
    # unions, Algolia's clients take the first branch that fits, and some of OpenSearch's
    # overlap: a phrase suggestion's entry also fits a term suggestion's)
    unions_are_anyof: bool = True
    prepare: Callable[[Snapshot], list[str]] | None = None  # fixes before bundling


def _components_name(prefix_files: bool, root: str = "") -> Callable[[Location], str]:
    def name_of(where: Location) -> str:
        file, ptr = where
        parts = pointer_parts(ptr)
        if parts[:2] == ["components", "schemas"]:
            parts = parts[2:]
        inner = ".".join(parts)
        if not prefix_files:
            return inner
        stem = posixpath.splitext(posixpath.relpath(file, root))[0].replace("/", ".")
        return f"{stem}:{inner}" if inner else stem
    return name_of


def _json_body(file: str, *at: str) -> Location:
    return file, pointer(*at, "content", "application/json", "schema")


OS_CORE = "spec/namespaces/_core.yaml"
OS_INDICES = "spec/namespaces/indices.yaml"
ES_OPENAPI = "output/openapi/elasticsearch-serverless-openapi.json"
TS_OPENAPI = "openapi.yml"
ALGOLIA = "specs/search/paths/search/"
INSIGHTS = "specs/insights/paths/pushEvents.yml"
RECOMMEND = "specs/recommend/paths/getRecommendations.yml"
ANALYTICS = "specs/analytics/paths/"
# the Analytics API v2 routes searchport answers: endpoint name -> path file
ANALYTICS_ROUTES = {
    "searches": "search/getTopSearches.yml",
    "searches.count": "search/getSearchesCount.yml",
    "searches.noResults": "search/getSearchesNoResults.yml",
    "searches.noClicks": "search/getSearchesNoClicks.yml",
    "searches.noResultRate": "search/getNoResultsRate.yml",
    "searches.noClickRate": "search/getNoClickRate.yml",
    "clicks.clickThroughRate": "click/getClickThroughRate.yml",
    "clicks.averageClickPosition": "click/getAverageClickPosition.yml",
    "clicks.positions": "click/getClickPositions.yml",
    "conversions.conversionRate": "click/getConversionRate.yml",
    "hits": "search/getTopHits.yml",
    "users.count": "search/getUsersCount.yml",
    "filters": "search/getTopFilterAttributes.yml",
    "filters.attribute": "search/getTopFilterForAttribute.yml",
    "filters.noResults": "search/getTopFiltersNoResults.yml",
    "status": "status/getStatus.yml",
}

def _restore_elasticsearch(snapshot: Snapshot) -> list[str]:
    return TypeScriptSources(snapshot.git_dir, snapshot.commit,
                             snapshot.load(ES_OPENAPI)).restore()


def _typesense_any_values(snapshot: Snapshot) -> list[str]:
    """Typesense's specification marks a value of any type for its Go generator
    (``x-go-type: interface{}``) and a document as "any key-value pair" whose values are
    typed ``object``: both say "any value" (its own documented answers carry strings and
    numbers there), so they are read that way."""
    done: list[str] = []

    def walk(node: Json, where: str) -> Json:
        if isinstance(node, list):
            return [walk(v, f"{where}/{i}") for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        if node.get("x-go-type") == "interface{}":
            done.append(f"{where}: x-go-type interface{{}} read as any value")
            return {}
        if str(node.get("description", "")).startswith("Can be any key-value pair") \
                and node.get("additionalProperties") == {"type": "object"}:
            done.append(f"{where}: any key-value pair, its values of any type")
            node = {**node, "additionalProperties": True}
        return {k: walk(v, f"{where}/{k}") for k, v in node.items()}

    spec = snapshot.load(TS_OPENAPI)
    spec["components"] = walk(spec["components"], "#/components")
    return done


SPECS: dict[str, Spec] = {
    "opensearch": Spec(
        repository="opensearch-project/opensearch-api-specification",
        licence_files=("LICENSE.txt", "NOTICE.txt"),
        licence="Apache License 2.0, Copyright OpenSearch Contributors",
        openapi_30=False,
        endpoints={
            "search.request": _json_body(OS_CORE, "components", "requestBodies", "search"),
            "search.response": _json_body(OS_CORE, "components", "responses", "search@200"),
            "count.request": _json_body(OS_CORE, "components", "requestBodies", "count"),
            "count.response": _json_body(OS_CORE, "components", "responses", "count@200"),
            "msearch.request_item": (OS_CORE, pointer(
                "components", "requestBodies", "msearch", "content", "application/x-ndjson",
                "schema", "items")),
            "msearch.response": _json_body(OS_CORE, "components", "responses", "msearch@200"),
            "get.response": _json_body(OS_CORE, "components", "responses", "get@200"),
            "mapping.response": _json_body(OS_INDICES, "components", "responses",
                                           "indices.get_mapping@200"),
            "error.response": ("spec/schemas/_common.yaml",
                               pointer("components", "schemas", "ErrorResponseBase")),
        },
        name_of=_components_name(True, "spec/schemas"),
    ),
    "elasticsearch": Spec(
        repository="elastic/elasticsearch-specification",
        licence_files=("LICENSE",),
        licence="Apache License 2.0, Copyright Elasticsearch B.V.",
        openapi_30=True,
        endpoints={
            "search.request": _json_body(ES_OPENAPI, "components", "requestBodies", "search"),
            "search.response": _json_body(ES_OPENAPI, "components", "responses",
                                          "search-200"),
            "count.request": _json_body(ES_OPENAPI, "components", "requestBodies", "count"),
            "count.response": _json_body(ES_OPENAPI, "components", "responses", "count-200"),
            "msearch.request_item": (ES_OPENAPI, pointer(
                "components", "requestBodies", "msearch", "content", "application/json",
                "schema", "items")),
            "msearch.response": _json_body(ES_OPENAPI, "components", "responses",
                                           "msearch-200"),
            "get.response": _json_body(ES_OPENAPI, "paths", "/{index}/_doc/{id}", "get",
                                       "responses", "200"),
            "mapping.response": _json_body(ES_OPENAPI, "components", "responses",
                                           "indices.get_mapping-200"),
            "error.response": (ES_OPENAPI, pointer("components", "schemas",
                                                   "_types.ErrorResponseBase")),
        },
        name_of=_components_name(False),
        prepare=_restore_elasticsearch,
        note=("output/schema/schema.json and elasticsearch-openapi.json are stored as "
              "large files outside the snapshot; the serverless OpenAPI document is "
              "generated from the same specification by the same compiler"),
    ),
    "typesense": Spec(
        repository="typesense/typesense-api-spec",
        licence_files=(),
        licence="GPL-3.0 (openapi.yml info.license), Copyright Typesense, Inc.",
        openapi_30=True,
        endpoints={
            "search.params": (TS_OPENAPI, pointer("components", "schemas",
                                                  "SearchParameters")),
            "search.response": (TS_OPENAPI, pointer("components", "schemas", "SearchResult")),
            "multi_search.params": (TS_OPENAPI, pointer("components", "schemas",
                                                        "MultiSearchParameters")),
            "multi_search.request": (TS_OPENAPI, pointer("components", "schemas",
                                                         "MultiSearchSearchesParameter")),
            "multi_search.response": (TS_OPENAPI, pointer("components", "schemas",
                                                          "MultiSearchResult")),
            "collection.response": (TS_OPENAPI, pointer("components", "schemas",
                                                        "CollectionResponse")),
            "error.response": (TS_OPENAPI, pointer("components", "schemas", "ApiResponse")),
        },
        name_of=_components_name(False),
        prepare=_typesense_any_values,
    ),
    "algolia": Spec(
        repository="algolia/api-clients-automation",
        licence_files=("LICENSE.md",),
        licence="MIT License, Copyright Algolia",
        openapi_30=True,
        endpoints={
            "multi.request": _json_body(ALGOLIA + "search.yml", "post", "requestBody"),
            "multi.response": _json_body(ALGOLIA + "search.yml", "post", "responses", "200"),
            "search.request": _json_body(ALGOLIA + "searchSingleIndex.yml", "post",
                                         "requestBody"),
            "search.response": _json_body(ALGOLIA + "searchSingleIndex.yml", "post",
                                          "responses", "200"),
            "facet_values.request": _json_body(ALGOLIA + "searchForFacetValues.yml", "post",
                                               "requestBody"),
            "facet_values.response": _json_body(ALGOLIA + "searchForFacetValues.yml", "post",
                                                "responses", "200"),
            "error.response": ("specs/common/schemas/ErrorBase.yml", ""),
        },
        name_of=_components_name(True, "specs"),
    ),
    "insights": Spec(
        repository="algolia/api-clients-automation",
        licence_files=("LICENSE.md",),
        licence="MIT License, Copyright Algolia",
        openapi_30=True,
        endpoints={
            "events.request": _json_body(INSIGHTS, "post", "requestBody"),
            "events.response": _json_body(INSIGHTS, "post", "responses", "200"),
        },
        name_of=_components_name(True, "specs"),
    ),
    "recommend": Spec(
        repository="algolia/api-clients-automation",
        licence_files=("LICENSE.md",),
        licence="MIT License, Copyright Algolia",
        openapi_30=True,
        endpoints={
            "recommendations.request": _json_body(RECOMMEND, "post", "requestBody"),
            "recommendations.response": _json_body(RECOMMEND, "post", "responses", "200"),
            "error.response": ("specs/common/schemas/ErrorBase.yml", ""),
        },
        name_of=_components_name(True, "specs"),
    ),
    "analytics": Spec(
        repository="algolia/api-clients-automation",
        licence_files=("LICENSE.md",),
        licence="MIT License, Copyright Algolia",
        openapi_30=True,
        endpoints={
            **{f"{name}.response": _json_body(ANALYTICS + path, "get", "responses", "200")
               for name, path in ANALYTICS_ROUTES.items()},
            "error.response": ("specs/common/schemas/ErrorBase.yml", ""),
        },
        name_of=_components_name(True, "specs"),
    ),
}


def build(name: str, git_dir: str, commit: str) -> dict[str, Json]:
    spec = SPECS[name]
    snapshot = Snapshot(git_dir, commit)
    restored = spec.prepare(snapshot) if spec.prepare else []
    bundle = Bundle(snapshot, spec.name_of, spec.openapi_30, spec.unions_are_anyof)
    endpoints = {}
    for endpoint, where in spec.endpoints.items():
        endpoints[endpoint] = bundle.schema(where[0], snapshot.node(where))
    defs = bundle.finish()
    document: dict[str, Json] = {
        "$schema": DRAFT,
        "source": {
            "repository": f"https://github.com/{spec.repository}",
            "commit": commit,
            "licence": spec.licence,
            "files": sorted(snapshot.read),
            **({"note": spec.note} if spec.note else {}),
            **({"restored": restored} if restored else {}),
            "built_by": "python tests/specs/build_specs.py "
                        f"{name} <snapshot of {spec.repository}> {commit}",
        },
        "endpoints": endpoints,
        "$defs": dict(sorted(defs.items())),
    }
    close_objects(document)
    notices = [snapshot.text(f) for f in spec.licence_files]
    (HERE / f"{name}.LICENSE").write_text(
        f"{name}.json is derived from {spec.repository} at commit {commit}.\n"
        f"Licence: {spec.licence}.\n\n" + "\n\n".join(notices), encoding="utf-8")
    return document


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in SPECS:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    name, git_dir, commit = argv
    commit = subprocess.run(["git", "-C", git_dir, "rev-parse", commit], check=True,
                            capture_output=True, text=True).stdout.strip()
    document = build(name, git_dir, commit)
    out = HERE / f"{name}.json"
    out.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{out}: {out.stat().st_size} bytes, {len(document['$defs'])} schemas")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
