"""Algolia's ``_snippetResult`` from the engines' highlighted fragments.

``attributesToSnippet: ["description:20"]`` asks for a window of 20 words (10 when no number
is given) of each hit's ``description``: around the first match, with the highlight tags,
and ``snippetEllipsisText`` (``…`` by default) where text was cut. A word is a run of text
without white space. The window comes from the first fragment the engine marked (HTML-escaped
text with ``<mark>``, as for ``_highlightResult``): it holds ``(N - 1) // 2`` words before
the first match and the rest after it (more after it at the start of the text, more before
it at its end). A fragment is itself a cut of the value when the engine cut it (Elasticsearch's
~100 characters, Meilisearch's 30 words, Typesense's few words around a match), which is
where the window ends then. Without a match the window is the first words of the value.
``matchLevel`` is the attribute's, as in ``_highlightResult``.
"""

from __future__ import annotations

import html
import re
from typing import Any, Literal

import msgspec

from searchport.domain.errors import InvalidRequest
from searchport.entrypoints.algolia.highlight import MARK_CLOSE, MARK_OPEN, Tags, match_of

DEFAULT_WORDS = 10
DEFAULT_ELLIPSIS = "…"
_CHUNK = re.compile(r"\S+")
_TAG = re.compile(r"</?mark>")


class SnippetResult(msgspec.Struct, kw_only=True):
    value: str
    match_level: Literal["none", "partial", "full"] = msgspec.field(name="matchLevel")


def snippet_sizes(entries: list[str]) -> dict[str, int]:
    """``attribute`` or ``attribute:words`` entries as attribute -> words (the last one
    given wins); ``*`` stands for every attribute and is kept as the name ``*``."""
    sizes: dict[str, int] = {}
    for entry in entries:
        name, colon, count = entry.rpartition(":") if ":" in entry else (entry, "", "")
        name = name.strip()
        words = DEFAULT_WORDS
        if colon:
            try:
                words = int(count.strip())
            except ValueError:
                words = 0
            if words < 1:
                raise InvalidRequest(f"attributesToSnippet: {entry!r} needs a number of words "
                                     ">= 1 after the colon")
        if not name:
            raise InvalidRequest(f"attributesToSnippet: {entry!r} names no attribute")
        sizes[name] = words
    return sizes


def snippet_result(value: Any, fragments: list[str] | None, words: list[str], tags: Tags,
                   size: int, ellipsis: str) -> SnippetResult | None:
    """The entry of one attribute; ``None`` when its value is no text (numbers are text)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    written = value if isinstance(value, str) else str(value)
    marked = next((f for f in fragments or [] if MARK_OPEN in f), None)
    level, _ = match_of(fragments if marked is not None else None, words)
    source = marked if marked is not None else html.escape(written)
    text, cut_before, cut_after = _window(source, size)
    if marked is not None:
        before, after = _cut_by_engine(written, marked)
        cut_before, cut_after = cut_before or before, cut_after or after
    shown = tags.apply(text)
    mark = tags.plain(ellipsis)
    if mark and cut_before and shown:
        shown = f"{mark} {shown}"
    if mark and cut_after and shown:
        shown = f"{shown} {mark}"
    return SnippetResult(value=shown, match_level=level)


def _window(fragment: str, size: int) -> tuple[str, bool, bool]:
    """``size`` words of ``fragment`` around its first mark, marks kept balanced, and
    whether words were left out before and after them."""
    chunks = [(m.start(), m.end()) for m in _CHUNK.finditer(fragment)]
    if not chunks:
        return "", False, False
    found = fragment.find(MARK_OPEN)
    first = 0 if found < 0 else next(i for i, (_, end) in enumerate(chunks) if end > found)
    start = max(0, min(first - (size - 1) // 2, len(chunks) - size))
    end = min(len(chunks), start + size)
    head, tail = chunks[start][0], chunks[end - 1][1]
    text = fragment[head:tail]
    if _open_marks(fragment[:head]):  # the window starts inside a mark
        text = MARK_OPEN + text
    if _open_marks(fragment[:tail]):  # and ends inside one
        text += MARK_CLOSE
    return text, start > 0, end < len(chunks)


def _open_marks(text: str) -> bool:
    depth = 0
    for tag in _TAG.findall(text):
        depth = 1 if tag == MARK_OPEN else 0
    return depth > 0


def _cut_by_engine(value: str, fragment: str) -> tuple[bool, bool]:
    """Whether the engine's fragment left text of the value out before and after it (both
    when it cannot be found in the value)."""
    plain = html.unescape(_TAG.sub("", fragment)).strip()
    at = value.find(plain)
    if not plain or at < 0:
        return True, True
    return bool(value[:at].strip()), bool(value[at + len(plain):].strip())
