"""Highlights: HTML-escaped document text with ``<mark>`` around the matched words.

The text is re-analysed with the index's analyzer (which reports character offsets), so
exactly the words the query matched are marked: a whole word for an exact or a typo match
(the same edit distance as the query's), the typed letters for a prefix match
(``<mark>Par</mark>ma`` for "par"); everything else is escaped, which makes a fragment
safe to render as HTML.
"""

from __future__ import annotations

import html
import re
from typing import Any, cast

from searchport.adapters.tantivy.documents import field_value
from searchport.adapters.tantivy.filters import field_spec
from searchport.adapters.tantivy.schema import (
    FieldSpec,
    IndexLayout,
    fold_analyzer,
    text_analyzer,
)
from searchport.adapters.tantivy.text_query import QueryWord, TextMatch
from searchport.domain.errors import InvalidRequest
from searchport.domain.typos import osa_distance, prefix_distance

FRAGMENT_CHARS = 200  # longer values are cut to a window around the first match
MAX_FRAGMENTS = 5  # per field, for arrays
_CONTEXT = 60  # characters kept before the first match of a long value
Span = tuple[int, int]
_HTML_SPECIAL = re.compile("[&<>\"']")
# Shared by every request: an analyzer holds the GIL while it runs, so threads take turns.
_TEXT = text_analyzer()
_FOLD = fold_analyzer()
# The words of a value, as the analyzer found them: (word, first char, char after it).
Tokens = tuple[tuple[str, int, int], ...]
# Values analysed before, shared by every request (search-as-you-type shows the same
# documents again and again; a document marked before is mostly answered from ``_MARKED``
# below, so fewer are kept); emptied when full, which bounds it.
_TOKENS: dict[str, Tokens] = {}
TOKENS_CACHED = 5_000


def _as_is(text: str) -> str:
    return text


def highlight_specs(layout: IndexLayout, requested: tuple[str, ...], match: TextMatch
                    ) -> list[FieldSpec]:
    if not requested:
        return [field_spec(layout, name, "highlight") for name in match.text_fields]
    return requested_highlights(layout, requested)


def requested_highlights(layout: IndexLayout, requested: tuple[str, ...]) -> list[FieldSpec]:
    """The specs of the fields a query asks to highlight, or a 400 naming one that cannot
    be: checked whether or not the query has words to mark."""
    specs = [field_spec(layout, name, "highlight") for name in requested]
    for spec in specs:
        if spec.type not in ("text", "keyword"):
            raise InvalidRequest(
                f'Cannot highlight "{spec.name}": it is a {spec.type} field; highlight text '
                f"or keyword fields"
            )
    return specs


# What a highlighter found in a document, for the later requests of its text (a highlighter
# is kept with the text's built query): search-as-you-type shows the same documents to the
# same prefixes again and again. Emptied when full, which bounds it.
_MARKED: dict[tuple[Highlighter, Any], dict[str, list[str]]] = {}  # (.., document) -> fragments
MARKED_KEPT = 8_192


def highlighter(match: TextMatch, specs: list[FieldSpec]) -> Highlighter:
    """The highlighter of ``match`` for these fields, kept with the text's built query (one
    that is built again for a later request keeps nothing: see ``Highlighter.highlight``)."""
    key = tuple(spec.name for spec in specs)
    found = match.kept.get(key)
    if not isinstance(found, Highlighter):
        found = match.kept[key] = Highlighter(match, specs)
    return found


class Highlighter:
    def __init__(self, match: TextMatch, specs: list[FieldSpec]) -> None:
        # what it needs of ``match``, not ``match`` itself: the match keeps its highlighter
        # (``match.kept``), and a highlighter pointing back would make the two a reference
        # cycle, freed only by a full collection of the garbage collector, which the server
        # runs seldom (``entrypoints/asgi.py``): each dropped match would hold its native
        # tantivy queries until then (a server answering new texts kept growing)
        self._folded = match.folded
        self._specs = specs
        self._lasting = match.lasting  # kept for the later requests of its text
        self._text = _TEXT
        self._fold = _FOLD
        self._terms = match.terms
        self._words = match.words
        # the listed typo terms come from the searched fields' words: other fields' words
        # are checked by their distance alone
        searched = set(match.text_fields)
        self._near = match.near if all(s.name in searched for s in specs) else {}
        self._starts = _match_starts(match.words, self._near)

    def highlight(self, row: dict[str, Any], document: Any = None) -> dict[str, list[str]]:
        """The fragments of ``row``'s highlighted fields. ``document``: a key naming the
        stored row within its index generation (rows never change within one), under which
        the answer is kept for later requests of the same text (when this highlighter is)."""
        if not self._lasting:
            document = None
        if document is not None:
            known = _MARKED.get((self, document))
            if known is not None:
                return dict(known)
        seen: dict[str, int] = {}  # this row's document words -> letters marked
        found: dict[str, list[str]] = {}
        for spec in self._specs:
            name = spec.name
            value = row[name] if name in row else field_value(row, name)
            if isinstance(value, str):
                items = [value]
            elif isinstance(value, list):
                items = [v for v in value if isinstance(v, str)]
                if not items:
                    continue
            else:
                continue
            fragments = (self._keyword_fragments(items) if spec.type == "keyword"
                         else self._text_fragments(items, seen))
            if fragments:
                found[name] = fragments
        if document is not None:
            if len(_MARKED) >= MARKED_KEPT:
                _MARKED.clear()
            _MARKED[(self, document)] = found
            return dict(found)
        return found

    def _keyword_fragments(self, items: list[str]) -> list[str]:
        folded, fold = self._folded, self._fold.analyze
        fragments = []
        for item in items:
            if (f := fold(item)) and f[0] in folded:
                fragments.append(fragment(item, [(0, len(item))]))
                if len(fragments) == MAX_FRAGMENTS:
                    break
        return fragments

    def _text_fragments(self, items: list[str], seen: dict[str, int]) -> list[str]:
        """The fragments of the items holding a matched word, in order (at most
        ``MAX_FRAGMENTS``)."""
        marked_letters = self._marked_letters
        cached = _TOKENS.get
        cached_tokens = [cached(item) for item in items]
        known = cast(list[Tokens], cached_tokens)
        if any(tokens is None for tokens in cached_tokens):
            # Most values hold no matched word: the analyzer's words alone (a cheaper call
            # than one with offsets) tell, and only a value with a match is tokenized.
            words = _TEXT.analyze(items[0] if len(items) == 1 else "\n".join(items))
            if not any(seen[word] if word in seen else marked_letters(word, seen)
                       for word in words):
                return []
            known = _tokens(items)
        fragments = []
        for item, tokens in zip(items, known, strict=True):
            spans: list[Span] = []
            for word, begin, end in tokens:
                marked = seen.get(word)
                if marked is None:
                    marked = marked_letters(word, seen)
                if marked:
                    # folding kept the letters one for one: the marked letters are the
                    # first ``marked`` characters
                    spans.append((begin, begin + marked if end - begin == len(word) else end))
            if spans:
                fragments.append(fragment(item, spans))
                if len(fragments) == MAX_FRAGMENTS:
                    break
        return fragments

    def _marked_letters(self, word: str, seen: dict[str, int]) -> int:
        """How many leading letters of a document word the query matched (0: none): all of
        it for an exact or typo match, the typed part for a prefix match."""
        starts = self._starts
        if starts is not None and len(word) >= _START and word[:_START] not in starts:
            seen[word] = 0
            return 0
        found = len(word) if word in self._terms else 0
        for query_word in self._words if not found else ():
            found = max(found, _matched_letters(word, query_word,
                                                self._near.get(query_word.text)))
        seen[word] = found
        return found


_START = 2  # letters of a document word's start looked up in ``_match_starts``


def _match_starts(words: tuple[QueryWord, ...], near: dict[str, frozenset[str]]
                  ) -> frozenset[str] | None:
    """The first two letters of every document word (of two letters or more) the query
    words can mark, or None when they cannot be listed: a query word of fewer than two
    letters typed as a prefix, or with typos and no listed terms (an automaton), or too
    short a one for its listed prefixes to hold two letters."""
    starts = set()
    for word in words:
        if word.prefix and len(word.text) < _START:
            return None
        starts.add(word.text[:_START])  # the word itself, or a word it starts
        if word.typos == 0:
            continue
        listed = near.get(word.text)
        if listed is None or word.typos > 1 or len(word.text) <= _START:
            return None
        # a document word within one typo is a listed term, or (typed) starts with one of
        # at least len(text) - 1 letters
        starts.update(term[:_START] for term in listed if len(term) >= _START)
    return frozenset(starts)


def _tokens(items: list[str]) -> list[Tokens]:
    """The words of each item with their character offsets within it."""
    found = {item: tokens for item in items if (tokens := _TOKENS.get(item)) is not None}
    missing = [item for item in items if item not in found]
    if missing:
        if len(_TOKENS) + len(missing) > TOKENS_CACHED:
            _TOKENS.clear()
        # One analyzer call for all of them: the newline joining the items is never part
        # of a word, so each token falls inside one item.
        parts: list[list[tuple[str, int, int]]] = [[] for _ in missing]
        part, base, end = 0, 0, len(missing[0])
        for token in _TEXT.pre_tokenize("\n".join(missing)).tokens:
            begin = token.char_offset_from
            while begin >= end:
                part += 1
                base = end + 1
                end = base + len(missing[part])
            parts[part].append((token.text, begin - base, token.char_offset_to - base))
        for item, words in zip(missing, parts, strict=True):
            found[item] = _TOKENS[item] = tuple(words)
    return [found[item] for item in items]


def _matched_letters(word: str, query: QueryWord, listed: frozenset[str] | None) -> int:
    """``listed``: ``TextMatch.near``'s terms for ``query``, when it has them."""
    if word == query.text:
        return len(word)
    if query.prefix and word.startswith(query.text):
        return len(query.text)
    if query.typos == 0:
        return 0
    if listed is not None:  # the words, or shortest prefixes, within one typo: a quick no
        size = len(query.text)
        if (word not in listed if not query.prefix else
                word[:size - 1] not in listed and word[:size] not in listed
                and word[:size + 1] not in listed):
            return 0
    if len(word) < len(query.text) - query.typos:
        return 0
    # a prefix longer than the typed word and its typos is too far from it
    near = word[:len(query.text) + query.typos] if query.prefix else word
    if len(set(query.text).difference(near)) > query.typos:  # each letter missing costs a typo
        return 0
    if query.prefix:
        typos, marked = prefix_distance(near, query.text, query.typos)
        return marked if typos <= query.typos else 0
    return len(word) if osa_distance(word, query.text, query.typos) <= query.typos else 0


def fragment(text: str, spans: list[Span]) -> str:
    start, end = 0, len(text)
    if end <= FRAGMENT_CHARS and len(spans) == 1 and _HTML_SPECIAL.search(text) is None:
        # the common case: a short value, one match, nothing to escape
        first, last = spans[0]
        return f"{text[:first]}<mark>{text[first:last]}</mark>{text[last:]}"
    if end > FRAGMENT_CHARS:
        start = max(0, spans[0][0] - _CONTEXT)
        if start > 0:  # begin at a word, not inside one
            space = text.find(" ", start, spans[0][0])
            start = space + 1 if space >= 0 else start
        end = min(len(text), start + FRAGMENT_CHARS)
        if end < len(text):
            space = text.rfind(" ", max(start, spans[0][1]), end)
            end = space if space >= 0 else end
    escape = html.escape if _HTML_SPECIAL.search(text, start, end) else _as_is
    parts = []
    cursor = start
    for span_start, span_end in spans:
        if span_start < cursor or span_end > end:
            continue
        parts.append(escape(text[cursor:span_start]))
        parts.append(f"<mark>{escape(text[span_start:span_end])}</mark>")
        cursor = span_end
    parts.append(escape(text[cursor:end]))
    return "".join(parts)
