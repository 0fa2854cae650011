"""Two-typo ways as plain term queries: the terms an automaton matched, read back from the
documents it matched.

A query word of many letters may have two typos; listing every text two typos away from it
(as ``typo_words`` does for one) would try hundreds of thousands, so its way is a
``FuzzyTermQuery``, whose Levenshtein automaton walks the field's term dictionary on every
search: a few such words cost more than the rest of a search-as-you-type load. Such a word
matches few documents. When it is asked again, the automaton runs once more, alone, and the
words of the documents it matched (stored rows, analysed as the field was) within two typos
(``domain.typos``, the same count) are its terms: for the word being typed, the shortest
prefix within two typos of each word, looked up in the prefix field as the automaton does.
The way becomes a disjunction of term queries on them, kept only when it matches exactly
the documents the automaton matched (both searched in full); otherwise, or when the
automaton matches more than ``MAX_DOCUMENTS``, the automaton stays. An index generation
never changes, so neither do the terms.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import tantivy

from searchport.adapters.tantivy.documents import field_value
from searchport.adapters.tantivy.filters import any_of
from searchport.adapters.tantivy.schema import MAX_PREFIX_CHARS, prefix_field, text_analyzer
from searchport.domain.typos import osa_distance, shortest_prefix_within

MAX_DOCUMENTS = 200  # an automaton matching more keeps walking (rows to read, terms to hold)
WAYS_CACHED = 4_096  # per index
_TYPOS = 2
_TEXT = text_analyzer()
_UNLISTED = object()


class MatchedTerms:
    """The two-typo ways of one index generation, listed from what their automata matched."""

    def __init__(self, searcher: tantivy.Searcher, schema: tantivy.Schema,
                 row: Callable[[tantivy.DocAddress], dict[str, Any]]) -> None:
        self._searcher = searcher
        self._schema = schema
        self._row = row
        self._lock = threading.Lock()
        # (field, word, typed) -> the listed way, or None: the automaton stays
        self._ways: dict[tuple[str, str, bool], tantivy.Query | None] = {}
        self._asked: set[tuple[str, str, bool]] = set()

    @staticmethod
    def listable(word: str, typed: bool) -> bool:
        """Whether the way can be listed: a typed word's automaton must be the prefix
        field's (``TextQueryBuilder._automaton``)."""
        return not typed or len(word) + _TYPOS <= MAX_PREFIX_CHARS

    def way(self, field: str, word: str, typed: bool, automaton: tantivy.Query
            ) -> tuple[tantivy.Query | None, bool]:
        """(the listed way of ``word``, two typos, on ``field``: the same documents as
        ``automaton``, or ``None`` to keep the automaton; whether that is settled, or waits
        for the word to be asked again)."""
        key = (field, word, typed)
        found = self._ways.get(key, _UNLISTED)
        if found is not _UNLISTED:
            return found, True  # type: ignore[return-value]  # a query or None
        with self._lock:
            if key not in self._asked:  # a typo is often typed once: no reading for it
                if len(self._asked) >= WAYS_CACHED:
                    self._asked.clear()
                self._asked.add(key)
                return None, False
        listed = self._list(field, word, typed, automaton)
        with self._lock:
            if len(self._ways) >= WAYS_CACHED:
                self._ways.clear()
            self._ways[key] = listed
        return listed, True

    def _list(self, field: str, word: str, typed: bool, automaton: tantivy.Query
              ) -> tantivy.Query | None:
        matched = self._searcher.search(automaton, limit=MAX_DOCUMENTS + 1, count=False).hits
        if len(matched) > MAX_DOCUMENTS:
            return None
        terms: set[str] = set()
        for _, address in matched:
            value = field_value(self._row(address), field)
            for item in value if isinstance(value, list) else [value]:
                if not isinstance(item, str):
                    continue
                for found in _TEXT.analyze(item):
                    if typed:
                        size = shortest_prefix_within(found, word, _TYPOS)
                        if 0 < size <= MAX_PREFIX_CHARS:
                            terms.add(found[:size])
                    elif osa_distance(found, word, _TYPOS) <= _TYPOS:
                        terms.add(found)
        name = prefix_field(field) if typed else field
        listed = any_of([tantivy.Query.term_query(self._schema, name, t) for t in sorted(terms)])
        again = self._searcher.search(listed, limit=MAX_DOCUMENTS + 1, count=False).hits
        if _addresses(again) != _addresses(matched):  # not the same documents: keep walking
            return None
        return listed


def _addresses(hits: list[tuple[Any, tantivy.DocAddress]]) -> set[tuple[int, int]]:
    return {(address.segment_ord, address.doc) for _, address in hits}
