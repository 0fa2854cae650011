"""The distinct users of ``/2/users/count`` (``AnalyticsStore.users``), read from their
rollups on a real SQLite file and a real PostgreSQL server: over periods that cross the
rollups' blocks of days, with segments whose sets of tags share users on one day, after
batches that meet users already counted and after a purge; each answer held against the
reference computed in plain Python from the rows written (``tests.fakes.FakeAnalyticsStore``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from searchport.adapters.analytics.postgres import PostgresAnalyticsStore
from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.domain.analytics.records import SearchRecord
from searchport.domain.analytics.segments import read_segment
from searchport.ports.analytics import AnalyticsStore
from tests.fakes import FakeAnalyticsStore
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.anyio

DAY0 = date(2026, 2, 20)  # 70 days from here cross three blocks of 32 days
TAGS = ((), ("mobile",), ("mobile", "lang:en"), ("desktop", "lang:en"), ("desktop",))
SEGMENTS = ("", "mobile", "lang:en", "mobile OR desktop", "desktop AND lang:en", "nobody")
PERIODS = ((DAY0, DAY0 + timedelta(days=69)), (DAY0 + timedelta(days=5),
                                                 DAY0 + timedelta(days=40)),
           (DAY0 + timedelta(days=11), DAY0 + timedelta(days=11)),
           (DAY0 + timedelta(days=12), DAY0 + timedelta(days=43)),
           (DAY0 + timedelta(days=44), DAY0 + timedelta(days=75)),
           (DAY0 + timedelta(days=3), DAY0 + timedelta(days=2)))


def searches() -> list[SearchRecord]:
    """Searches of 17 users over 70 days on two handles, under five sets of tags (a user
    often under two of them on one day)."""
    made = []
    for n in range(900):
        day = DAY0 + timedelta(days=(n * 7) % 70)
        made.append(SearchRecord(
            at=datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() + n % 86_000,
            handle="books" if n % 11 else "films", query=f"q{n % 5}", nb_hits=n % 3,
            page=0, refinements=(), tags=TAGS[(n // 3) % len(TAGS)],
            user_token=f"u{(n * n) % 17}", latency_ms=1.0, query_id=None, hits=()))
    return made


async def written(store: AnalyticsStore) -> FakeAnalyticsStore:
    """The searches written in three batches that each span every day (later batches meet
    users whose days are already set); the reference of the same rows."""
    reference = FakeAnalyticsStore()
    rows = searches()
    for part in (rows[0::3], rows[1::3], rows[2::3]):
        await store.write_searches(part)
        await reference.write_searches(part)
    return reference


def made(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> AnalyticsStore:
    if kind == "sqlite":
        return SqliteAnalyticsStore(tmp_path / "analytics.sqlite3")
    server: PostgresServer = request.getfixturevalue("postgres")
    return PostgresAnalyticsStore(server.create_database())


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AnalyticsStore]:
    opened = made(request.param, tmp_path, request)
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


async def assert_same_users(store: AnalyticsStore, reference: FakeAnalyticsStore) -> int:
    compared = 0
    for handle in ("books", "films"):
        for start, end in PERIODS:
            for text in SEGMENTS:
                segment = read_segment(text)
                found = await store.users(handle, start, end, segment=segment)
                assert found == await reference.users(handle, start, end, segment=segment), (
                    handle, start, end, text)
                compared += found[0]
    return compared


async def test_users_over_blocks_and_segments_are_the_reference_s(
        store: AnalyticsStore) -> None:
    reference = await written(store)
    assert await assert_same_users(store, reference) > 0
    total, days = await reference.users("books", *PERIODS[0], segment=read_segment("mobile"))
    assert total < sum(d.users for d in days), "users come back on other days"


async def test_a_purge_forgets_the_users_of_the_days_before(store: AnalyticsStore) -> None:
    reference = await written(store)
    before = DAY0 + timedelta(days=20)  # within a block: its earlier days' bits cleared
    assert await store.purge(before) == await reference.purge(before) > 0
    await assert_same_users(store, reference)
    total, _ = await store.users("books", DAY0, before - timedelta(days=1))
    assert total == 0
