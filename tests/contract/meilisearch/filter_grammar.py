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

A range is one condition: a comparison (one bound) or ``attribute low TO high``, which
Meilisearch evaluates as one range over the attribute's values, both bounds included
(``Condition::Between`` -> ``(Included(from), Included(to))`` in milli's filter, "the
document ids for which the given field contains a value contained within the two bounds").
Two comparisons joined by ``AND`` are two conditions, each held by some value of an array,
so they are not read as a range (``Unreadable``). ``same`` accepts a strict bound written
as the next double inward, since Meilisearch compares numbers as doubles.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from searchport.domain.query import (
    AnyOf,
    ExistsFilter,
    Filter,
    GeoBoxFilter,
    GeoPoint,
    GeoPolygonFilter,
    GeoRadiusFilter,
    Negated,
    NotFilter,
    RangeFilter,
    TermFilter,
)

GEO_FUNCTIONS = ("_geoRadius", "_geoBoundingBox", "_geoPolygon")
KEYWORDS = {"AND", "OR", "IN", "NOT", "TO", "EXISTS", "IS", "NULL", "EMPTY", "CONTAINS",
            "STARTS", "WITH", *GEO_FUNCTIONS}
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
        for function in GEO_FUNCTIONS:
            if self.keyword(function):
                return self.geo(function)
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
            raise Unreadable(f"expected IN or EXISTS at {self.pos}")
        low = self.value()
        if not self.keyword("TO"):
            raise Unreadable(f"expected an operator at {self.pos}")
        return ("to", name, low, self.value())

    def geo(self, function: str) -> Any:
        """``_geoRadius(lat, lng, meters)``, ``_geoBoundingBox([lat, lng], [lat, lng])`` (top
        right, bottom left), ``_geoPolygon([lat, lng], [lat, lng], [lat, lng], ...)``."""
        if not self.symbol("("):
            raise Unreadable(f"expected ( after {function}")
        if function == "_geoRadius":
            args: list[Any] = [self.number()]
            while self.symbol(","):
                args.append(self.number())
            wanted = 3
        else:
            args = [self.point()]
            while self.symbol(","):
                args.append(self.point())
            wanted = 2 if function == "_geoBoundingBox" else 0
        if not self.symbol(")"):
            raise Unreadable(f"unclosed {function}")
        if (wanted and len(args) != wanted) or (not wanted and len(args) < 3):
            raise Unreadable(f"{function} with {len(args)} arguments")
        return (function, args)

    def number(self) -> float:
        self._space()
        found = NUMBER.match(self.text, self.pos)
        if found is None:
            raise Unreadable(f"expected a number at {self.pos}")
        self.pos = found.end()
        return float(found.group())

    def point(self) -> tuple[float, float]:
        if not self.symbol("["):
            raise Unreadable("expected [ before a point")
        lat = self.number()
        if not self.symbol(","):
            raise Unreadable("expected , inside a point")
        lng = self.number()
        if not self.symbol("]"):
            raise Unreadable("expected ] after a point")
        if not (-90 <= lat <= 90 and -180 <= lng <= 180):
            raise Unreadable(f"a point out of range: {lat}, {lng}")
        return lat, lng

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
        case ("to", name, low, high):
            return _range(name, [("cmp", name, ">=", low), ("cmp", name, "<=", high)])
        case ("and", [("exists", name), ("not", ("null", other))]) if name == other:
            return ExistsFilter(field=name, exists=True)
        case ("or", [("not", ("exists", name)), ("null", other)]) if name == other:
            return ExistsFilter(field=name, exists=False)
        case ("_geoRadius", [lat, lng, meters]):
            return GeoRadiusFilter(field="_geo", lat=lat, lon=lng, radius_m=meters)
        case ("_geoBoundingBox", [(north, east), (south, west)]):
            return GeoBoxFilter(field="_geo", north=north, south=south, west=west, east=east)
        case ("_geoPolygon", points):
            return GeoPolygonFilter(field="_geo", points=tuple(
                GeoPoint(lat=lat, lon=lng) for lat, lng in points))
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
            return _same_bound(expected.min, expected.min_exclusive,  # type: ignore[union-attr]
                               found.min, found.min_exclusive, upper=False) and _same_bound(  # type: ignore[union-attr]
                expected.max, expected.max_exclusive,  # type: ignore[union-attr]
                found.max, found.max_exclusive, upper=True)  # type: ignore[union-attr]
        case ExistsFilter():
            return expected.exists == found.exists  # type: ignore[union-attr]
    return False


def _same_bound(expected: Any, strict: bool, found: Any, found_strict: bool,
                upper: bool) -> bool:
    """The same bound: the same value and strictness, or a strict bound written inclusive as
    the text of the nearest double inside it (the double the text reads as, whose
    neighbour outward is on the bound's other side, compared exactly)."""
    if expected is None or found is None:
        return expected is None and found is None
    if strict == found_strict:
        return same_value(expected, found)
    if found_strict or not isinstance(found, Fraction):
        return False
    written = float(found)  # the double Meilisearch reads (Python rounds it correctly too)
    outward = math.nextafter(written, math.inf if upper else -math.inf)
    bound = Fraction(expected)
    if upper:
        return Fraction(written) < bound <= Fraction(outward)
    return Fraction(outward) <= bound < Fraction(written)


# ---------------------------------------------------------------- Meilisearch's evaluation


def selects(text: str, doc: dict[str, list[float]]) -> bool:
    """Whether Meilisearch's filter ``text`` selects ``doc`` (numbers only), evaluated as
    milli does: each condition holds when *some* value of the attribute satisfies it, bare
    numbers are read as doubles, ``AND``/``OR``/``NOT`` combine the conditions' document
    sets (``NOT``: every other document)."""
    return _holds(Reader(text).expression(), doc)


def _double(token: Token) -> float:
    if token.quoted or not NUMBER.fullmatch(token.text):
        raise Unreadable(f"not a number: {token.text!r}")
    return float(token.text)  # correctly rounded, as Rust's f64 parse


def _holds(node: Any, doc: dict[str, list[float]]) -> bool:
    match node:
        case ("and", parts):
            return all(_holds(p, doc) for p in parts)
        case ("or", parts):
            return any(_holds(p, doc) for p in parts)
        case ("not", inner):
            return not _holds(inner, doc)
        case ("to", name, low, high):
            return any(_double(low) <= v <= _double(high) for v in doc.get(name, []))
        case ("cmp", name, op, token):
            bound = _double(token)
            tests = {">": bound.__lt__, ">=": bound.__le__, "<": bound.__gt__,
                     "<=": bound.__ge__, "=": bound.__eq__}
            return any(tests[op](v) for v in doc.get(name, []))
    raise Unreadable(f"not evaluated here: {node!r}")
