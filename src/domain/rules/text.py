"""Query text and rule patterns cut into words, the same way for both.

A word is a run of letters and digits; case and accents do not count (``Café`` and
``cafe`` are one word), everything else separates words. A pattern is words and
``{facet:attribute}`` placeholders, each placeholder standing for one value of the facet
(one or more words).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Mapping

import msgspec

_WORD = re.compile(r"[^\W_]+")
_PLACEHOLDER = re.compile(r"\{facet:([^{}]+)\}")


class Word(msgspec.Struct, frozen=True):
    text: str  # normalised
    start: int  # where it is in the original text
    end: int


def normalise(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).casefold()
    return "".join(c for c in folded if not unicodedata.combining(c))


def words(text: str) -> list[Word]:
    """The words of ``text`` with their places in it."""
    if text.isascii():  # nothing to fold but case
        return [Word(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text)]
    found: list[Word] = []
    for match in _WORD.finditer(text):
        for part in _WORD.findall(normalise(match.group())):  # a ligature may split
            found.append(Word(part, match.start(), match.end()))
    return found


def keys(text: str) -> tuple[str, ...]:
    """The normalised words of ``text`` (as ``words`` finds them)."""
    if text.isascii():  # nothing to fold but case
        return tuple(_WORD.findall(text.lower()))
    return tuple(w.text for w in words(text))


class Placeholder(msgspec.Struct, frozen=True):
    attribute: str  # as the rule names it (a public name)


Token = str | Placeholder


def pattern_tokens(pattern: str) -> tuple[Token, ...]:
    """A pattern's normalised words and placeholders, in order; each word interned, as
    thousands of rules share a vocabulary."""
    tokens: list[Token] = []
    at = 0
    for match in _PLACEHOLDER.finditer(pattern):
        tokens += map(sys.intern, keys(pattern[at:match.start()]))
        tokens.append(Placeholder(match.group(1).strip()))
        at = match.end()
    tokens += map(sys.intern, keys(pattern[at:]))
    return tuple(tokens)


FacetValues = Mapping[str, Mapping[tuple[str, ...], str]]
"""Per facet attribute (as rules name it): a value's normalised words -> the value."""


class Found(msgspec.Struct, frozen=True):
    """Where a pattern matched: ``start`` and ``end`` in words, and the facet values its
    placeholders took (attribute, value), in order."""

    start: int
    end: int
    values: tuple[tuple[str, str], ...] = ()


def match_at(tokens: tuple[Token, ...], query: tuple[str, ...], start: int,
             facets: FacetValues, end: int | None = None) -> Found | None:
    """The tokens matched from ``query[start]`` on, ending at ``end`` when given (the
    shortest facet values first)."""
    return _match(tokens, 0, query, start, start, facets, (), end)


def _match(tokens: tuple[Token, ...], t: int, query: tuple[str, ...], start: int, at: int,
           facets: FacetValues, values: tuple[tuple[str, str], ...],
           end: int | None) -> Found | None:
    if t == len(tokens):
        return Found(start, at, values) if end is None or at == end else None
    token = tokens[t]
    if isinstance(token, str):
        if at < len(query) and query[at] == token:
            return _match(tokens, t + 1, query, start, at + 1, facets, values, end)
        return None
    known = facets.get(token.attribute) or {}
    for stop in range(at + 1, len(query) + 1):
        value = known.get(query[at:stop])
        if value is not None:
            found = _match(tokens, t + 1, query, start, stop, facets,
                           (*values, (token.attribute, value)), end)
            if found is not None:
                return found
    return None
