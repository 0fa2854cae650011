"""Turning one source row into one tantivy document."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import msgspec
import tantivy

from searchport.adapters.tantivy import values
from searchport.adapters.tantivy.geo import tile_numbers
from searchport.adapters.tantivy.schema import (
    ID_FIELD,
    MAX_ZOOM,
    PRESENT_FIELD,
    RANK_WEIGHT_FIELD,
    SEQ_FIELD,
    SOURCE_FIELD,
    IndexLayout,
    fold_field,
    lat_field,
    lon_field,
    prefix_field,
    sort_field,
    text_analyzer,
    tile_field,
)
from searchport.adapters.tantivy.source import SourceRow

_encode = msgspec.json.Encoder().encode
_ANALYZER = text_analyzer()


class UnusableRow(ValueError):
    """The row cannot be a document: not an object, or without a usable id."""


class RowDocument(msgspec.Struct, kw_only=True):
    document: tantivy.Document
    doc_id: str
    bad_values: int  # values left out because they did not fit their field's type


def field_value(row: dict[str, Any], name: str) -> Any:
    """A row's value for a field; a dotted name also reaches into nested objects."""
    if name in row:
        return row[name]
    value: Any = row
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def document_id(row: dict[str, Any], id_field: str) -> str:
    value = field_value(row, id_field)
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise UnusableRow(f'the row has no "{id_field}" string or integer')
    return str(value)


Columns = dict[str, list[Any]]


def _add_text(columns: Columns, name: str, value: Any) -> Any:
    text = values.as_text(value)
    columns[name].append(text)
    columns[prefix_field(name)].extend(_ANALYZER.analyze(text))
    return value


def _add_keyword(columns: Columns, name: str, value: Any) -> Any:
    keyword = values.as_keyword(value)
    columns[name].append(keyword)
    columns[fold_field(name)].append(keyword)
    return keyword


def _add_plain(coerce: Callable[[Any], Any]) -> Callable[[Columns, str, Any], Any]:
    """Numbers and booleans: one column holding the coerced value."""

    def add(columns: Columns, name: str, value: Any) -> Any:
        coerced = coerce(value)
        columns[name].append(coerced)
        return coerced

    return add


def _add_date(columns: Columns, name: str, value: Any) -> Any:
    columns[name].append(values.as_date(value))
    return value


def _add_geo_point(columns: Columns, name: str, value: Any) -> Any:
    if columns[lat_field(name)]:
        raise values.BadValue("expects one point per document")
    lat, lon = values.as_geo_point(value)
    columns[lat_field(name)].append(lat)
    columns[lon_field(name)].append(lon)
    columns.update(zip(_tile_fields(name), ([n] for n in tile_numbers(lat, lon)), strict=True))
    return {"lat": lat, "lon": lon}


@functools.cache
def _tile_fields(name: str) -> list[str]:
    return [tile_field(name, zoom) for zoom in range(MAX_ZOOM + 1)]


# Each adder checks one value, appends it to its columns and returns it typed (the
# typed value replaces the text of a CSV cell in the stored row).
_ADDERS: dict[str, Callable[[Columns, str, Any], Any]] = {
    "text": _add_text,
    "keyword": _add_keyword,
    "integer": _add_plain(values.as_integer),
    "float": _add_plain(values.as_float),
    "boolean": _add_plain(values.as_boolean),
    "date": _add_date,
    "geo_point": _add_geo_point,
}


class DocumentFactory:
    def __init__(self, layout: IndexLayout,
                 keyword_ranks: dict[str, dict[str, int]] | None = None,
                 rank_weights: dict[int, float] | None = None) -> None:
        """``keyword_ranks``: per keyword field, the rank of each value in sorted order
        (see ``keyword_ranks``), which is what a keyword sorts by; ``rank_weights``: each
        row's custom ranking weight by its position (``ranking.rank_weights``)."""
        self._rank_weights = rank_weights or {}
        self._id_field = layout.id_field
        self._schema = layout.build_schema()
        self._ranks = keyword_ranks or {}
        # Looked up once here rather than once per row and field.
        self._fields = [(spec.name, spec.type, _ADDERS[spec.type])
                        for spec in layout.fields.values()]

    def make(self, source: SourceRow, seq: int) -> RowDocument:
        """The document of a row; ``seq`` is the row's position in the source."""
        row = source.row
        if row is None:
            raise UnusableRow("the row is not a JSON object")
        columns: Columns = defaultdict(list)
        present: list[str] = []
        bad = 0
        for name, kind, adder in self._fields:
            value = row.get(name)
            if value is None and "." in name:
                value = field_value(row, name)
            if value is None:
                continue
            typed: Any
            if isinstance(value, list) and kind != "geo_point":
                typed = []
                for item in value:
                    if item is not None:
                        try:
                            typed.append(adder(columns, name, item))
                        except (ValueError, OverflowError):  # BadValue, or tantivy's refusal
                            bad += 1
                if not typed:
                    continue
            else:
                try:
                    typed = adder(columns, name, value)
                except (ValueError, OverflowError):
                    bad += 1
                    continue
            present.append(name)
            self._add_sort_value(columns, name, kind)
            if source.from_text_cells and name in row:
                row[name] = typed
        # After the loop: a CSV id cell typed as an integer field reads "7", not "007".
        doc_id = document_id(row, self._id_field)
        columns[ID_FIELD] = [doc_id]
        columns[SEQ_FIELD] = [seq]
        columns[PRESENT_FIELD] = present
        weight = self._rank_weights.get(seq)
        if weight is not None:
            columns[RANK_WEIGHT_FIELD] = [weight]
        columns[SOURCE_FIELD] = [source.raw if source.raw is not None else _encode(row)]
        # One call builds the whole document: much cheaper than one call per value.
        try:
            document = tantivy.Document.from_dict(columns, self._schema)
        except (ValueError, TypeError) as exc:  # every value was checked: not expected
            raise UnusableRow(f"tantivy refused the row: {exc}") from exc
        return RowDocument(document=document, doc_id=doc_id, bad_values=bad)

    def _add_sort_value(self, columns: Columns, name: str, kind: str) -> None:
        """A document sorts by its smallest value of a field: one number per document."""
        if kind == "keyword":
            rank = self._ranks.get(name, {}).get(min(columns[name]))
            if rank is not None:
                columns[sort_field(name)] = [rank]
        elif kind == "date":
            columns[sort_field(name)] = [int(min(columns[name]).timestamp())]
        elif kind in ("integer", "float", "boolean") and len(columns[name]) > 1:
            columns[name].sort()  # tantivy sorts by a field's first value
