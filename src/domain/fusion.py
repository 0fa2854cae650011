"""Reciprocal rank fusion: two rankings of the same records made one (Cormack, Clarke and
Büttcher, SIGIR 2009), each weighted, as hybrid search fuses its keyword ranking and its
ranking by meaning."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
RANK_CONSTANT = 60  # the paper's k: how much a first place outweighs a tenth


def reciprocal_rank_fusion(keyword: Sequence[K], meaning: Sequence[K], share: float,
                           k: int = RANK_CONSTANT) -> list[tuple[K, float]]:
    """The records of both rankings (best first, no repeats), best first with their fused
    score: ``(1 - share) / (k + r)`` for a record ranked ``r`` (from 1) by keyword, plus
    ``share / (k + r)`` for one ranked ``r`` by meaning. A ranking whose weight is 0
    brings no record. Equal scores keep the keyword ranking's order, then meaning's."""
    if not 0 <= share <= 1:
        raise ValueError("share must be in [0, 1]")
    scores: dict[K, float] = {}
    places: dict[K, tuple[int, int]] = {}
    last = len(keyword) + len(meaning)
    for weight, ranking, side in ((1 - share, keyword, 0), (share, meaning, 1)):
        if weight <= 0:
            continue
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            place = places.get(key, (last, last))
            places[key] = (rank, place[1]) if side == 0 else (place[0], rank)
    return sorted(scores.items(), key=lambda item: (-item[1], *places[item[0]]))
