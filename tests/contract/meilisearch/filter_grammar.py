"""An independent reader of the Meilisearch filter expressions searchport writes, modelled on
Meilisearch's own filter parser (``crates/filter-parser``) and its filter reference:

- a value or attribute is a quoted string or a word (letters, digits, ``_``, ``-``, ``.``)
  that is not a keyword;
- a quoted string ends at the first quote not preceded by a backslash (a backslash always
  takes the next character along); then ``\\<quote>`` becomes the quote, and then the
  remaining escapes are read (``\\\\``, ``\\n``, ``\\t``, ``\\u{..}``...);
- ``NOT`` binds tighter than ``AND``, ``AND`` tighter than ``OR``; parentheses group.

``read(text)`` turns one expression back into the ``Filter`` it stands for, or raises
``Unreadable``; it never writes an expression, so it cannot share a mistake with the
builder it checks. Any other ``OR`` is an ``AnyOf`` of its operands and any other ``NOT``
a ``Negated`` (Meilisearch's ``NOT`` is the complement: documents without the attribute
included), so precedence mistakes (a missing parenthesis) read back as another tree.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from searchport.domain.query import (
    AnyOf,
    ExistsFilter,
    Filter,
    Negated,
    NotFilter,
    RangeFilter,
    TermFilter,
)

KEYWORDS = {"AND", "OR", "IN", "NOT", "TO", "EXISTS", "IS", "NULL", "EMPTY", "CONTAINS",
            "STARTS", "WITH", "_geoRadius", "_geoBoundingBox"}
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?")
SIMPLE_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r", "0": "\0",
                  "b": "\b", "f": "\f", "/": "/"}


class Unreadable(ValueError):
    pass


@dataclass(frozen=True)
class Token:
    text: str
    quoted: bool


def is_word_char(char: str) -> bool:
    category = unicodedata.category(char)
    return char in "_-." or category[0] in "LN"


def unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        if i + 1 >= len(text):
            raise Unreadable("a lone backslash")
        nxt = text[i + 1]
        if nxt in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[nxt])
            i += 2
        elif nxt == "u" and text[i + 2:i + 3] == "{":
            end = text.index("}", i)
            out.append(chr(int(text[i + 3:end], 16)))
            i = end + 1
        else:
            raise Unreadable(f"unknown escape \\{nxt}")
    return "".join(out)


class Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    # ------------------------------------------------------------ lexing

    def _space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _peek_word(self) -> str:
        self._space()
        end = self.pos
        while end < len(self.text) and is_word_char(self.text[end]):
            end += 1
        return self.text[self.pos:end]

    def keyword(self, word: str) -> bool:
        if self._peek_word() == word:
            self.pos += len(word)
            return True
        return False

    def symbol(self, symbol: str) -> bool:
        self._space()
        if self.text.startswith(symbol, self.pos):
            self.pos += len(symbol)
            return True
        return False

    def value(self) -> Token:
        self._space()
        if self.pos >= len(self.text):
            raise Unreadable("expected a value")
        quote = self.text[self.pos]
        if quote in "'\"":
            start = i = self.pos + 1
            escaped_quote = False
            while True:
                if i >= len(self.text):
                    raise Unreadable("unclosed quote")
                if self.text[i] == "\\":
                    if i + 1 >= len(self.text):
                        raise Unreadable("unclosed quote")
                    escaped_quote |= self.text[i + 1] == quote
                    i += 2
                    continue
                if self.text[i] == quote:
                    break
                i += 1
            raw = self.text[start:i]
            self.pos = i + 1
            if escaped_quote:
                raw = raw.replace("\\" + quote, quote)
            return Token(unescape(raw), quoted=True)
        word = self._peek_word()
        if not word or word in KEYWORDS:
            raise Unreadable(f"expected a value at {self.pos}")
        self.pos += len(word)
        return Token(word, quoted=False)

    # ------------------------------------------------------------ grammar

    def expression(self) -> Any:
        node = self.any_of()
        self._space()
        if self.pos != len(self.text):
            raise Unreadable(f"left over: {self.text[self.pos:]!r}")
        return node

    def any_of(self) -> Any:
        parts = [self.all_of()]
        while self.keyword("OR"):
            parts.append(self.all_of())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def all_of(self) -> Any:
        parts = [self.negation()]
        while self.keyword("AND"):
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def negation(self) -> Any:
        if self.keyword("NOT"):
            return ("not", self.negation())
        if self.symbol("("):
            node = self.any_of()
            if not self.symbol(")"):
                raise Unreadable("unclosed parenthesis")
            return node
        return self.condition()

    def condition(self) -> Any:
        name = self.value().text
        for op in (">=", "<=", "!=", "=", ">", "<"):
            if self.symbol(op):
                return ("cmp", name, op, self.value())
        if self.keyword("IN"):
            return ("in", name, self.values())
        if self.keyword("EXISTS"):
            return ("exists", name)
        if self.keyword("IS"):
            negated = self.keyword("NOT")
            if not self.keyword("NULL"):
                raise Unreadable("IS without NULL")
            return ("not", ("null", name)) if negated else ("null", name)
        if self.keyword("NOT"):
            if self.keyword("IN"):
                return ("not", ("in", name, self.values()))
            if self.keyword("EXISTS"):
                return ("not", ("exists", name))
        raise Unreadable(f"expected an operator at {self.pos}")

    def values(self) -> list[Token]:
        if not self.symbol("["):
            raise Unreadable("expected [")
        found = [self.value()]
        while self.symbol(","):
            found.append(self.value())
        if not self.symbol("]"):
            raise Unreadable("expected ]")
        return found


# ---------------------------------------------------------------- back to filters


def scalar(token: Token) -> str | bool | Fraction:
    """A quoted token is a string; a bare one a boolean or a number (exactly)."""
    if token.quoted:
        return token.text
    if token.text in ("true", "false"):
        return token.text == "true"
    if NUMBER.fullmatch(token.text):
        return Fraction(token.text)
    raise Unreadable(f"bare word {token.text!r}")


def read(text: str) -> Filter:
    return _filter(Reader(text).expression())


def _filter(node: Any) -> Filter:
    match node:
        case ("cmp", name, "=", token):
            return TermFilter(field=name, values=(scalar(token),))  # type: ignore[arg-type]
        case ("in", name, tokens):
            return TermFilter(field=name, values=tuple(scalar(t) for t in tokens))  # type: ignore[misc]
        case ("not", ("in", name, tokens)):
            return NotFilter(field=name, values=tuple(scalar(t) for t in tokens))  # type: ignore[misc]
        case ("cmp", name, ">=" | "<=" | ">" | "<", token):
            return _range(name, [node])
        case ("and", [("cmp", name, ">=" | ">", _), ("cmp", other, "<=" | "<", _)]) \
                if name == other:
            return _range(name, node[1])
        case ("and", [("exists", name), ("not", ("null", other))]) if name == other:
            return ExistsFilter(field=name, exists=True)
        case ("or", [("not", ("exists", name)), ("null", other)]) if name == other:
            return ExistsFilter(field=name, exists=False)
        case ("or", parts):
            return AnyOf(filters=tuple(_filter(part) for part in parts))
        case ("not", inner):
            return Negated(filter=_filter(inner))
    raise Unreadable(f"not a searchport filter: {node!r}")


def _range(name: str, parts: list[Any]) -> RangeFilter:
    bounds: dict[str, Any] = {}
    for _, _, op, token in parts:
        value = scalar(token)
        if not isinstance(value, Fraction):
            raise Unreadable("a range bound is not a number")
        side = "min" if op in (">=", ">") else "max"
        bounds[side] = value
        bounds[f"{side}_exclusive"] = op in (">", "<")
    return RangeFilter(field=name, **bounds)


def same_value(expected: Any, found: Any) -> bool:
    """Type-exact equality: a string is never a number, a boolean never 1 or 0; a float is
    read back to the same float, an integer to the same integer."""
    if isinstance(expected, bool | str):
        return type(found) is type(expected) and found == expected
    if isinstance(found, bool) or not isinstance(found, Fraction):
        return False
    if isinstance(expected, float):
        return float(found) == expected
    return found == expected


def same(expected: Filter, found: Filter) -> bool:
    """``found`` is ``expected`` (values type-exact). ``NOT`` of an ``IN`` list is how a
    not filter is written, so ``Negated(TermFilter)`` of several values reads back as the
    ``NotFilter`` it is equal to by definition (no value is one of them)."""
    match expected:
        case Negated(filter=TermFilter(field=name, values=values)) if len(values) > 1:
            expected = NotFilter(field=name, values=values)
    if type(expected) is not type(found):
        return False
    match expected, found:
        case AnyOf(filters=wanted), AnyOf(filters=got):
            return len(wanted) == len(got) and all(
                same(a, b) for a, b in zip(wanted, got, strict=True))
        case Negated(filter=wanted), Negated(filter=got):
            return same(wanted, got)
    if expected.field != found.field:  # type: ignore[union-attr]
        return False
    match expected:
        case TermFilter() | NotFilter():
            return len(expected.values) == len(found.values) and all(  # type: ignore[union-attr]
                same_value(a, b) for a, b in zip(expected.values, found.values, strict=True)  # type: ignore[union-attr]
            )
        case RangeFilter():
            return all(
                (a is None and b is None) or (a is not None and same_value(a, b))
                for a, b in ((expected.min, found.min), (expected.max, found.max))  # type: ignore[union-attr]
            ) and (expected.min_exclusive, expected.max_exclusive) == (  # type: ignore[union-attr]
                found.min_exclusive, found.max_exclusive)  # type: ignore[union-attr]
        case ExistsFilter():
            return expected.exists == found.exists  # type: ignore[union-attr]
    return False
