"""One-typo ways as plain term queries: the words within one typo of a query word, listed.

A ``FuzzyTermQuery`` walks a field's whole term dictionary with a Levenshtein automaton on
every search, and a search-as-you-type query asks for the same few words again and again.
When a text field's words fit in memory and are written with few letters, the words (or,
for the word being typed, the prefixes) within one typo of a query word are found here once
(every deletion, transposition, substitution and insertion of a letter the field holds,
looked up among its words) and the typo way becomes a disjunction of term queries over
exactly those terms: the same documents as the automaton, which counts a transposition as
one typo too. A word's first search, two typos, and a field with too many words or letters keep the
automaton.
"""

from __future__ import annotations

import functools
import threading

import tantivy

from searchport.adapters.heap import give_back_freed_memory
from searchport.adapters.tantivy.filters import any_of
from searchport.adapters.tantivy.schema import prefix_field

MAX_WORDS = 400_000  # a field with more words keeps the automaton (memory)
MAX_LETTERS = 64  # so does one written with more letters (each typo tries every letter)
EXPANSIONS_CACHED = 4_096  # per field
ASKED_REMEMBERED = 16_384  # per field: query words asked once
_SHORT = 2  # words and prefixes of up to this many letters are kept in sets
# a typo way, and its terms: the words (or the shortest prefixes) within one typo
Way = tuple[tantivy.Query, frozenset[str]]


class FieldWords:
    """The words of one text field, and the typo ways found among them.

    The words are kept in one string, sorted and each between newlines
    (``"\\nrosa\\nrost\\n"``), with where each group of words sharing their first three
    letters lies in it: a tenth of the memory of as many string objects, in one block the
    allocator can give back whole, and a word, or a prefix, is found with one bounded
    substring search of its group (shorter ones are kept in sets)."""

    def __init__(self, schema: tantivy.Schema, field: str, words: str) -> None:
        """``words``: sorted, each once, none holding a newline, joined by newlines."""
        self._schema = schema
        self._field = field
        self._text = "\n" + words + "\n" if words else "\n"
        self._groups: dict[str, tuple[int, int]] = {}
        short: list[str] = []
        starts: set[str] = set()
        text, end = self._text, 0
        while end < len(text) - 1:
            begin, end = end, text.index("\n", end + 1)
            starts.update(text[begin + 1:min(end, begin + 1 + n)] for n in range(1, _SHORT + 1))
            if end - begin - 1 <= _SHORT:
                short.append(text[begin + 1:end])
                continue
            # words sharing their first three letters are neighbours in sorted order
            start = text[begin + 1:begin + 2 + _SHORT]
            found = self._groups.get(start)
            self._groups[start] = (begin if found is None else found[0], end + 1)
        self._short_words = frozenset(short)
        self._short_starts = frozenset(starts)
        self.letters = sorted(set(self._text) - {"\n"})
        self.word_way = functools.lru_cache(maxsize=EXPANSIONS_CACHED)(self._word_way)
        self.prefix_way = functools.lru_cache(maxsize=EXPANSIONS_CACHED)(self._prefix_way)
        self._asked: set[tuple[str, bool]] = set()

    def asked_before(self, word: str, prefix: bool) -> bool:
        """Whether ``word`` was asked before (as the word being typed or not), noting that it
        is now. Listing a word's neighbours costs about what one or two automaton walks
        do: a word asked once (a typo is often asked only once) keeps its automaton."""
        key = (word, prefix)
        if key in self._asked:
            return True
        if len(self._asked) >= ASKED_REMEMBERED:
            self._asked.clear()
        self._asked.add(key)
        return False

    def _has(self, word: str) -> bool:
        if len(word) <= _SHORT:
            return word in self._short_words
        group = self._groups.get(word[:_SHORT + 1])
        return group is not None and self._text.find(f"\n{word}\n", *group) >= 0

    def _starts(self, prefix: str) -> bool:
        if len(prefix) <= _SHORT:
            return prefix in self._short_starts
        group = self._groups.get(prefix[:_SHORT + 1])
        return group is not None and self._text.find(f"\n{prefix}", *group) >= 0

    def _word_way(self, word: str) -> Way:
        """The words of the field within one typo of ``word``."""
        found = sorted(c for c in set(_one_typo(word, self.letters)) if c and self._has(c))
        terms = [tantivy.Query.term_query(self._schema, self._field, c) for c in found]
        return any_of(terms), frozenset(found)

    def _prefix_way(self, word: str) -> Way:
        """The words of the field starting within one typo of ``word``, as the shortest
        such prefixes (a word starting with "ros" also starts with "rost")."""
        kept: set[str] = set()
        shortest = max(1, len(word) - 1)  # no text one typo away is shorter
        for candidate in sorted(set(_one_typo(word, self.letters)), key=len):
            if (candidate and self._starts(candidate)
                    and not any(candidate[:n] in kept
                                for n in range(shortest, len(candidate)))):
                kept.add(candidate)
        name = prefix_field(self._field)
        terms = [tantivy.Query.term_query(self._schema, name, c) for c in sorted(kept)]
        return any_of(terms), frozenset(kept)


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
        self._read = False  # every field's words are in
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
            # one string before anything lasting is made: the list's objects are gone when
            # the words are grouped
            joined = "\n".join(sorted(term for term, _ in terms))
            del terms
            words = FieldWords(schema, field, joined)
            self._fields[field] = words if len(words.letters) <= MAX_LETTERS else None
        give_back_freed_memory()

    @property
    def ready(self) -> bool:
        if not self._read:
            self._read = not self._loader.is_alive()
        return self._read

    def wait(self, timeout: float | None = None) -> None:
        """Until every field's words are read (tests, benchmarks)."""
        self._loader.join(timeout)

    def words(self, field: str) -> FieldWords | None:
        return self._fields.get(field)

