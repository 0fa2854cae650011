"""Promoted hits placed at their positions, page after page, with nothing lost or repeated.

The engine searches the organic hits: the search minus every promoted and hidden record
(so a promoted record is counted once, a hidden one never). The records to promote that
exist (and, with ``filterPromotes``, match the filters) are placed into that list: in
placing order, each at the position asked, or the next free one after the record placed
before it; past the end of the organic hits they follow it, in order. Promoted record
``i`` (0-based, placing order) of ``k`` thus lands at ``min(q_i, N + i)``, where ``N`` is
the number of organic hits and ``q_i = max(position_i, q_(i-1) + 1)``.

A page ``[s, s + per_page)`` shows the promoted records that land in it and organic hits
from ``s - before`` on, ``before`` being how many promoted records land before ``s``. Not
knowing beforehand ``N`` nor which records will be found, ``organic_window`` asks the
engine for organic hits ``[max(0, s - k), s + per_page)``, which holds every case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import msgspec

from searchport.domain.rules.effects import Promotion

T = TypeVar("T")


class Window(msgspec.Struct, frozen=True):
    offset: int
    limit: int


def organic_window(page: int, per_page: int, promoted: int) -> Window:
    """The organic hits to ask the engine for, with ``promoted`` records to place."""
    start = page * per_page
    offset = max(0, start - promoted)
    return Window(offset, start + per_page - offset)


def landing(present: Sequence[Promotion], organic_total: int) -> list[int]:
    """Where each promoted record lands (placing order) among ``organic_total`` hits."""
    found: list[int] = []
    previous = -1
    for i, promotion in enumerate(present):
        previous = max(promotion.position, previous + 1)
        found.append(min(previous, organic_total + i))
    return found


def place(page: int, per_page: int, present: Sequence[Promotion], organic: Sequence[T],
          window: Window, organic_total: int) -> list[T | Promotion]:
    """Page ``page``: promoted records (as ``Promotion``) among the organic hits the engine
    gave for ``window``. The whole list holds ``organic_total + len(present)`` hits."""
    start = page * per_page
    stop = min(start + per_page, organic_total + len(present))
    at = dict(zip(landing(present, organic_total), present, strict=True))
    organic_at = start - sum(1 for x in at if x < start) - window.offset
    found: list[T | Promotion] = []
    for x in range(start, stop):
        promotion = at.get(x)
        if promotion is not None:
            found.append(promotion)
        elif 0 <= organic_at < len(organic):
            found.append(organic[organic_at])
            organic_at += 1
        else:
            continue  # the engine gave fewer hits than it counted
    return found
