"""The ``tags`` parameter of the Analytics API: which searches a read counts, by the
``analyticsTags`` they were made with (Algolia's segments).

A tag is matched whole, as it was sent (``device:mobile phone`` is one tag). Tags combine
with ``AND`` and ``OR`` (upper case, spaces around them), ``AND`` binding tighter, and
parentheses group: ``(platform:ios OR platform:android) AND lang:en``. The expression is
kept as alternatives of conjunctions: a search counts when it carries every tag of at
least one of them.
"""

from __future__ import annotations

import re

from searchport.domain.errors import InvalidRequest

Segment = tuple[tuple[str, ...], ...]  # OR of ANDs of tags; () counts every search
EVERY_SEARCH: Segment = ()
MAX_TAG = 100  # characters, as the log keeps a tag
MAX_ALTERNATIVES = 64  # conjunctions after expansion: a bounded WHERE clause
_TOKENS = re.compile(r"\s*(\(|\)|(?<![^\s(])(?:AND|OR)(?![^\s)]))\s*")


def _tokens(text: str) -> list[str]:
    parts = [p.strip() for p in _TOKENS.split(text)]
    return [p for p in parts if p]


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise InvalidRequest("tags: the expression ends where a tag is expected")
        self.at += 1
        return token

    def any_of(self) -> Segment:
        found = list(self.all_of())
        while self.peek() == "OR":
            self.take()
            found.extend(self.all_of())
        return _bounded(tuple(dict.fromkeys(found)))

    def all_of(self) -> Segment:
        found = self.term()
        while self.peek() == "AND":
            self.take()
            right = self.term()
            found = _bounded(tuple(tuple(dict.fromkeys(a + b)) for a in found for b in right))
        return found

    def term(self) -> Segment:
        token = self.take()
        if token == "(":
            inner = self.any_of()
            if self.peek() != ")":
                raise InvalidRequest("tags: a parenthesis is not closed")
            self.take()
            return inner
        if token in (")", "AND", "OR"):
            raise InvalidRequest(f"tags: a tag is expected where {token!r} is")
        if len(token) > MAX_TAG:
            raise InvalidRequest(f"tags: a tag has at most {MAX_TAG} characters")
        return ((token,),)


def _bounded(segment: Segment) -> Segment:
    if len(segment) > MAX_ALTERNATIVES:
        raise InvalidRequest(f"tags: the expression expands to more than {MAX_ALTERNATIVES} "
                             "combinations of tags; make it simpler")
    return segment


def read_segment(text: str | None) -> Segment:
    """The searches ``text`` selects (400 naming what is wrong); every search when empty."""
    if text is None or not text.strip():
        return EVERY_SEARCH
    parser = _Parser(_tokens(text))
    segment = parser.any_of()
    if parser.peek() is not None:
        raise InvalidRequest(f"tags: unexpected {parser.peek()!r}; combine tags with AND "
                             "or OR")
    return segment

