"""The packed buffer of searches waiting for the recorder's write: what goes in comes out,
whole and in order, in chunks of at most a batch."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchport.domain.analytics.buffer import SearchBuffer
from searchport.domain.analytics.records import ObservedSearch
from searchport.domain.analytics.refinements import Refinement


def seen(n: int) -> ObservedSearch:
    return ObservedSearch(
        at=1_772_366_400.0 + n / 7, handle="books", query=f"  Query {n} é ", nb_hits=n * 3,
        page=n % 4, refinements=(Refinement("genre", ":", f"g{n}"),) if n % 2 else (),
        tags=("web", "fr") if n % 3 == 0 else (), user_token=None if n % 5 else f"u{n}",
        client=f"192.0.2.{n % 256}", latency_ms=n / 3, query_id=None if n % 2 else "a" * 32,
        hits=tuple(f"doc-{k}" for k in range(n % 21)))


def test_searches_come_out_whole_in_order_in_chunks_of_a_batch() -> None:
    buffer = SearchBuffer(batch=4)
    full = [buffer.append(seen(n)) for n in range(10)]
    assert full == [n % 4 == 3 for n in range(10)]  # the 4th, the 8th complete a chunk
    assert len(buffer) == 10
    taken = [buffer.take(100) for _ in range(3)]
    assert [len(t) for t in taken] == [4, 4, 2]  # one chunk per take, the open one last
    assert [s for t in taken for s in t] == [seen(n) for n in range(10)]
    assert len(buffer) == 0 and buffer.take(100) == []


def test_a_take_smaller_than_a_chunk_leaves_the_rest_first_in_line() -> None:
    buffer = SearchBuffer(batch=10)
    for n in range(7):
        buffer.append(seen(n))
    assert buffer.take(3) == [seen(n) for n in range(3)]
    buffer.append(seen(7))  # after the sealed rest
    assert len(buffer) == 5
    assert buffer.take(10) == [seen(n) for n in range(3, 7)]
    assert buffer.take(10) == [seen(7)]


def test_sealed_searches_are_taken_before_later_arrivals() -> None:
    buffer = SearchBuffer(batch=100)
    for n in range(3):
        buffer.append(seen(n))
    buffer.seal()
    buffer.append(seen(3))
    assert buffer.take(100) == [seen(n) for n in range(3)]
    assert buffer.take(100) == [seen(3)]


def test_a_cleared_buffer_is_empty() -> None:
    buffer = SearchBuffer(batch=2)
    for n in range(5):
        buffer.append(seen(n))
    buffer.clear()
    assert len(buffer) == 0 and buffer.take(10) == []
    buffer.append(seen(9))
    assert buffer.take(10) == [seen(9)]


@given(st.lists(st.integers(0, 10_000), max_size=60), st.integers(1, 9),
       st.lists(st.integers(1, 12), min_size=1, max_size=20))
def test_any_sequence_of_appends_and_takes_keeps_every_search_once_in_order(
        numbers: list[int], batch: int, sizes: list[int]) -> None:
    buffer = SearchBuffer(batch=batch)
    for n in numbers:
        buffer.append(seen(n))
    out: list[ObservedSearch] = []
    turn = 0
    while len(buffer):
        size = sizes[turn % len(sizes)]
        taken = buffer.take(size)
        assert 0 < len(taken) <= min(size, batch)
        out += taken
        turn += 1
    assert out == [seen(n) for n in numbers]


def test_a_search_that_cannot_be_encoded_is_refused_and_leaves_the_buffer_whole() -> None:
    buffer = SearchBuffer(batch=10)
    buffer.append(seen(1))
    broken = ObservedSearch(at=1.0, handle="books", query="lone \ud800 surrogate", nb_hits=1,
                            hits=("a", "b"))
    with pytest.raises(ValueError):
        buffer.append(broken)
    buffer.append(seen(2))
    assert len(buffer) == 2
    assert buffer.take(10) == [seen(1), seen(2)]
