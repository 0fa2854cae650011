"""One-typo ways as plain term queries: the words within one typo of a query word, listed.

A ``FuzzyTermQuery`` walks a field's whole term dictionary with a Levenshtein automaton on
every search, and a search-as-you-type query asks for the same few words again and again.
When a text field's words fit in memory and are written with few letters, the words (or,
for the word being typed, the prefixes) within one typo of a query word are found here once
(every deletion, transposition, substitution and insertion of a letter the field holds,
looked up among its words) and the typo way becomes a disjunction of term queries over
exactly those terms: the same documents as the automaton, which counts a transposition as
one typo too. Two typos, or a field with too many words or letters, keep the automaton.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import threading
from array import array
from collections.abc import Sequence

import tantivy

from searchport.adapters.tantivy.filters import any_of
from searchport.adapters.tantivy.schema import prefix_field

MAX_WORDS = 400_000  # a field with more words keeps the automaton (memory)
MAX_LETTERS = 64  # so does one written with more letters (each typo tries every letter)
EXPANSIONS_CACHED = 4_096  # per field


class SortedWords(Sequence[str]):
    """Sorted words in one string (a tenth of the memory of as many string objects)."""

    def __init__(self, words: list[str]) -> None:
        """``words``: sorted, each once, none holding a newline."""
        self._joined = "\n".join(words) + "\n"
        self._starts = array("L", itertools.accumulate((len(w) + 1 for w in words), initial=0))

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, at: int) -> str:  # type: ignore[override]  # no slices needed
        return self._joined[self._starts[at]:self._starts[at + 1] - 1]

    @property
    def letters(self) -> set[str]:
        return set(self._joined) - {"\n"}


class FieldWords:
    """The words of one text field, and the typo ways found among them."""

    def __init__(self, schema: tantivy.Schema, field: str, words: SortedWords) -> None:
        self._schema = schema
        self._field = field
        self._ordered = words
        self._letters = sorted(words.letters)
        self.word_way = functools.lru_cache(maxsize=EXPANSIONS_CACHED)(self._word_way)
        self.prefix_way = functools.lru_cache(maxsize=EXPANSIONS_CACHED)(self._prefix_way)

    def _word_way(self, word: str) -> tantivy.Query:
        """The words of the field within one typo of ``word``."""
        found = sorted(c for c in set(_one_typo(word, self._letters)) if self._has(c))
        return any_of([tantivy.Query.term_query(self._schema, self._field, c) for c in found])

    def _has(self, word: str) -> bool:
        at = bisect.bisect_left(self._ordered, word)
        return at < len(self._ordered) and self._ordered[at] == word

    def _prefix_way(self, word: str) -> tantivy.Query:
        """The words of the field starting within one typo of ``word``, as the shortest
        such prefixes (a word starting with "ros" also starts with "rost")."""
        kept: set[str] = set()
        for candidate in sorted(set(_one_typo(word, self._letters)), key=len):
            if not candidate or any(candidate[:n] in kept for n in range(1, len(candidate))):
                continue
            at = bisect.bisect_left(self._ordered, candidate)
            if at < len(self._ordered) and self._ordered[at].startswith(candidate):
                kept.add(candidate)
        name = prefix_field(self._field)
        return any_of([tantivy.Query.term_query(self._schema, name, c) for c in sorted(kept)])


def _one_typo(word: str, letters: list[str]) -> list[str]:
    """``word`` and every text one deletion, transposition, substitution or insertion of
    one of ``letters`` away from it."""
    found = [word]
    for i in range(len(word)):
        head, tail = word[:i], word[i + 1:]
        found.append(head + tail)
        if tail:
            found.append(head + tail[0] + word[i] + tail[1:])
        found.extend(head + letter + tail for letter in letters)
    for i in range(len(word) + 1):
        head, tail = word[:i], word[i:]
        found.extend(head + letter + tail for letter in letters)
    return found


class Vocabulary:
    """The words of an index's text fields, read in the background once it opens: until a
    field's words are in, its typo ways stay automata."""

    def __init__(self, searcher: tantivy.Searcher, schema: tantivy.Schema,
                 fields: list[str]) -> None:
        self._fields: dict[str, FieldWords | None] = {}
        self._loader = threading.Thread(target=self._load, args=(searcher, schema, fields),
                                        name="searchport-vocabulary", daemon=True)
        self._loader.start()

    def _load(self, searcher: tantivy.Searcher, schema: tantivy.Schema,
              fields: list[str]) -> None:
        for field in fields:
            terms = searcher.terms_with_prefix(field, "", limit=MAX_WORDS + 1)
            if len(terms) > MAX_WORDS:
                self._fields[field] = None
                continue
            words = SortedWords(sorted(term for term, _ in terms))
            del terms
            usable = len(words.letters) <= MAX_LETTERS
            self._fields[field] = FieldWords(schema, field, words) if usable else None

    @property
    def ready(self) -> bool:
        return not self._loader.is_alive()

    def wait(self, timeout: float | None = None) -> None:
        """Until every field's words are read (tests, benchmarks)."""
        self._loader.join(timeout)

    def words(self, field: str) -> FieldWords | None:
        return self._fields.get(field)
