"""How long every Analytics API (``/2/...``) read takes over a large query log.

    .venv/bin/python bench/analytics_reads.py [--backend sqlite|postgres] [--url ...]
        [--rows 10000000] [--days 90] [--period 30] [--file analytics.sqlite3]
        [--end YYYY-MM-DD] [--rounds 5] [--server-times]

Writes ``--rows`` searches spread over the last ``--days`` days on one handle through the
store's own writes (so the daily rollups are kept as in production), in batches of a day's
searches at 10 million over 90 days, one transaction each: 20,000 distinct queries of a
skewed popularity (a few are most of the searches), four objectIDs per query, 100,000
users, a third tracked (``queryID``), a refinement on one search in four,
``analyticsTags`` on one in three; a click on one tracked search in three, and a purchase
with a value on one in twenty. Then the daily purge's work (nothing to forget here) adds
up the blocks of days that have ended, as it would in production. Then it times every
route's use case (the store's reads: what a request waits on) over the last ``--period``
days, each as asked by default and in a segment (``tags``), ``/2/searches`` in each order,
``/2/hits`` and ``/2/filters...`` of one query too: the median (and the slowest) of
``--rounds``, one line each, with the load average, and the median CPU time of this
process (SQLite's reads run in it: the figure a loaded machine disturbs least;
PostgreSQL's are in its server; with ``--server-times``, a PostgreSQL server on this
machine with ``pg_stat_statements`` loaded: also the execution time the server reports for
a route's statements, and the CPU time of the server's processes, from ``/proc``, both per
call, averaged over the rounds). A log already written is reused, not written again:
``--file`` (SQLite) or ``--url`` (PostgreSQL) naming a database that holds searches of the
handle (``--end``: the last day of the period read, today by default).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from searchport.adapters.analytics.postgres import PostgresAnalyticsStore
from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.records import Refinement, SearchRecord
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import IndexConfig
from searchport.entrypoints.container import ANALYTICS_REPORTS
from searchport.ports.analytics import AnalyticsStore

HANDLE = "cities"
QUERIES = 20_000
BATCH = 120_000  # a day's searches of 10 million over 90 days: one transaction each


def query_of(n: int) -> int:
    """A skewed popularity: query k is searched about 1/k as often as query 1."""
    x = (n * 2654435761) % 1_000_003 / 1_000_003  # a spread of n over [0, 1)
    return int(QUERIES ** x) - 1


def records(first: int, count: int, day_start: float) -> list[SearchRecord]:
    """Searches ``first`` to ``first + count`` (exclusive), made during one day."""
    made = []
    for n in range(first, first + count):
        q = query_of(n)
        nb_hits = 0 if q % 17 == 0 else 1 + q % 40
        made.append(SearchRecord(
            at=day_start + n % 86_000, handle=HANDLE, query=f"query {q}",
            nb_hits=nb_hits, page=0,
            refinements=(Refinement("country", ":", f"c{n % 50}"),) if n % 4 == 0 else (),
            tags=("mobile",) if n % 3 == 0 else (), user_token=f"u{n % 100_000}",
            latency_ms=1.0, query_id=f"{n:032x}" if n % 3 == 1 else None,
            hits=tuple(f"o{(q * 7 + k) % 5000}" for k in range(min(nb_hits, 4)))))
    return made


def events(searches: list[SearchRecord]) -> list[InsightsEvent]:
    made = []
    for i, s in enumerate(s for s in searches if s.query_id and s.hits):
        if i % 3 == 0:
            made.append(InsightsEvent(at=s.at + 5, handle=HANDLE, type="click", subtype=None,
                                      name="c", user_token=s.user_token,
                                      object_ids=s.hits[:1], positions=(1 + i % 12,),
                                      query_id=s.query_id))
        if i % 20 == 0:
            made.append(InsightsEvent(at=s.at + 9, handle=HANDLE, type="conversion",
                                      subtype="purchase", name="p", user_token=s.user_token,
                                      object_ids=s.hits[:1], query_id=s.query_id,
                                      revenue=10.0, currency="EUR"))
    return made


async def fill(store: AnalyticsStore, rows: int, days: int) -> None:
    """Day after day (as a log grows), in batches of ``BATCH``."""
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    per_day = -(-rows // days)
    for day in range(days):
        day_start = today - (days - 1 - day) * 86400
        end = min(rows, (day + 1) * per_day)
        for first in range(day * per_day, end, BATCH):
            batch = records(first, min(BATCH, end - first), day_start)
            await store.write_searches(batch)
            await store.write_events(events(batch))


class _Engine:
    """No engine is asked: the reads only check the handle is configured."""


def catalog() -> Catalog:
    config = IndexConfig(engine="tantivy", path="idx")
    return Catalog({HANDLE: IndexEntry(HANDLE, config, _Engine())})  # type: ignore[arg-type]


ASKED: dict[str, dict[str, Any]] = {
    "/2/searches": {"click_analytics": True, "revenue_analytics": True, "direction": "desc"},
    "/2/hits": {"click_analytics": True, "revenue_analytics": True},
    "/2/filters/{attribute:str}": {"attribute": "country"},
}
EVENTS = {"click_analytics": True, "revenue_analytics": True}
SEGMENT = {"tags": "mobile"}  # a third of the searches


def variants(routes: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every route as asked by default, then with a segment (``tags``); ``/2/searches``
    plain and in each of Algolia's orders; ``/2/hits`` and ``/2/filters...`` of one query
    (the most searched with results, ``query 1``) too."""
    found = []
    for path in routes:
        found.append((path, ASKED.get(path, {})))
        if path != "/2/status":
            found.append((path, {**ASKED.get(path, {}), **SEGMENT}))
    found.append(("/2/searches", {}))
    for order in ("clickThroughRate", "conversionRate", "averageClickPosition"):
        for direction in ("desc", "asc"):
            found.append(("/2/searches", {**EVENTS, "order_by": order, "direction": direction}))
    for path in ("/2/hits", "/2/filters", "/2/filters/noResults", "/2/filters/{attribute:str}"):
        for extra in ({}, SEGMENT):
            found.append((path, {**ASKED.get(path, {}), "search": "query 1", **extra}))
    return found


class ServerTimes:
    """A local PostgreSQL server's own figures: the execution time of the statements
    (``pg_stat_statements``, reset before a route), and the CPU time of its processes (the
    live ones', and those its postmaster has reaped: parallel workers), from ``/proc``."""

    def __init__(self, store: PostgresAnalyticsStore, postmaster: int) -> None:
        self.store, self.postmaster = store, postmaster

    @classmethod
    async def of(cls, store: AnalyticsStore) -> ServerTimes:
        assert isinstance(store, PostgresAnalyticsStore), "--server-times: PostgreSQL only"
        async with await psycopg.AsyncConnection.connect(store.url, autocommit=True) as db:
            await db.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        backend = int((await store._rows("SELECT pg_backend_pid()", []))[0][0])
        return cls(store, int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1]
                             .split()[1]))

    def cpu(self) -> float:
        """Seconds of CPU of the server's processes so far."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid = int(stat.parent.name)
            if pid == self.postmaster:  # its own, and its reaped children's
                total += sum(int(v) for v in fields[11:15])
            elif int(fields[1]) == self.postmaster:
                total += int(fields[11]) + int(fields[12])
        return total / ticks

    async def reset(self) -> None:
        await self.store._rows("SELECT pg_stat_statements_reset()", [])

    async def executed(self) -> float:
        """Seconds the server spent executing statements on this database since ``reset``
        (but these)."""
        rows = await self.store._rows(
            "SELECT coalesce(sum(total_exec_time), 0) FROM pg_stat_statements "
            "WHERE query NOT LIKE '%pg_stat_statements%' "
            "AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())", [])
        return float(rows[0][0]) / 1000


async def time_routes(store: AnalyticsStore, period: int, until: str | None,
                      rounds: int, server_times: bool = False) -> None:
    server = await ServerTimes.of(store) if server_times else None
    end = datetime.fromisoformat(until).date() if until else datetime.now(UTC).date()
    start = end - timedelta(days=period - 1)
    routes = dict(ANALYTICS_REPORTS)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; median of "
          f"{rounds} (slowest):")
    for path, extra in variants(routes):
        use_case = routes[path](catalog=catalog(), store=store)
        request = AnalyticsRequest(index=HANDLE, start_date=start.isoformat(),
                                   end_date=end.isoformat(), **extra)
        took, cpu = [], []
        if server:
            await server.reset()
            server_cpu = server.cpu()
        for _ in range(rounds):
            started, used = time.perf_counter(), time.process_time()
            await use_case(request)
            took.append(time.perf_counter() - started)
            cpu.append(time.process_time() - used)
        more = ""
        if server:
            used_cpu = (server.cpu() - server_cpu) / rounds
            more = (f" server: executing {await server.executed() / rounds * 1000:.1f} ms, "
                    f"cpu {used_cpu * 1000:.1f} ms")
        print(f"{path:28} {' '.join(f'{k}={v}' for k, v in extra.items()):84} "
              f"{statistics.median(took) * 1000:8.1f} ms ({max(took) * 1000:.1f}) "
              f"cpu {statistics.median(cpu) * 1000:.1f} ms{more}", flush=True)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


async def run(args: argparse.Namespace, folder: str) -> None:
    store: AnalyticsStore
    started = time.perf_counter()
    if args.backend == "sqlite":
        path = Path(args.file) if args.file else Path(folder) / "analytics.sqlite3"
        store = SqliteAnalyticsStore(path, timeout=3600)
    else:
        store = PostgresAnalyticsStore(args.url, timeout=3600)
    await store.open()
    print(f"opened (its tables created) in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    if await store.last_update(HANDLE) is None:
        await fill(store, args.rows, args.days)
        took = time.perf_counter() - started
        print(f"{args.rows} searches over {args.days} days written in {took:.0f} s "
              f"({args.rows / took:.0f}/s with their events and rollups)")
    started = time.perf_counter()
    await store.purge(datetime(2000, 1, 1, tzinfo=UTC).date())  # nothing: the blocks built
    print(f"the daily purge (nothing to forget) and its build of the blocks of days "
          f"ended: {time.perf_counter() - started:.1f} s")
    print(f"reads of the {args.period} days to {args.end or 'today'}:")
    await time_routes(store, args.period, args.end, args.rounds, args.server_times)
    await store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--url")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--period", type=int, default=30)
    parser.add_argument("--file")
    parser.add_argument("--end", help="the last day read (YYYY-MM-DD), today by default")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--server-times", action="store_true",
                        help="PostgreSQL on this machine: its execution and CPU times too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(args, folder))


if __name__ == "__main__":
    main()
