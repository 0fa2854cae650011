"""What the Elasticsearch OpenAPI document leaves out of the Elasticsearch specification,
put back from the specification's own TypeScript sources at the same commit.

The OpenAPI document (``output/openapi/``) is generated from ``specification/**/*.ts``, and
two of the specification's annotations do not survive the conversion:

- ``implements AdditionalProperty<Field, V>`` / ``AdditionalProperties<K, V>``: the keys
  named by the caller (the field of a ``terms`` or ``geo_distance`` query, of a sort
  clause...). The OpenAPI schema lists only the fixed keys, so a closed schema would refuse
  every real ``terms`` query. Restored as ``unevaluatedProperties: V``.
- ``@aliases a``: another name of a property (``aggs`` for ``aggregations``) or of an enum
  value (``AND`` for ``and``). Restored as one more property, or enum value.
- ``@variants container`` with ``@variant container_property`` members (an aggregation's
  ``aggregations`` and ``meta`` beside its one kind): the OpenAPI schema bounds the whole
  object to one key (``maxProperties: 1`` on the member listing the kinds, inside an
  ``allOf``). Restored as "exactly one of the kinds" (``oneOf`` of ``required``).
- ``@shortcut_property p``: the short form (``{"term": {"genre": "poetry"}}`` for
  ``{"term": {"genre": {"value": "poetry"}}}``). Restored as
  ``anyOf: [<the type of p>, <the object>]``.

A class the OpenAPI document does not carry at all (``FieldSort``, only reachable through
the lost ``AdditionalProperty`` of ``SortOptions``) is translated from its TypeScript
declaration (simple properties, unions, arrays, enums); a generic type, or a class that
extends another, is left open (``source.restored`` in the output lists each).
"""

from __future__ import annotations

import copy
import posixpath
import re
import subprocess
from typing import Any

Json = Any
SPEC_ROOT = "specification/"
REF = "#/components/schemas/"
PRIMITIVES: dict[str, Json] = {
    "string": {"type": "string"}, "boolean": {"type": "boolean"},
    "integer": {"type": "number"}, "long": {"type": "number"}, "short": {"type": "number"},
    "byte": {"type": "number"}, "uint": {"type": "number"}, "ulong": {"type": "number"},
    "float": {"type": "number"}, "double": {"type": "number"}, "null": {"type": "null"},
    "UserDefinedValue": {}, "any": {},
}
BEHAVIOUR = re.compile(
    r"export class (\w+)[^{]*?implements\s+AdditionalPropert(?:y|ies)<\s*\w+\s*,\s*([^{]+?)>\s*\{",
    re.S)
SHORTCUT = re.compile(r"@shortcut_property (\w+)[^/]*?\*/\s*export class (\w+)", re.S)


class TypeScriptSources:
    """The ``.ts`` files of the specification at one commit, read through ``git``."""

    def __init__(self, git_dir: str, commit: str, openapi: dict[str, Json]) -> None:
        self.git_dir, self.commit = git_dir, commit
        self.schemas: dict[str, Json] = openapi["components"]["schemas"]
        self.request_bodies: dict[str, Json] = openapi["components"]["requestBodies"]
        self._texts: dict[str, str] = {}
        self.restored: list[str] = []

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", self.git_dir, *args], check=True,
                              capture_output=True, text=True).stdout

    def text(self, path: str) -> str:
        if path not in self._texts:
            self._texts[path] = self._git("show", f"{self.commit}:{path}")
        return self._texts[path]

    def files_with(self, needle: str) -> list[str]:
        out = self._git("grep", "-l", "-F", needle, self.commit, "--", SPEC_ROOT)
        return sorted({line.split(":", 1)[1] for line in out.splitlines() if line})

    @staticmethod
    def namespace(path: str) -> str:
        return posixpath.dirname(path).removeprefix(SPEC_ROOT).replace("/", ".")

    # ------------------------------------------------------------ types

    def schema_of(self, expr: str, home: str) -> Json:
        """A TypeScript type expression as an OpenAPI 3.0 schema."""
        expr = " ".join(expr.split())
        parts = _split_union(expr)
        if len(parts) > 1:
            return {"anyOf": [self.schema_of(p, home) for p in parts]}
        if expr.endswith("[]"):
            return {"type": "array", "items": self.schema_of(expr[:-2], home)}
        if expr in PRIMITIVES:
            return dict(PRIMITIVES[expr])
        if "<" in expr:
            return {}  # generic: not translated, left open
        return {"$ref": REF + self.component(expr, home)}

    def component(self, name: str, home: str) -> str:
        found = [k for k in self.schemas if k.rsplit(".", 1)[-1] == name]
        same = [k for k in found if k.startswith(self.namespace(home) + ".")]
        if len(found) == 1 or len(same) == 1:
            return (same or found)[0]
        return self._translate(name)

    def _translate(self, name: str) -> str:
        """A declaration missing from the OpenAPI document, from its ``.ts`` file."""
        for path in self.files_with(f" {name} "):
            text = self.text(path)
            enum = re.search(rf"export enum {name}\s*\{{(.*?)\}}", text, re.S)
            klass = re.search(rf"export class {name}\s*\{{(.*?)\n\}}", text, re.S)
            alias = re.search(rf"export type {name}\s*=\s*([^\n]+)", text)
            if alias and "<" not in alias.group(1):
                key = f"{self.namespace(path)}.{name}"
                self.schemas[key] = {}
                self.schemas[key] = self.schema_of(alias.group(1), path)
                self.restored.append(f"{key}: translated from {path}")
                return key
            if not (enum or klass):
                continue
            key = f"{self.namespace(path)}.{name}"
            self.schemas[key] = {}  # reserved: recursive types stop here
            if enum:
                body = re.sub(r"/\*.*?\*/|//[^\n]*", "", enum.group(1), flags=re.S)
                values = [v.split("=")[0].strip() for v in body.split(",") if v.strip()]
                self.schemas[key] = {"type": "string", "enum": values}
            else:
                assert klass is not None
                body = re.sub(r"/\*.*?\*/|//[^\n]*", "", klass.group(1), flags=re.S)
                props = {m.group(1): self.schema_of(m.group(3), path)
                         for m in re.finditer(r"^\s*(\w+)(\??):\s*(.+?)\s*$", body, re.M)}
                self.schemas[key] = {"type": "object", "properties": props}
            self.restored.append(f"{key}: translated from {path}")
            return key
        self.restored.append(f"{name}: not a plain class or enum, left open")
        return self._open()

    def _open(self) -> str:
        self.schemas.setdefault("_open", {})
        return "_open"

    # ------------------------------------------------------------ restoring

    def restore(self) -> list[str]:
        for path in self.files_with("implements AdditionalPropert"):
            for match in BEHAVIOUR.finditer(self.text(path)):
                key = f"{self.namespace(path)}.{match.group(1)}"
                if key in self.schemas:
                    value = self.schema_of(match.group(2), path)
                    self.schemas[key] = {**self.schemas[key], "unevaluatedProperties": value}
                    self.restored.append(f"{key}: additional properties {match.group(2)}")
        for key, schema in self.schemas.items():
            members = schema.get("allOf", []) if isinstance(schema, dict) else []
            for member in members if len(members) > 1 else []:
                if member.get("maxProperties") == 1 and "properties" in member:
                    del member["maxProperties"]
                    member.pop("minProperties", None)
                    member["oneOf"] = [{"required": [k]} for k in member["properties"]]
                    self.restored.append(f"{key}: one variant beside the container's keys")
        for path in self.files_with("@aliases"):
            self._aliases(path)
        for path in self.files_with("@shortcut_property"):
            for match in SHORTCUT.finditer(self.text(path)):
                prop, name = match.group(1), match.group(2)
                key = f"{self.namespace(path)}.{name}"
                if key not in self.schemas:
                    continue
                short = _property(self.schemas, self.schemas[key], prop)
                if short is None:
                    continue
                self.schemas[key + "@object"] = self.schemas[key]
                self.schemas[key] = {"anyOf": [copy.deepcopy(short),
                                               {"$ref": REF + key + "@object"}]}
                self.restored.append(f"{key}: shortcut {prop}")
        return self.restored


    def _aliases(self, path: str) -> None:
        text = self.text(path)
        owners = list(re.finditer(r"export (class|interface|enum) (\w+)", text))
        for match in re.finditer(r"@aliases ([\w, ]+?)\s*(?:\n|\*/)", text):
            names = [a.strip() for a in match.group(1).split(",") if a.strip()]
            after = text[text.index("*/", match.end() - 2) + 2:]
            declared = re.match(r"(?:[ \t]*//[^\n]*)?\s*(\w+)\??\s*[:,=\n}]", after)
            owner = [o for o in owners if o.start() < match.start()]
            if not declared or not owner:
                continue
            kind, name, member = owner[-1].group(1), owner[-1].group(2), declared.group(1)
            target = self._owner_schema(path, name)
            if target is None:
                continue
            if kind == "enum":
                target["enum"] = [*target.get("enum", []), *names]
            elif not self._add_alias(target, member, names):
                continue
            self.restored.append(f"{self.namespace(path)}.{name}.{member}: aliases {names}")

    def _owner_schema(self, path: str, name: str) -> Json | None:
        namespace = self.namespace(path)
        if name == "Request":  # an endpoint's request: its body is a request body
            api = namespace.removeprefix("_global.")
            body = self.request_bodies.get(api, {})
            return body.get("content", {}).get("application/json", {}).get("schema")
        found = self.schemas.get(f"{namespace}.{name}")
        return found if isinstance(found, dict) else None

    def _add_alias(self, schema: Json, member: str, names: list[str]) -> bool:
        if not isinstance(schema, dict):
            return False
        if "$ref" in schema:
            return self._add_alias(self.schemas.get(schema["$ref"].removeprefix(REF)),
                                   member, names)
        props = schema.get("properties", {})
        if member in props:
            for alias in names:
                props.setdefault(alias, copy.deepcopy(props[member]))
            return True
        return any(self._add_alias(m, member, names) for m in schema.get("allOf", []))


def _split_union(expr: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(expr):
        depth += (char in "<([" and 1) or (char in ">)]" and -1) or 0
        if char == "|" and depth == 0:
            parts.append(expr[start:i].strip())
            start = i + 1
    parts.append(expr[start:].strip())
    return [p for p in parts if p]


def _property(schemas: dict[str, Json], schema: Json, name: str) -> Json | None:
    if not isinstance(schema, dict):
        return None
    if name in schema.get("properties", {}):
        return schema["properties"][name]
    for member in schema.get("allOf", []):
        if "$ref" in member:
            member = schemas.get(member["$ref"].removeprefix(REF))
        found = _property(schemas, member, name)
        if found is not None:
            return found
    return None
