"""The index layout: which tantivy fields a handle's ``fields`` config becomes.

Configured fields keep their real names, so raw queries read naturally
(``title:castle``); everything searchport adds for itself starts with ``__``.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version
from typing import Literal

import msgspec
import tantivy

from searchport.domain.config import FieldType, IndexConfig
from searchport.domain.errors import EngineUnavailable

# Bump when the layout below, or what the index folder records (``IndexMeta``), changes:
# every index built by an older layout is rebuilt.
FORMAT_VERSION = 4

TEXT_ANALYZER = "searchport_text"
FOLD_ANALYZER = "searchport_fold"
PREFIX_ANALYZER = "searchport_prefixes"  # for words already analysed: their prefixes

MAX_PREFIX_CHARS = 20  # words are indexed with their prefixes up to this length

SOURCE_FIELD = "__source"  # the original row as JSON bytes: what hits return
ID_FIELD = "__id"  # the document id as a string
SEQ_FIELD = "__seq"  # the row's position in the source: stable tie-breaks, samples
PRESENT_FIELD = "__present"  # names of the configured fields a row has a value for
RANK_WEIGHT_FIELD = "__rank_weight"  # the custom ranking as one number (ranking.py)

MAX_ZOOM = 29
SORTABLE: frozenset[str] = frozenset({"keyword", "integer", "float", "boolean", "date"})
FACETABLE = SORTABLE
NUMERIC: frozenset[str] = frozenset({"integer", "float"})


def fold_field(name: str) -> str:
    """Lower-cased, accent-folded copy of a keyword, so searching "france" finds "France"."""
    return f"__fold_{name}"


def prefix_field(name: str) -> str:
    """Every prefix of every word of a text field ("s", "sa", "san"): a typed prefix is one
    term lookup, however many words start with it."""
    return f"__prefix_{name}"


def sort_field(name: str) -> str:
    """One number per document that orders like the field's smallest value: a keyword's
    rank among the field's sorted values, a date's Unix time in seconds."""
    return f"__sort_{name}"


def lat_field(name: str) -> str:
    return f"__lat_{name}"


def lon_field(name: str) -> str:
    return f"__lon_{name}"


def tile_field(name: str, zoom: int) -> str:
    """Web-mercator tile number ``x * 2**zoom + y`` of a geo point at one zoom level."""
    return f"__tile{zoom}_{name}"


class FieldSpec(msgspec.Struct, frozen=True, kw_only=True):
    name: str  # the real field name, in the source and in tantivy
    type: FieldType


class RankingSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One ``customRanking`` key, in real names."""

    name: str
    type: FieldType
    order: Literal["asc", "desc"]


def sortable_column(spec: FieldSpec) -> str:
    """The fast field a sort on ``spec`` reads (numbers and booleans: the field itself)."""
    return sort_field(spec.name) if spec.type in ("keyword", "date") else spec.name


def text_analyzer() -> tantivy.TextAnalyzer:
    # Accent folding lets "zurich" find "Zürich"; no stemming, so matches stay literal.
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .build()
    )


def fold_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .build()
    )


def register_analyzers(index: tantivy.Index) -> None:
    """Custom analyzers live in the process, not in the index folder: every opened index
    needs them before it indexes or searches."""
    index.register_tokenizer(TEXT_ANALYZER, text_analyzer())
    index.register_tokenizer(FOLD_ANALYZER, fold_analyzer())
    # Each value of a prefix field is one analysed word ("zurich"), cut into "z", "zu"...
    ngrams = tantivy.Tokenizer.ngram(min_gram=1, max_gram=MAX_PREFIX_CHARS, prefix_only=True)
    index.register_tokenizer(PREFIX_ANALYZER, tantivy.TextAnalyzerBuilder(ngrams).build())


class IndexLayout:
    """The typed fields of one handle, in real names, and the schema they make."""

    def __init__(self, config: IndexConfig) -> None:
        self.id_field = config.id_field
        self.typos = config.typo_tolerance
        self.prefix_search = config.prefix_search
        # public name -> real name, for the fields whose public name is an alias
        self.aliases = {public: fc.field for public, fc in config.fields.items()
                        if fc.field and fc.field != public}
        fields: dict[str, FieldSpec] = {}
        searched_untyped: dict[str, str] = {}  # real name -> public name
        for public, fc in config.fields.items():
            real = fc.field or public
            if fc.type is None:
                # An alias only (the value is still stored and returned), unless searched.
                if fc.weight is not None or fc.searchable:
                    searched_untyped[real] = public
                continue
            if real.startswith("__") or not tantivy.SchemaBuilder.is_valid_field_name(real):
                raise EngineUnavailable(f'"{real}" cannot be a tantivy field name')
            known = fields.get(real)
            if known is not None and known.type != fc.type:
                raise EngineUnavailable(
                    f'field "{real}" is configured both as {known.type} and as {fc.type}'
                )
            fields[real] = FieldSpec(name=real, type=fc.type)
        for real, public in searched_untyped.items():
            if real not in fields:
                raise EngineUnavailable(
                    f"fields.{public}.type is required by the tantivy engine for a searched "
                    f"field (text, keyword, integer, float, boolean, date or geo_point)"
                )
        self.fields = fields
        self.ranking: list[RankingSpec] = []
        for key in config.custom_ranking:
            configured = config.fields.get(key.field)
            real = (configured.field if configured is not None else None) or key.field
            spec = fields.get(real)
            if spec is None or spec.type not in ("integer", "float", "date"):
                raise EngineUnavailable(
                    f"customRanking: {key.field!r} must be an integer, float or date field"
                )
            self.ranking.append(RankingSpec(name=real, type=spec.type, order=key.order))

    def spec(self, name: str) -> FieldSpec | None:
        return self.fields.get(name)

    def of_type(self, *types: str) -> list[str]:
        return [spec.name for spec in self.fields.values() if spec.type in types]

    def fingerprint(self) -> str:
        """Changes whenever a rebuild is needed for the config to be honoured."""
        shape = {
            "format": FORMAT_VERSION,
            "tantivy": version("tantivy"),
            "idField": self.id_field,
            "fields": sorted((spec.name, spec.type) for spec in self.fields.values()),
            "customRanking": [(spec.name, spec.order) for spec in self.ranking],
        }
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()

    def build_schema(self) -> tantivy.Schema:
        builder = tantivy.SchemaBuilder()
        builder.add_bytes_field(SOURCE_FIELD, stored=True)
        builder.add_text_field(ID_FIELD, fast=True, tokenizer_name="raw")
        builder.add_unsigned_field(SEQ_FIELD, indexed=True, fast=True)
        builder.add_text_field(PRESENT_FIELD, tokenizer_name="raw", index_option="basic")
        for spec in self.fields.values():
            _add_field(builder, spec)
        if self.ranking:
            builder.add_float_field(RANK_WEIGHT_FIELD, fast=True)
        return builder.build()


def _add_field(builder: tantivy.SchemaBuilder, spec: FieldSpec) -> None:
    name = spec.name
    if spec.type == "text":
        builder.add_text_field(name, tokenizer_name=TEXT_ANALYZER)
        builder.add_text_field(prefix_field(name), tokenizer_name=PREFIX_ANALYZER,
                               index_option="freq")
    elif spec.type == "keyword":
        builder.add_text_field(name, fast=True, tokenizer_name="raw", index_option="freq")
        builder.add_text_field(fold_field(name), tokenizer_name=FOLD_ANALYZER,
                               index_option="freq")
        builder.add_unsigned_field(sort_field(name), fast=True)
    elif spec.type == "integer":
        builder.add_integer_field(name, indexed=True, fast=True)
    elif spec.type == "float":
        builder.add_float_field(name, indexed=True, fast=True)
    elif spec.type == "boolean":
        builder.add_boolean_field(name, indexed=True, fast=True)
    elif spec.type == "date":
        builder.add_date_field(name, indexed=True, fast=True)
        builder.add_integer_field(sort_field(name), fast=True)
    else:  # geo_point: coordinates for bounds and centroids, one tile column per zoom
        builder.add_float_field(lat_field(name), fast=True)
        builder.add_float_field(lon_field(name), fast=True)
        for zoom in range(MAX_ZOOM + 1):
            builder.add_unsigned_field(tile_field(name, zoom), fast=True)
