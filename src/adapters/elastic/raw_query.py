"""A raw query body kept to the handle's own indices: a raw query never reads another index.

The request path names the configured indices, and a top-level ``index``, ``indices`` or
``_index`` key (how the reference let a body pick another index; no search-body key of
either engine) is removed. The path does not bound everything, though: a few constructs of
the query DSL make the engine fetch a document from an index they name themselves.

- a terms lookup: ``{"terms": {"<field>": {"index": ..., "id": ..., "path": ...}}}``;
- ``more_like_this`` ``like``/``unlike`` documents carrying ``_index``;
- ``percolate`` of a stored document: ``{"percolate": {"index": ..., "id": ...}}``;
- ``geo_shape``/``shape`` ``indexed_shape``, whose ``index`` defaults to ``shapes``;
- a ``lookup`` runtime field: ``{"type": "lookup", "target_index": ...}``.

One that names a configured index is kept; one that names any other is refused with a 400
naming the construct, never rewritten: changing which document a lookup reads would
silently change what the query means. Two constructs hide what they will run and are always
refused: the ``wrapper`` query (a base64-encoded query) and a phrase suggester's ``collate``
(a mustache template). ``_index`` in ``pinned`` documents or in a ``term`` query only picks
among the documents searched, and passes.

The walk looks at every object of the body by key, not by position in the DSL, so a
construct in a place searchport does not know (a new compound query, a retriever, an
aggregation filter) is still found. The price: a document *field* with one of these names
shaped like the construct (a sub-aggregation named ``index`` in a terms ``order``) is
refused too, with the same message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from searchport.domain.errors import Forbidden, InvalidRequest

Json = dict[str, Any]

RETARGETING_KEYS = frozenset({"index", "indices", "_index"})
DEFAULT_SHAPE_INDEX = "shapes"  # indexed_shape without ``index`` reads this one
MLT_DOCUMENTS = ("like", "unlike", "docs")
MAX_WHERE = 120

# a denied feature -> the keys that use it, anywhere in the body
FEATURE_KEYS = {
    "scripts": frozenset({
        "script", "_script", "script_fields", "scripted_metric", "init_script", "map_script",
        "combine_script", "reduce_script",
    }),
    "runtimeFields": frozenset({"runtime_mappings"}),
}
FEATURE_NAMES = {"scripts": "scripts", "runtimeFields": "runtime fields"}


def keys_in(body: Json) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Every key of every object in ``body``, with the path to it (depth first)."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(body, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, list):
            stack.extend((item, (*where, f"[{i}]")) for i, item in enumerate(node))
        elif isinstance(node, dict):
            for key, value in node.items():
                here = (*where, str(key))
                yield str(key), here
                stack.append((value, here))


def check_features(body: Json, denied: list[str]) -> None:
    """``Forbidden`` (403) naming the first denied feature the body uses, and where."""
    keys = {key: feature for feature in denied for key in FEATURE_KEYS.get(feature, ())}
    if not keys:
        return
    for key, here in keys_in(body):
        feature = keys.get(key)
        if feature is not None:
            raise Forbidden(
                f"The raw query uses {FEATURE_NAMES[feature]} ({where_text(here)}), "
                "which this handle does not allow (rawQueryDeny)"
            )


def scoped_body(body: Json, indices: frozenset[str]) -> Json:
    """``body`` without its top-level retargeting keys; ``InvalidRequest`` when anything in
    it would read an index outside ``indices`` (the configured index names)."""
    kept = {k: v for k, v in body.items() if k not in RETARGETING_KEYS}
    for where, construct, index in index_reads(kept):
        if construct in ("a wrapper query", "a collate template"):
            raise InvalidRequest(
                f"The raw query contains {construct} ({where_text(where)}), which hides the "
                "query it runs; send the query itself"
            )
        if not isinstance(index, str) or index not in indices:
            named = f'index "{index}"' if isinstance(index, str) else "an index"
            raise InvalidRequest(
                f"The raw query reads {named} through {construct} ({where_text(where)}); "
                "a raw query may only read this handle's own index"
            )
    return kept


def index_reads(body: Json) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """``(where, construct, index named)`` for every construct that reads an index by
    name; ``index`` is ``None`` for the ones that hide what they run. Iterative: a raw
    body may nest as deep as the JSON decoder allowed."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(body, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, list):
            stack.extend((item, (*where, f"[{i}]")) for i, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            here = (*where, str(key))
            if isinstance(value, dict):
                yield from _reads_of(str(key), value, here)
            stack.append((value, here))


def _reads_of(key: str, value: Json, here: tuple[str, ...]
              ) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    if key == "terms":
        for field, spec in value.items():
            if isinstance(spec, dict) and "index" in spec:
                yield (*here, str(field)), "a terms lookup", spec["index"]
    elif key == "percolate" and "index" in value:
        yield here, "a percolate query of a stored document", value["index"]
    elif key == "indexed_shape" and ("id" in value or "index" in value):
        yield here, "an indexed shape", value.get("index", DEFAULT_SHAPE_INDEX)
    elif key == "more_like_this":
        for part in MLT_DOCUMENTS:
            items = value.get(part)
            for i, item in enumerate(items if isinstance(items, list) else [items]):
                if isinstance(item, dict) and "_index" in item:
                    yield (*here, part, f"[{i}]"), "a more_like_this document", item["_index"]
    elif key == "runtime_mappings":
        for field, spec in value.items():
            if isinstance(spec, dict) and (spec.get("type") == "lookup"
                                           or "target_index" in spec):
                yield (*here, str(field)), "a lookup runtime field", spec.get("target_index")
    elif key == "wrapper" and isinstance(value.get("query"), str):
        yield here, "a wrapper query", None
    elif key == "collate" and "query" in value:
        yield here, "a collate template", None


def where_text(where: tuple[str, ...]) -> str:
    text = "".join(part if part.startswith("[") else f".{part}" for part in where)
    text = f"at {text.lstrip('.')}"
    return text if len(text) <= MAX_WHERE else text[: MAX_WHERE - 3] + "..."
