"""Algolia filters (one CNF) as domain filters, with Algolia's meaning kept exactly.

Domain filters AND together and each names one field, so every CNF clause (an OR of
literals) must become one domain filter on one attribute:

- equalities (``genre:a OR genre:b``, ``year = 1999``): ``TermFilter`` (any of the values);
- numeric comparisons and ``TO`` ranges, with equalities among them: their union, when it is
  one interval, a ``RangeFilter`` (strict bounds stay strict; ``a < 5 OR a >= 5`` is any
  value: ``ExistsFilter``). Each literal holds when *some* value of the attribute is in its
  interval, so the clause holds exactly when some value is in the union;
- one negated equality (``NOT genre:a``, ``genre:-a``, ``price != 10``: Algolia's ``!=`` is
  ``NOT =``, records without the attribute included): ``NotFilter``.

Any other clause (an OR across attributes, a negated comparison or range, an OR of
negations, numbers in two separate intervals, an equality mixed with a negation) has no
domain filter that selects the same records, so it is an ``InvalidRequest`` naming it,
never an approximation.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from searchport.domain.algolia.filters import Between, Clause, Cnf, Compare, FacetIs, Lit
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import ExistsFilter, Filter, NotFilter, RangeFilter, Scalar, TermFilter

_FLIP = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


class _Interval(msgspec.Struct, frozen=True):
    """Numbers from ``low`` to ``high`` (``None``: unbounded), each end strict or not."""

    low: float | None
    high: float | None
    low_strict: bool = False
    high_strict: bool = False

    def is_empty(self) -> bool:
        if self.low is None or self.high is None:
            return False
        return self.low > self.high or (
            self.low == self.high and (self.low_strict or self.high_strict))

    def is_point(self) -> bool:
        return self.low is not None and self.low == self.high and not self.is_empty()


def to_domain_filters(cnf: Cnf, real: Callable[[str], str] = lambda name: name
                      ) -> tuple[Filter, ...]:
    """One domain filter per clause; ``real`` maps a public attribute name to its field."""
    return tuple(_clause(clause, real) for clause in cnf)


def describe(clause: Clause) -> str:
    """A clause written back in Algolia's filter syntax, for error messages."""
    return " OR ".join(_literal_text(lit) for lit in clause)


def _clause(clause: Clause, real: Callable[[str], str]) -> Filter:
    attributes = {lit.atom.attribute for lit in clause}
    if len(attributes) != 1:
        names = ", ".join(sorted(attributes))
        raise InvalidRequest(
            f"filters: the condition '{describe(clause)}' ORs different attributes ({names}); "
            "searchport can only OR conditions on one attribute"
        )
    field = real(attributes.pop())
    equal: dict[Scalar, None] = {}  # value -> None: an ordered set
    excluded: dict[Scalar, None] = {}
    intervals: list[_Interval] = []
    for lit in clause:
        atom, negated = lit.atom, lit.negated
        if isinstance(atom, Compare) and negated and atom.op in ("=", "!="):
            atom, negated = Compare(atom.attribute, _FLIP[atom.op], atom.value), False  # type: ignore[arg-type]
        if isinstance(atom, FacetIs):
            (excluded if negated else equal)[atom.value] = None
        elif negated:
            raise _unsupported(clause, f"'{_literal_text(lit)}' (a negated comparison or range)")
        elif isinstance(atom, Between):
            intervals.append(_Interval(atom.low, atom.high))
        elif atom.op == "!=":
            excluded[_number(atom.value)] = None
        elif atom.op == "=":
            equal[_number(atom.value)] = None
        else:
            intervals.append(_comparison(atom))
    if excluded:
        if equal or intervals or len(excluded) > 1:
            raise _unsupported(clause, "an OR of a negation with another condition")
        return NotFilter(field=field, values=tuple(excluded))
    if not intervals:
        return TermFilter(field=field, values=tuple(equal))
    for value in equal:  # equalities among comparisons are points of the number line
        point = _as_number(value)
        if point is None:
            raise _unsupported(clause, f"an OR of the text value {value!r} with a comparison")
        intervals.append(_Interval(point, point))
    return _union(clause, field, intervals)


def _comparison(atom: Compare) -> _Interval:
    value = atom.value
    return {
        "<": _Interval(None, value, high_strict=True),
        "<=": _Interval(None, value),
        ">": _Interval(value, None, low_strict=True),
        ">=": _Interval(value, None),
    }[atom.op]


def _union(clause: Clause, field: str, intervals: list[_Interval]) -> Filter:
    """One filter for "some value is in one of ``intervals``", when their union is one
    interval (an empty union selects nothing)."""
    kept = sorted((i for i in intervals if not i.is_empty()), key=_start)
    if not kept:
        return RangeFilter(field=field, min=1, max=0)  # no number is in an empty interval
    merged = [kept[0]]
    for nxt in kept[1:]:
        last = merged[-1]
        if not _connected(last, nxt):
            merged.append(nxt)
            continue
        if _end_before(last, nxt):
            merged[-1] = _Interval(last.low, nxt.high, last.low_strict, nxt.high_strict)
    if len(merged) > 1:
        if all(i.is_point() for i in merged):
            return TermFilter(field=field, values=tuple(_number(i.low) for i in merged))  # type: ignore[arg-type]
        raise _unsupported(clause, "numbers in separate intervals")
    whole = merged[0]
    if whole.low is None and whole.high is None:
        return ExistsFilter(field=field, exists=True)
    if whole.is_point():
        return TermFilter(field=field, values=(_number(whole.low),))  # type: ignore[arg-type]
    return RangeFilter(
        field=field,
        min=None if whole.low is None else _number(whole.low),
        max=None if whole.high is None else _number(whole.high),
        min_exclusive=whole.low is not None and whole.low_strict,
        max_exclusive=whole.high is not None and whole.high_strict,
    )


def _start(interval: _Interval) -> tuple[float, bool]:
    # unbounded first; at the same number an inclusive start comes before a strict one
    return (float("-inf") if interval.low is None else interval.low, interval.low_strict)


def _connected(first: _Interval, second: _Interval) -> bool:
    """Whether ``second`` (starting no earlier than ``first``) overlaps or touches ``first``."""
    if first.high is None or second.low is None:
        return True
    if first.high != second.low:
        return first.high > second.low
    return not (first.high_strict and second.low_strict)


def _end_before(first: _Interval, second: _Interval) -> bool:
    """Whether ``second`` reaches further up than ``first``."""
    if first.high is None:
        return False
    if second.high is None:
        return True
    if first.high != second.high:
        return second.high > first.high
    return first.high_strict and not second.high_strict


def _number(value: float) -> int | float:
    """An integral number as an integer (integer fields compare exactly)."""
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _as_number(value: Scalar) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def _literal_text(lit: Lit) -> str:
    atom = lit.atom
    if isinstance(atom, FacetIs):
        text = f"{atom.attribute}:{atom.value}"
    elif isinstance(atom, Between):
        text = f"{atom.attribute}:{atom.low:g} TO {atom.high:g}"
    else:
        text = f"{atom.attribute} {atom.op} {atom.value:g}"
    return f"NOT {text}" if lit.negated else text


def _unsupported(clause: Clause, what: str) -> InvalidRequest:
    return InvalidRequest(
        f"filters: the condition '{describe(clause)}' is not supported: {what} cannot be "
        "expressed by searchport's filters"
    )
