"""Algolia filters (one CNF) as domain filters, with Algolia's meaning kept exactly.

Every CNF clause (an OR of literals) becomes one domain filter; the filters AND together.
A literal holds when *some* value of its attribute matches, and ``NOT x`` is the complement
of ``x`` (records without the attribute are selected by a negated literal; Algolia's ``!=``
is ``NOT =``). The literals of a clause are grouped by attribute, each group written in the
most compact filters that select exactly the same records:

- equalities (``genre:a OR genre:b``, ``year = 1999``): ``TermFilter`` (any of the values);
- numeric comparisons and ``TO`` ranges, with numeric equalities among them: their union
  as intervals; one interval is a ``RangeFilter`` (strict bounds stay strict; ``a < 5 OR
  a >= 5`` is any value: ``ExistsFilter``), separate intervals one ``RangeFilter`` each (a
  set of single points: one ``TermFilter``). The clause holds exactly when some value is in
  the union;
- a negated equality (``NOT genre:a``, ``genre:-a``, ``price != 10``): ``NotFilter``, one per
  value (``NOT a OR NOT b`` is not "neither a nor b");
- a negated comparison or range (``NOT price > 10``, ``NOT price:1 TO 5``):
  ``Negated(RangeFilter)`` (of a single point: ``NotFilter``), the records with no value
  in it, records without the attribute included (a record priced ``[3, 20]`` is not
  selected by ``NOT price > 10``: 20 is).

A clause of one such filter is that filter; otherwise an ``AnyOf`` of them (an OR across
attributes, separate intervals, an equality ORed with a negation...). A clause that holds
for every record (a negated empty range such as ``NOT price:5 TO 1``) adds no filter.
Nothing here is refused: parsing errors are ``grammar``'s, and an engine that cannot
express a filter refuses it with a 400 naming itself.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from searchport.domain.filters.grammar import Between, Clause, Cnf, Compare, FacetIs
from searchport.domain.query import (
    AnyOf,
    ExistsFilter,
    Filter,
    Negated,
    NotFilter,
    RangeFilter,
    Scalar,
    TermFilter,
)

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
    """One domain filter per clause (none for a clause that always holds); ``real`` maps a
    public attribute name to its field."""
    return tuple(f for clause in cnf if (f := _clause(clause, real)) is not None)


def _clause(clause: Clause, real: Callable[[str], str]) -> Filter | None:
    by_attribute: dict[str, list[tuple[Compare | FacetIs | Between, bool]]] = {}
    for lit in clause:
        by_attribute.setdefault(lit.atom.attribute, []).append((lit.atom, lit.negated))
    members: list[Filter] = []
    for attribute, literals in by_attribute.items():
        found = _on_attribute(real(attribute), literals)
        if found is None:
            return None  # one literal always holds: so does the clause
        members += found
    if not members:  # only empty intervals: no record has a number in them
        return RangeFilter(field=real(clause[0].atom.attribute), min=1, max=0)
    return members[0] if len(members) == 1 else AnyOf(filters=tuple(members))


def _on_attribute(field: str, literals: list[tuple[Compare | FacetIs | Between, bool]]
                  ) -> list[Filter] | None:
    """The filters (ORed) selecting what the literals on one attribute select; an empty
    list when none can hold, ``None`` when one always holds."""
    equal: dict[Scalar, None] = {}  # value -> None: an ordered set
    excluded: dict[Scalar, None] = {}
    intervals: list[_Interval] = []
    outside: list[_Interval] = []  # negated comparisons and ranges
    for atom, negated in literals:
        if isinstance(atom, Compare) and negated and atom.op in ("=", "!="):
            atom, negated = Compare(atom.attribute, _FLIP[atom.op], atom.value), False  # type: ignore[arg-type]
        if isinstance(atom, FacetIs):
            (excluded if negated else equal)[atom.value] = None
        elif isinstance(atom, Compare) and atom.op == "!=":
            excluded[_number(atom.value)] = None
        elif isinstance(atom, Compare) and atom.op == "=":
            equal[_number(atom.value)] = None
        else:
            interval = _Interval(atom.low, atom.high) if isinstance(atom, Between) else \
                _comparison(atom)
            (outside if negated else intervals).append(interval)
    if any(i.is_empty() for i in outside):
        return None  # no value is in an empty interval: its negation holds for every record
    found: list[Filter] = []
    if intervals:
        texts: list[Scalar] = []
        for value in equal:  # numeric equalities among comparisons are points of the line
            point = _as_number(value)
            if point is None:
                texts.append(value)
            else:
                intervals.append(_Interval(point, point))
        if texts:
            found.append(TermFilter(field=field, values=tuple(texts)))
        found += _union(field, intervals)
    elif equal:
        found.append(TermFilter(field=field, values=tuple(equal)))
    found += [NotFilter(field=field, values=(value,)) for value in excluded]
    found += [_complement(_range(field, i)) for i in outside]
    return found


def _complement(f: Filter) -> Filter:
    match f:
        case TermFilter(field=field, values=values):
            return NotFilter(field=field, values=values)
        case ExistsFilter(field=field, exists=exists):
            return ExistsFilter(field=field, exists=not exists)
    return Negated(filter=f)


def _comparison(atom: Compare) -> _Interval:
    value = atom.value
    return {
        "<": _Interval(None, value, high_strict=True),
        "<=": _Interval(None, value),
        ">": _Interval(value, None, low_strict=True),
        ">=": _Interval(value, None),
    }[atom.op]


def _union(field: str, intervals: list[_Interval]) -> list[Filter]:
    """Filters (ORed) for "some value is in one of ``intervals``": one per separate interval
    of their union, single points together in one ``TermFilter`` (an empty union: none)."""
    kept = sorted((i for i in intervals if not i.is_empty()), key=_start)
    if not kept:
        return []
    merged = [kept[0]]
    for nxt in kept[1:]:
        last = merged[-1]
        if not _connected(last, nxt):
            merged.append(nxt)
            continue
        if _end_before(last, nxt):
            merged[-1] = _Interval(last.low, nxt.high, last.low_strict, nxt.high_strict)
    points = tuple(_number(i.low) for i in merged if i.is_point())  # type: ignore[arg-type]
    found: list[Filter] = [TermFilter(field=field, values=points)] if points else []
    return found + [_range(field, i) for i in merged if not i.is_point()]


def _range(field: str, whole: _Interval) -> Filter:
    """Some value is in ``whole`` (not a single point)."""
    if whole.low is None and whole.high is None:
        return ExistsFilter(field=field, exists=True)
    if whole.is_point():
        return TermFilter(field=field, values=(_number(whole.low),))  # type: ignore[arg-type]
    if whole.is_empty():
        return RangeFilter(field=field, min=1, max=0)
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
