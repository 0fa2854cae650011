"""Per-handle field knowledge: aliases both ways, configured weights and searchable fields."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from searchport.domain.config import FieldConfig
from searchport.domain.query import FieldWeight

METADATA_KEYS = ("objectID", "_index", "_score", "_highlights")
METADATA = frozenset(METADATA_KEYS)


class FieldMap:
    """Translates public (alias) field names to real engine names and back."""

    def __init__(self, fields: Mapping[str, FieldConfig]) -> None:
        self._to_real = {name: fc.field for name, fc in fields.items() if fc.field}
        self._to_public = {real: name for name, real in self._to_real.items()}
        self.types = {fc.field or name: fc.type for name, fc in fields.items() if fc.type}
        self.nested_paths = {
            fc.field or name: fc.nested_path for name, fc in fields.items() if fc.nested_path
        }
        weighted = [
            FieldWeight(field=fc.field or name, weight=fc.weight)
            for name, fc in fields.items()
            if fc.weight is not None
        ]
        searchable = [
            FieldWeight(field=fc.field or name, weight=1.0)
            for name, fc in fields.items()
            if fc.searchable and fc.weight is None
        ]
        self.configured_weights: tuple[FieldWeight, ...] = (*weighted, *searchable)
        # no alias is named like hit metadata: a row without such names loses no field
        self._plain_public = METADATA.isdisjoint(self._to_public.values())

    @property
    def has_aliases(self) -> bool:
        return bool(self._to_real)

    def real(self, name: str) -> str:
        return self._to_real.get(name, name)

    def public(self, name: str) -> str:
        return self._to_public.get(name, name)

    def real_all(self, names: Iterable[str]) -> tuple[str, ...]:
        return tuple(self.real(n) for n in names)

    def public_keys(self, mapping: Mapping[str, Any]) -> dict[str, Any]:
        if not self._to_public:
            return dict(mapping)
        return {self.public(k): v for k, v in mapping.items()}

    def document(self, source: Mapping[str, Any]) -> dict[str, Any]:
        """Stored fields under their public names, minus any that clash with hit metadata."""
        to_public = self._to_public
        if METADATA.isdisjoint(source):
            if not to_public:
                return dict(source)  # no alias, no clash: a plain copy, cheaper than a rebuild
            if self._plain_public:  # no clash either: each name looked up once
                return {to_public.get(k, k): v for k, v in source.items()}
        return {
            to_public.get(k, k): v
            for k, v in source.items()
            if to_public.get(k, k) not in METADATA_KEYS
        }


def alias_conflicts(fields: Mapping[str, FieldConfig]) -> list[str]:
    """Config errors in ``fields``: two entries naming one real field."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for name, fc in fields.items():
        real = fc.field or name
        if real in seen:
            problems.append(f"fields.{name} and fields.{seen[real]} both name the field {real!r}")
        seen[real] = name
    return problems
