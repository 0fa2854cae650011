"""What a ``querySuggestions`` handle is, beside the options its config gives: the fields
of its records, its ranking and where its index lives, filled in when the config is read.

A record is Algolia's: ``query`` (also its ``objectID``), ``popularity`` (searches in the
period), ``nb_words``, and under the source handle's name ``exact_nb_hits`` and
``facets.exact_matches`` (``<source>.facets.exact_matches.<attribute>``: ``[{value,
count}]``), which `@algolia/autocomplete-plugin-query-suggestions` reads as categories.
"""

from __future__ import annotations

import msgspec

from searchport.domain.config import DefaultsConfig, FieldConfig, IndexConfig, RankingKey

ID_FIELD = "objectID"
FIELDS: dict[str, FieldConfig] = {
    "query": FieldConfig(type="text", weight=1.0),
    "popularity": FieldConfig(type="integer"),
    "nb_words": FieldConfig(type="integer"),
}
# the options of a querySuggestions handle, as written in the config (camelCase)
OPTIONS = frozenset({"source", "minHits", "minLetters", "exclude", "facets", "minCount",
                     "period", "refresh"})
# what else such a handle takes: how its index is kept and served
SERVING = frozenset({"engine", "path", "defaults", "cache", "typoTolerance", "prefixSearch",
                     "rawQuery", "maxResultWindow", "exactTotals", "timeout"})


def default_path(handle: str) -> str:
    """The index folder when ``path`` is not set (relative to the config file)."""
    return f".searchport/suggestions/{handle}"


def suggestions_config(handle: str, index: IndexConfig) -> IndexConfig:
    """The handle's config with the records' fields, the most popular first among equally
    relevant suggestions, highlights of ``query`` by default, and its index folder."""
    defaults = index.defaults
    if defaults == DefaultsConfig():
        defaults = DefaultsConfig(highlight=["query"])
    return msgspec.structs.replace(
        index, fields=dict(FIELDS), id_field=ID_FIELD,
        custom_ranking=[RankingKey(field="popularity", order="desc")],
        defaults=defaults, path=index.path or default_path(handle),
    )
