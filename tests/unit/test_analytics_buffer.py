"""The packed buffer of searches waiting for the recorder's write: what goes in comes out,
whole and in order, in chunks of at most ``chunk`` searches, each decoded on its own, and
with the days its searches were made on."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchport.domain.analytics.buffer import Packed, SearchBuffer, days_of, unpack
from searchport.domain.analytics.records import ObservedSearch
from searchport.domain.analytics.refinements import Refinement

START = 1_772_366_400.0  # 2026-03-01 12:00 UTC


def seen(n: int, at: float | None = None) -> ObservedSearch:
    return ObservedSearch(
        at=START + n / 7 if at is None else at, handle="books", query=f"  Query {n} é ",
        nb_hits=n * 3, page=n % 4,
        refinements=(Refinement("genre", ":", f"g{n}"),) if n % 2 else (),
        tags=("web", "fr") if n % 3 == 0 else (), user_token=None if n % 5 else f"u{n}",
        client=f"192.0.2.{n % 256}", latency_ms=n / 3, query_id=None if n % 2 else "a" * 32,
        hits=tuple(f"doc-{k}" for k in range(n % 21)))


def searches(chunks: list[Packed]) -> list[ObservedSearch]:
    return [s for p in chunks for s in unpack(p)]


def test_searches_come_out_whole_in_order_in_chunks() -> None:
    buffer = SearchBuffer(chunk=4)
    for n in range(10):
        buffer.append(seen(n))
    assert len(buffer) == 10
    taken = buffer.take(100)  # two sealed chunks, then the open one sealed
    assert [p.count for p in taken] == [4, 4, 2]
    assert [len(unpack(p)) for p in taken] == [4, 4, 2]
    assert searches(taken) == [seen(n) for n in range(10)]
    assert [(p.earliest, p.latest) for p in taken] == [
        (seen(0).at, seen(3).at), (seen(4).at, seen(7).at), (seen(8).at, seen(9).at)]
    assert len(buffer) == 0 and buffer.take(100) == []


def test_a_take_smaller_than_a_chunk_leaves_the_rest_first_in_line() -> None:
    buffer = SearchBuffer(chunk=10)
    for n in range(7):
        buffer.append(seen(n))
    taken = buffer.take(3)
    assert [p.count for p in taken] == [3]
    assert searches(taken) == [seen(n) for n in range(3)]
    buffer.append(seen(7))  # after the sealed rest
    assert len(buffer) == 5
    rest = buffer.take(10)
    assert searches(rest) == [seen(n) for n in range(3, 8)]
    assert (rest[0].earliest, rest[0].latest) == (seen(3).at, seen(6).at)


def test_sealed_searches_are_taken_before_later_arrivals() -> None:
    buffer = SearchBuffer(chunk=100)
    for n in range(3):
        buffer.append(seen(n))
    buffer.seal()
    buffer.append(seen(3))
    assert searches(buffer.take(3)) == [seen(n) for n in range(3)]
    assert searches(buffer.take(100)) == [seen(3)]


def test_a_cleared_buffer_is_empty() -> None:
    buffer = SearchBuffer(chunk=2)
    for n in range(5):
        buffer.append(seen(n))
    buffer.clear()
    assert len(buffer) == 0 and buffer.take(10) == []
    buffer.append(seen(9))
    assert searches(buffer.take(10)) == [seen(9)]


def test_the_days_of_chunks_cover_every_search_across_midnight() -> None:
    late = datetime(2026, 3, 1, 23, 59, 59, 999_999, tzinfo=UTC).timestamp()
    buffer = SearchBuffer(chunk=2)
    for n, at in enumerate((late - 5, late + 3.0, late - 1, late + 86_400 * 2 + 1)):
        buffer.append(seen(n, at))
    taken = buffer.take(10)
    assert days_of(taken) == [date(2026, 3, 1), date(2026, 3, 2), date(2026, 3, 3),
                              date(2026, 3, 4)]
    assert days_of(taken[:1]) == [date(2026, 3, 1), date(2026, 3, 2)]
    assert days_of([]) == []


@given(st.lists(st.integers(0, 10_000), max_size=60), st.integers(1, 9),
       st.lists(st.integers(1, 12), min_size=1, max_size=20))
def test_any_sequence_of_appends_and_takes_keeps_every_search_once_in_order(
        numbers: list[int], chunk: int, sizes: list[int]) -> None:
    buffer = SearchBuffer(chunk=chunk)
    for n in numbers:
        buffer.append(seen(n))
    out: list[ObservedSearch] = []
    turn = 0
    while len(buffer):
        size = sizes[turn % len(sizes)]
        before = len(buffer)
        taken = buffer.take(size)
        count = sum(p.count for p in taken)
        assert count == min(size, before) and len(buffer) == before - count
        assert all(0 < p.count <= chunk for p in taken)
        for packed in taken:
            found = unpack(packed)
            assert len(found) == packed.count
            assert (packed.earliest, packed.latest) == (min(s.at for s in found),
                                                        max(s.at for s in found))
        out += searches(taken)
        turn += 1
    assert out == [seen(n) for n in numbers]


def test_a_search_that_cannot_be_encoded_is_refused_and_leaves_the_buffer_whole() -> None:
    buffer = SearchBuffer(chunk=10)
    buffer.append(seen(1))
    broken = ObservedSearch(at=1.0, handle="books", query="lone \ud800 surrogate", nb_hits=1,
                            hits=("a", "b"))
    with pytest.raises(ValueError):
        buffer.append(broken)
    buffer.append(seen(2))
    assert len(buffer) == 2
    taken = buffer.take(10)
    assert searches(taken) == [seen(1), seen(2)]
    assert taken[0].earliest == seen(1).at  # the refused search's instant not counted
