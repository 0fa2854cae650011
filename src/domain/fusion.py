"""Reciprocal rank fusion: two rankings of the same records made one (Cormack, Clarke and
Büttcher, SIGIR 2009), each weighted, as hybrid search fuses its keyword ranking and its
ranking by meaning.

Meaning brings only the records similar enough to the query. A query that has no meaning
the model knows (a prefix being typed, a misspelt name) still has nearest records, each a
little similar to it; fused by rank, any of them that words found too would outrank the
keyword search's first hit. So a record weighs in by meaning only when its similarity to
the query passes the handle's floor (``semantic.minSimilarity``), as Elasticsearch's knn
``similarity`` and Typesense's ``distance_threshold`` cut theirs (docs/semantic.md, "How
the two rankings are fused")."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
RANK_CONSTANT = 60  # the paper's k: how much a first place outweighs a tenth


def words_complete(brought: int, window: int, matching: int | None = None) -> bool:
    """Whether a hybrid search's keyword half brought every record that matches the words
    (a wider window would add none): it matched ``matching`` records (when the engine
    counted them) or, uncounted, came back with fewer than its ``window``."""
    return matching <= window if matching is not None else brought < window


def meaning_complete(similarities: Sequence[float], window: int, share: float,
                     floor: float) -> bool:
    """Whether a hybrid search's ranking by meaning brought every record it ranks (a wider
    window would add none): ``similarities`` are those of the records it brought, most
    similar first. It came back short of its ``window``, or the last record it brought is
    at or below ``floor``, so none beyond it passes; with meaning alone (``share`` 1) every
    record ranks, and a full window leaves some out."""
    if share <= 0 or len(similarities) < window:
        return True
    return share < 1 and similarities[-1] <= floor


def reciprocal_rank_fusion(keyword: Sequence[K], meaning: Sequence[tuple[K, float]],
                           share: float, floor: float = 0.0,
                           k: int = RANK_CONSTANT) -> list[tuple[K, float]]:
    """The records of both rankings (best first, no repeats), best first with their fused
    score. ``meaning`` pairs each record with its similarity to the query (a cosine), most
    similar first; those at or below ``floor`` are left out of it, unless ``share`` is 1:
    then there is nothing to fuse, and the ranking is meaning's own. A record ranked ``r``
    (from 1) by keyword scores ``(1 - share) / (k + r)``, plus ``share / (k + r)`` for one
    ranked ``r`` by meaning. A ranking whose weight is 0 brings no record. Equal scores
    keep the keyword ranking's order, then meaning's."""
    if not 0 <= share <= 1:
        raise ValueError("share must be in [0, 1]")
    similar = [key for key, similarity in meaning if share == 1 or similarity > floor]
    scores: dict[K, float] = {}
    places: dict[K, tuple[int, int]] = {}
    last = len(keyword) + len(similar)
    for weight, ranking, side in ((1 - share, keyword, 0), (share, similar, 1)):
        if weight <= 0:
            continue
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            place = places.get(key, (last, last))
            places[key] = (rank, place[1]) if side == 0 else (place[0], rank)
    return sorted(scores.items(), key=lambda item: (-item[1], *places[item[0]]))
