"""Algolia's three filter languages, parsed to one conjunctive normal form (CNF).

- ``filters``: ``genre:fiction AND (tags:"new release" OR NOT tags:old) AND price > 10``,
  ``year:1990 TO 2000``; ``AND``/``OR``/``NOT``/``TO`` are upper case, values with spaces
  or operators are quoted (``\\"`` and ``\\\\`` escape inside quotes).
- ``facetFilters``: ``["genre:fiction", ["tags:new", "tags:-old"]]``: the outer list ANDs,
  an inner list ORs, a value starting with ``-`` is negated (``\\-`` is a literal dash).
- ``numericFilters``: ``["price>=10", ["year<1950", "year:2000 TO 2010"]]``, same nesting.

All three give ``Cnf``: a tuple of clauses that all hold, each clause a tuple of literals of
which at least one holds. Strict comparisons stay strict. Anything that cannot be parsed is
an ``InvalidRequest`` naming the parameter and the position.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Literal

import msgspec

from searchport.domain.errors import InvalidRequest

Op = Literal["=", "!=", "<", "<=", ">", ">="]
MAX_LITERALS = 256  # after conversion to CNF; past it the expression is refused


class FacetIs(msgspec.Struct, frozen=True, tag="facet"):
    """``attribute:value``: the attribute has this value (string comparison)."""

    attribute: str
    value: str


class Compare(msgspec.Struct, frozen=True, tag="compare"):
    """``attribute <op> number``."""

    attribute: str
    op: Op
    value: float


class Between(msgspec.Struct, frozen=True, tag="between"):
    """``attribute:low TO high``, both bounds included."""

    attribute: str
    low: float
    high: float


Atom = FacetIs | Compare | Between


class Lit(msgspec.Struct, frozen=True):
    atom: Atom
    negated: bool = False


Clause = tuple[Lit, ...]
Cnf = tuple[Clause, ...]


# ---------------------------------------------------------------- the filters string

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<quoted>"(?:[^"\\]|\\.)*")
      | (?P<op><=|>=|!=|<|>|=)
      | (?P<punct>[():])
      | (?P<word>[^\s():"<>=!]+)
    )""",
    re.VERBOSE,
)
_KEYWORDS = frozenset({"AND", "OR", "NOT", "TO"})


class _Token(msgspec.Struct, frozen=True):
    kind: str  # quoted | op | punct | word | keyword
    text: str
    at: int


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _error("filters", f"unexpected character {text[pos:].lstrip()[:1]!r}", pos)
        kind = m.lastgroup or "word"
        value = m.group(kind)
        start = m.start(kind)
        if kind == "quoted":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        elif kind == "word" and value in _KEYWORDS:
            kind = "keyword"
        out.append(_Token(kind, value, start))
        pos = m.end()
    return out


# expression tree before normalisation
class _Not(msgspec.Struct, frozen=True):
    operand: Any


class _And(msgspec.Struct, frozen=True):
    operands: tuple[Any, ...]


class _Or(msgspec.Struct, frozen=True):
    operands: tuple[Any, ...]


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.peek()
        if token is None:
            raise _error("filters", "the expression ends too early")
        self.i += 1
        return token

    def keyword(self, word: str) -> bool:
        token = self.peek()
        if token is not None and token.kind == "keyword" and token.text == word:
            self.i += 1
            return True
        return False

    def parse(self) -> Any:
        if not self.tokens:
            return _And(())
        tree = self.or_expr()
        token = self.peek()
        if token is not None:
            raise _error("filters", f"unexpected {token.text!r}", token.at)
        return tree

    def or_expr(self) -> Any:
        operands = [self.and_expr()]
        while self.keyword("OR"):
            operands.append(self.and_expr())
        return operands[0] if len(operands) == 1 else _Or(tuple(operands))

    def and_expr(self) -> Any:
        operands = [self.unary()]
        while self.keyword("AND"):
            operands.append(self.unary())
        return operands[0] if len(operands) == 1 else _And(tuple(operands))

    def unary(self) -> Any:
        if self.keyword("NOT"):
            return _Not(self.unary())
        token = self.peek()
        if token is not None and token.kind == "punct" and token.text == "(":
            self.i += 1
            self.depth += 1
            if self.depth > 32:
                raise _error("filters", "parentheses are nested too deeply", token.at)
            tree = self.or_expr()
            close = self.take()
            if close.kind != "punct" or close.text != ")":
                raise _error("filters", f"expected ')' but found {close.text!r}", close.at)
            self.depth -= 1
            return tree
        return self.atom()

    def atom(self) -> Atom:
        name = self.take()
        if name.kind not in ("word", "quoted") or not name.text.strip():
            raise _error("filters", f"expected an attribute name, found {name.text!r}", name.at)
        sign = self.take()
        if sign.kind == "op":
            value = self.take()
            return Compare(name.text, sign.text, _number("filters", value))  # type: ignore[arg-type]
        if sign.kind != "punct" or sign.text != ":":
            raise _error("filters", f"expected ':' or a comparison after {name.text!r}", sign.at)
        value = self.take()
        if value.kind not in ("word", "quoted"):
            raise _error("filters", f"expected a value after '{name.text}:'", value.at)
        if self.keyword("TO"):
            high = self.take()
            return Between(name.text, _number("filters", value), _number("filters", high))
        return FacetIs(name.text, value.text)


def parse_filters(text: str) -> Cnf:
    """Algolia's ``filters`` string as CNF."""
    return _cnf(_Parser(text).parse())


# ---------------------------------------------------------------- facetFilters / numericFilters

def parse_facet_filters(value: Any) -> Cnf:
    return tuple(tuple(_facet_lit(item) for item in group)
                 for group in _groups("facetFilters", value))


def parse_numeric_filters(value: Any) -> Cnf:
    return tuple(tuple(Lit(_numeric_atom(item)) for item in group)
                 for group in _groups("numericFilters", value))


def _groups(param: str, value: Any) -> list[list[str]]:
    """Outer list ANDs, inner lists OR; a bare string is one filter; a JSON text (the v4
    client's URL-encoded ``params``) is decoded first."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                value = msgspec.json.decode(stripped)
            except msgspec.DecodeError:
                raise _error(param, "is not valid JSON") from None
        else:
            value = [value]
    if not isinstance(value, list):
        raise _error(param, "must be a string or a list of strings and lists of strings")
    groups = []
    for item in value:
        group = item if isinstance(item, list) else [item]
        if not group or not all(isinstance(g, str) for g in group):
            raise _error(param, "must be a list of strings or of lists of strings")
        groups.append(group)
    return groups


def _facet_lit(text: str) -> Lit:
    attribute, sep, value = text.partition(":")
    attribute = attribute.strip()
    if not sep or not attribute:
        raise _error("facetFilters", f"{text!r} is not 'attribute:value'")
    negated = value.startswith("-")
    if negated or value.startswith("\\-"):
        value = value[1:]
    return Lit(FacetIs(attribute, value.strip()), negated)


_NUMERIC = re.compile(r"^\s*(?P<attr>[^<>=!:]+?)\s*(?P<op><=|>=|!=|<|>|=)\s*(?P<value>\S+)\s*$")
_RANGE = re.compile(r"^\s*(?P<attr>[^<>=!:]+?)\s*:\s*(?P<low>\S+)\s+TO\s+(?P<high>\S+)\s*$")


def _numeric_atom(text: str) -> Atom:
    m = _RANGE.match(text)
    if m:
        return Between(m["attr"], _to_number("numericFilters", m["low"]),
                       _to_number("numericFilters", m["high"]))
    m = _NUMERIC.match(text)
    if m:
        return Compare(m["attr"], m["op"], _to_number("numericFilters", m["value"]))  # type: ignore[arg-type]
    raise _error("numericFilters", f"{text!r} is not 'attribute<op>number' or 'attribute:a TO b'")


# ---------------------------------------------------------------- normal form

def _cnf(tree: Any) -> Cnf:
    clauses = _to_cnf(_nnf(tree, False))
    if sum(len(c) for c in clauses) > MAX_LITERALS:
        raise _error("filters", f"is too complex (more than {MAX_LITERALS} conditions once "
                                "expanded)")
    return clauses


def _nnf(tree: Any, negate: bool) -> Any:
    """Push every NOT down to the atoms (De Morgan)."""
    if isinstance(tree, _Not):
        return _nnf(tree.operand, not negate)
    if isinstance(tree, _And):
        parts = tuple(_nnf(t, negate) for t in tree.operands)
        return _Or(parts) if negate else _And(parts)
    if isinstance(tree, _Or):
        parts = tuple(_nnf(t, negate) for t in tree.operands)
        return _And(parts) if negate else _Or(parts)
    return Lit(tree, negate)


def _to_cnf(tree: Any) -> Cnf:
    if isinstance(tree, Lit):
        return ((tree,),)
    if isinstance(tree, _And):
        return tuple(c for t in tree.operands for c in _to_cnf(t))
    # an OR of CNFs: one clause per choice of a clause from each operand
    product: Cnf = ((),)
    for operand in tree.operands:
        operand_cnf = _to_cnf(operand)
        product = tuple(a + b for a, b in itertools.product(product, operand_cnf))
        if sum(len(c) for c in product) > MAX_LITERALS:
            raise _error("filters", f"is too complex (more than {MAX_LITERALS} conditions once "
                                    "expanded)")
    return product


# ---------------------------------------------------------------- helpers

def _number(param: str, token: _Token) -> float:
    if token.kind not in ("word", "quoted"):
        raise _error(param, f"expected a number, found {token.text!r}", token.at)
    return _to_number(param, token.text, token.at)


def _to_number(param: str, text: str, at: int | None = None) -> float:
    try:
        number = float(text)
    except ValueError:
        raise _error(param, f"expected a number, found {text!r}", at) from None
    if number != number or number in (float("inf"), float("-inf")):
        raise _error(param, f"expected a finite number, found {text!r}", at)
    return number


def _error(param: str, problem: str, at: int | None = None) -> InvalidRequest:
    where = f" at character {at + 1}" if at is not None else ""
    return InvalidRequest(f"{param}: {problem}{where}")
