"""The engine-native endpoints: raw tantivy query-parser queries and the field mapping."""

from __future__ import annotations

from typing import Any

import msgspec

from searchport.adapters.tantivy.documents import document_id
from searchport.adapters.tantivy.raw_syntax import prepare_raw_query
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.schema import MAX_ZOOM
from searchport.domain.errors import InvalidQuery, InvalidRequest

RAW_KEYS = ("query", "limit", "offset")
RAW_MAX_LIMIT = 100
RAW_MAX_OFFSET = 10_000

_encode = msgspec.json.Encoder().encode
_decode_row = msgspec.json.Decoder(dict[str, Any]).decode


class RawHit(msgspec.Struct):
    score: float
    id: str
    doc: msgspec.Raw  # the stored row, passed through byte for byte


class RawResult(msgspec.Struct):
    count: int
    hits: list[RawHit]


def raw_query(ix: OpenIndex, body: dict[str, Any]) -> bytes:
    """``{"query": "title:castle AND year:[1900 TO *]", "limit": 10, "offset": 0}`` through
    tantivy's query parser; the default fields are the text and keyword fields."""
    unknown = sorted(set(body) - set(RAW_KEYS))
    if unknown:
        raise InvalidRequest(
            f"Unknown raw query key(s) {', '.join(unknown)}: the tantivy engine takes "
            f"{', '.join(RAW_KEYS)}"
        )
    text = body.get("query")
    if not isinstance(text, str):
        raise InvalidRequest('A raw tantivy query needs "query": a query-parser string')
    limit = _integer(body, "limit", 10)
    offset = _integer(body, "offset", 0)
    defaults = ix.layout.of_type("text", "keyword")
    try:
        parsed = ix.index.parse_query(prepare_raw_query(text, ix.layout),
                                      default_field_names=defaults)
    except ValueError as exc:
        raise InvalidQuery(f"tantivy could not parse the query: {_explain(exc)}") from None
    try:
        total, page = ix.top(parsed, max(1, min(limit, RAW_MAX_LIMIT)),
                             max(0, min(offset, RAW_MAX_OFFSET)))
    except ValueError as exc:  # a query tantivy parsed but cannot run: still the caller's
        raise InvalidQuery(f"tantivy could not run the query: {_explain(exc)}") from None
    hits = []
    for score, address in page:
        raw = ix.raw_row(address)
        hits.append(RawHit(score=float(score), id=document_id(_decode_row(raw),
                                                               ix.layout.id_field),
                           doc=msgspec.Raw(raw)))
    return _encode(RawResult(count=total, hits=hits))


def _explain(exc: ValueError) -> str:
    message = str(exc)
    if "Only excluding terms given" in message:
        return ("it only excludes (NOT or -): add what to keep, e.g. * -name:paris to match "
                "every document but those")
    if "Regex queries are not allowed" in message:
        return ("regular expressions are not allowed; use a range of words, as in "
                "name:[lond TO lone} for the words starting with lond")
    return message


def _integer(body: dict[str, Any], key: str, default: int) -> int:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f'Raw query "{key}" must be an integer')
    return value


def mapping(ix: OpenIndex) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for spec in ix.layout.fields.values():
        entry: dict[str, Any] = {
            "type": spec.type,
            "indexed": True,
            "fast": spec.type != "text",
            "stored": True,  # returned from the stored original row
        }
        if spec.type == "text":
            entry["analyzer"] = "simple, lowercase, ascii folding"
        if spec.type == "geo_point":
            entry["maxPrecision"] = MAX_ZOOM
        fields[spec.name] = entry
    return {
        "engine": "tantivy",
        "index": ix.handle,
        "numDocs": ix.num_docs,
        "idField": ix.layout.id_field,
        "fields": fields,
    }
