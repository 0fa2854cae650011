"""Algolia's word parameters: which words of a query a hit must match.

Every word must match (Algolia's rule), but those of ``optionalWords`` and, with
``removeStopWords``, the stop words of the query's languages (``queryLanguages``; every list
searchport has when none is given), which are made optional rather than removed.
``removeWordsIfNoResults`` (``none``, ``lastWords``, ``firstWords``, ``allOptional``) gives
the sets of optional words to try in turn while a search finds nothing. ``ignorePlurals`` is
read and checked; plural forms match as the engine's analyzers make them (docs/algolia.md).
"""

from __future__ import annotations

from typing import Any

import msgspec

from searchport.domain.errors import InvalidRequest
from searchport.domain.stop_words import STOP_WORDS, stop_words_of
from searchport.entrypoints.algolia import params as ap

REMOVE_WORDS = ("none", "lastWords", "firstWords", "allOptional")


class Words(msgspec.Struct, frozen=True, kw_only=True):
    optional: tuple[str, ...] = ()
    # optional words to try in turn, each set wider than the one before, while none is found
    fallbacks: tuple[tuple[str, ...], ...] = ()


def read_words(values: dict[str, Any], text: str) -> Words:
    languages = ap.names(values, "queryLanguages") or []
    _languages_or_flag(values, "ignorePlurals")
    optional = [w for entry in ap.names(values, "optionalWords") or [] for w in entry.split()]
    stop = _languages_or_flag(values, "removeStopWords")
    if stop:
        chosen = stop if isinstance(stop, list) else languages or list(STOP_WORDS)
        stopping = stop_words_of(chosen)
        optional += [w for w in text.split() if w.casefold() in stopping]
    mode = ap.text(values, "removeWordsIfNoResults", "none") or "none"
    if mode not in REMOVE_WORDS:
        raise InvalidRequest(f"removeWordsIfNoResults: one of {', '.join(REMOVE_WORDS)}, "
                             f"got {mode!r}")
    base = tuple(dict.fromkeys(optional))
    words = text.split()
    if mode == "allOptional":
        sets = [words]
    elif mode == "lastWords":
        sets = [words[len(words) - k:] for k in range(1, len(words))]
    elif mode == "firstWords":
        sets = [words[:k] for k in range(1, len(words))]
    else:
        sets = []
    fallbacks = [tuple(dict.fromkeys([*base, *more])) for more in sets]
    return Words(optional=base, fallbacks=tuple(f for f in dict.fromkeys(fallbacks)
                                                if f != base))


def _languages_or_flag(values: dict[str, Any], name: str) -> list[str] | bool:
    """``true``/``false`` or a list of language codes (Algolia's ``ignorePlurals`` and
    ``removeStopWords``)."""
    value = values.get(name)
    if value is None or value == "" or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return ap.flag(values, name, False)
    found = ap.names(values, name)
    return found or False
