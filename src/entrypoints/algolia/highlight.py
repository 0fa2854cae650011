"""Algolia's ``_highlightResult`` from engine fragments (HTML-escaped text, ``<mark>`` added).

Tags: when either tag holds a ``<``, the client renders the value as HTML, so the value
stays HTML-escaped and only the marks become the tags (safe). Otherwise the tags are
placeholders a client replaces after escaping the text itself (InstantSearch asks for
``__ais-highlight__`` and escapes), so the value is plain text as Algolia gives it:
escaping it here would show ``&amp;`` on the page.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any, Literal

import msgspec

from searchport.domain.typos import osa_distance, prefix_distance

MARK_OPEN, MARK_CLOSE = "<mark>", "</mark>"
_MARKED = re.compile(r"<mark>(.*?)</mark>", re.S)
_WORD = re.compile(r"\w+", re.U)
DEFAULT_PRE, DEFAULT_POST = "<em>", "</em>"


class HighlightResult(msgspec.Struct, kw_only=True):
    value: str
    match_level: Literal["none", "partial", "full"] = msgspec.field(name="matchLevel")
    matched_words: list[str] = msgspec.field(name="matchedWords")
    fully_highlighted: bool | msgspec.UnsetType = msgspec.field(
        default=msgspec.UNSET, name="fullyHighlighted")


class Tags(msgspec.Struct, frozen=True):
    pre: str = DEFAULT_PRE
    post: str = DEFAULT_POST

    @property
    def html(self) -> bool:
        return "<" in self.pre or "<" in self.post

    def apply(self, fragment: str) -> str:
        """An engine fragment with the marks replaced by the tags."""
        if self.html:
            return fragment.replace(MARK_OPEN, self.pre).replace(MARK_CLOSE, self.post)
        parts = re.split(r"(</?mark>)", fragment)
        return "".join(
            self.pre if p == MARK_OPEN else self.post if p == MARK_CLOSE else html.unescape(p)
            for p in parts
        )

    def plain(self, value: str) -> str:
        """A value without any highlight, as the client expects it."""
        return html.escape(value) if self.html else value


def query_words(query: str) -> list[str]:
    return list(dict.fromkeys(w.casefold() for w in _WORD.findall(query)))


def highlight_result(value: Any, fragments: list[str] | None, words: list[str],
                     tags: Tags) -> HighlightResult | None:
    """The entry of one attribute; ``None`` when its value is no text (numbers, objects)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    written = value if isinstance(value, str) else str(value)
    if not fragments or not any(MARK_OPEN in f for f in fragments):
        return HighlightResult(value=tags.plain(written), match_level="none", matched_words=[])
    level, matched = match_of(fragments, words)
    outside = "".join(_MARKED.sub("", f) for f in fragments)
    return HighlightResult(
        value=" … ".join(tags.apply(f) for f in fragments),
        match_level=level,
        matched_words=matched,
        fully_highlighted=not html.unescape(outside).strip(),
    )


def match_of(fragments: list[str] | None, words: list[str]
             ) -> tuple[Literal["none", "partial", "full"], list[str]]:
    """An attribute's match level and the query words its marks match. Marks hold what the
    engine matched: a word equal to a query word, the start of a word for the word being
    typed (``<mark>Par</mark>ma``), or a word within a typo or two of a query word, which
    then counts for the closest one (accents and case aside)."""
    if not fragments or not any(MARK_OPEN in f for f in fragments):
        return "none", []
    marked = [html.unescape(m) for f in fragments for m in _MARKED.findall(f)]
    marked_words = {_folded(w) for m in marked for w in _WORD.findall(m)}
    folded = {w: _folded(w) for w in words}
    found: set[str] = set()
    for mark in marked_words:
        exact = {w for w, f in folded.items() if mark.startswith(f)}
        if exact:
            found |= exact
            continue
        typos = {w: min(prefix_distance(f, mark, _MAX_TYPOS)[0],
                        osa_distance(mark, f, _MAX_TYPOS)) for w, f in folded.items()}
        closest = min(typos.values(), default=_MAX_TYPOS + 1)
        # a typo match keeps most of the word: "a" is not "x" with a typo
        found |= {w for w, d in typos.items()
                  if d == closest <= _MAX_TYPOS and 2 * d < len(folded[w])}
    matched = [w for w in words if w in found]
    return ("full" if words and len(matched) == len(words) else "partial"), matched


_MAX_TYPOS = 2


def _folded(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))
