"""The query log's records: normalised queries, query ids, per-day pseudonyms."""

from __future__ import annotations

import re
import time
from datetime import UTC, date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchport.domain.analytics.records import (
    MAX_HITS,
    ObservedSearch,
    Refinement,
    kept_hit_ids,
    new_query_id,
    normalise_query,
    pseudonym,
    to_record,
    utc_day,
)

TOKEN = re.compile(r"[a-zA-Z0-9_=/+-]{1,129}")  # Insights' userToken pattern


@pytest.mark.parametrize(("typed", "logged"), [
    ("  New   YORK ", "new york"),
    ("Paris", "paris"),
    ("\tSão\u00a0Paulo\n", "são paulo"),  # a no-break space is white space too
    ("STRASSE", "strasse"),
    ("Straße", "strasse"),  # case folding, not lower(): ß folds to ss
    ("", ""),
    ("   ", ""),
])
def test_normalise_query(typed: str, logged: str) -> None:
    assert normalise_query(typed) == logged


@given(st.text(max_size=40))
def test_normalising_twice_changes_nothing(text: str) -> None:
    once = normalise_query(text)
    assert normalise_query(once) == once
    assert once == once.strip() and "  " not in once


def test_query_ids_are_32_hex_and_fresh() -> None:
    ids = {new_query_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)


def test_query_ids_begin_with_their_millisecond() -> None:
    before = time.time_ns() // 1_000_000
    first = new_query_id()
    time.sleep(0.003)
    second = new_query_id()
    after = time.time_ns() // 1_000_000
    assert before <= int(first[:12], 16) < int(second[:12], 16) <= after
    assert first < second  # made later, sorted later
    assert len({new_query_id()[12:] for _ in range(5000)}) == 5000  # 80 random bits each


def test_pseudonyms_hide_the_address_and_change_every_day() -> None:
    salt, other_salt = b"s" * 32, b"t" * 32
    monday, tuesday = date(2026, 3, 2), date(2026, 3, 3)
    first = pseudonym("203.0.113.7", monday, salt)
    assert first == pseudonym("203.0.113.7", monday, salt)  # stable within the day
    assert TOKEN.fullmatch(first) and "203" not in first
    others = {pseudonym("203.0.113.7", tuesday, salt), pseudonym("203.0.113.8", monday, salt),
              pseudonym("203.0.113.7", monday, other_salt)}
    assert first not in others and len(others) == 3


def test_utc_day_is_the_day_in_utc() -> None:
    late = datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC).timestamp()
    assert utc_day(late) == date(2026, 3, 1)
    assert utc_day(late + 1) == date(2026, 3, 2)


def test_the_objects_of_hits_in_hand_are_texts_of_at_most_200_characters() -> None:
    assert kept_hit_ids([{"objectID": "a"}, {"objectID": "b", "x": 1}]) == ("a", "b")
    assert kept_hit_ids([{"objectID": 7}, {"name": "no id"}, {"objectID": "x" * 300},
                         {"objectID": "y"}]) == ("7", "x" * 200, "y")
    assert kept_hit_ids([{"objectID": f"{n:0250d}"} for n in range(3)]) == tuple(
        f"{n:0250d}"[:200] for n in range(3))
    assert kept_hit_ids([{"objectID": str(n)} for n in range(MAX_HITS + 5)]) == tuple(
        str(n) for n in range(MAX_HITS))
    assert kept_hit_ids([]) == ()


def test_a_record_keeps_the_token_or_a_pseudonym_never_the_address() -> None:
    at = datetime(2026, 3, 1, 12, tzinfo=UTC).timestamp()
    seen = ObservedSearch(at=at, handle="books", query="  Dune ", nb_hits=3, page=1,
                          refinements=(Refinement("genre", ":", "sf"),), tags=("web",),
                          client="198.51.100.4", latency_ms=2.5, query_id="a" * 32)
    record = to_record(seen, b"k" * 32)
    assert record.query == "dune"
    assert record.user_token == pseudonym("198.51.100.4", date(2026, 3, 1), b"k" * 32)
    assert "198.51.100.4" not in repr(record)
    assert (record.handle, record.nb_hits, record.page, record.refinements, record.tags,
            record.latency_ms, record.query_id, record.day) == (
        "books", 3, 1, (Refinement("genre", ":", "sf"),), ("web",), 2.5, "a" * 32, date(2026, 3, 1))
    sent = to_record(ObservedSearch(at=at, handle="books", query="x", nb_hits=0,
                                    user_token="user-42", client="198.51.100.4"), b"k" * 32)
    assert sent.user_token == "user-42"
