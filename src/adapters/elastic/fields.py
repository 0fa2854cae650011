"""What searchport learns from an index mapping: each field's type, its keyword sub-field
and its nested path, so filters, facets and sort reach the right Lucene field.

Dynamic mappings index every string as ``text`` with a ``keyword`` sub-field; exact filters,
facets and sort on such a field must use the sub-field, or Elasticsearch answers 400 (no
fielddata on text) or matches nothing (the text is analysed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

EXACT_STRING_TYPES = frozenset({"keyword", "constant_keyword", "wildcard"})
# analysed text: no exact terms and no doc values, so exact reads go to a keyword sub-field
TEXT_TYPES = frozenset({"text", "match_only_text", "search_as_you_type"})
STRING_TYPES = EXACT_STRING_TYPES | TEXT_TYPES


@dataclass(frozen=True)
class FieldInfo:
    type: str
    keyword: str | None = None  # the name of an exact (keyword) sub-field, e.g. "title.keyword"
    nested_path: str | None = None  # the innermost enclosing ``nested`` object


@dataclass(frozen=True)
class FieldCatalog:
    """Field knowledge for one handle: configured ``nestedPath``s first, then the mapping."""

    mapped: Mapping[str, FieldInfo] = field(default_factory=dict)
    configured_nested: Mapping[str, str] = field(default_factory=dict)

    def nested_path(self, name: str) -> str | None:
        configured = self.configured_nested.get(name)
        if configured is not None:
            return configured
        info = self.mapped.get(name)
        return info.nested_path if info is not None else None

    def exact(self, name: str) -> str:
        """The field to filter, facet and sort on: a text field's keyword sub-field. Any
        other field (a number, a date, a keyword...) is exact itself, even with a keyword
        sub-field: that one would sort and compare numbers and dates as text."""
        info = self.mapped.get(name)
        if info is not None and info.type in TEXT_TYPES and info.keyword:
            return info.keyword
        return name

    def is_string(self, name: str) -> bool:
        """Whether terms of the field are strings (unknown fields are assumed to be)."""
        info = self.mapped.get(name)
        return info is None or info.type in STRING_TYPES


def read_mapping(response: Mapping[str, Any]) -> dict[str, FieldInfo]:
    """Flatten a ``GET /<index>/_mapping`` answer to dotted field names. With several
    indices the first one (in the answer's order) that has a field describes it."""
    fields: dict[str, FieldInfo] = {}
    for index_mapping in response.values():
        if not isinstance(index_mapping, Mapping):
            continue
        mappings = index_mapping.get("mappings")
        if not isinstance(mappings, Mapping):
            continue
        properties = mappings.get("properties")
        if isinstance(properties, Mapping):
            _walk(properties, "", None, fields)
    return fields


def _walk(properties: Mapping[str, Any], prefix: str, nested: str | None,
          out: dict[str, FieldInfo]) -> None:
    for name, spec in properties.items():
        if not isinstance(spec, Mapping):
            continue
        path = f"{prefix}{name}"
        kind = str(spec.get("type", "object"))
        inner = spec.get("properties")
        if isinstance(inner, Mapping):
            _walk(inner, f"{path}.", path if kind == "nested" else nested, out)
            if kind in ("object", "nested"):
                out.setdefault(path, FieldInfo(type=kind, nested_path=nested))
                continue
        out.setdefault(path, FieldInfo(type=kind, keyword=_keyword_sub_field(path, spec),
                                       nested_path=nested))


def _keyword_sub_field(path: str, spec: Mapping[str, Any]) -> str | None:
    subs = spec.get("fields")
    if not isinstance(subs, Mapping):
        return None
    exact = [n for n, s in subs.items() if isinstance(s, Mapping) and s.get("type") == "keyword"]
    if not exact:
        return None
    return f"{path}.{'keyword' if 'keyword' in exact else exact[0]}"
