"""The Insights events in the query log: kept, and what they did added to the rollups of
the searches they name (``plan_events``). An event naming a search not yet in the log is
also kept in ``analytics_early_events`` until the batch writing that search applies it
(``apply_early``; docs/analytics.md, "Storage"). What a search has had (clicks,
conversions...) is kept on its row and per object (``analytics_hit_events``), so that
"searches with at least one click" counts each once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import date
from typing import Any

import msgspec

from searchport.adapters.analytics.dialect import Dialect, Transaction, insert, marks
from searchport.adapters.analytics.rollups import BATCH, DAILY, JSON_KEYS, UPSERTS, invalidate
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import utc_day
from searchport.domain.analytics.reports import click_range

Step = tuple[str, list[tuple[Any, ...]]]  # one statement, the rows it runs with

EVENT_COLUMNS = ("at", "day", "handle", "type", "subtype", "name", "user_token",
                 "authenticated_user_token", "object_ids", "positions", "query_id",
                 "filters", "object_query_ids", "revenue", "currency", "object_revenues")
INSERT_EVENT = insert("analytics_events", EVENT_COLUMNS)
EVENT_STATE = ("clicks", "conversions", "carts", "purchases")
SET_STATE = ("UPDATE analytics_searches SET clicks = ?, conversions = ?, carts = ?, "
             "purchases = ? WHERE query_id = ?")
HIT_STATE = ("INSERT INTO analytics_hit_events (query_id, hit, day, clicks, conversions, "
             "carts, purchases) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (query_id, hit) "
             "DO UPDATE SET clicks = excluded.clicks, conversions = excluded.conversions, "
             "carts = excluded.carts, purchases = excluded.purchases")
EVENT_FIELDS = ("at, handle, type, subtype, object_ids, positions, query_id, "
                "object_query_ids, revenue, currency, object_revenues")
EARLY_COLUMNS = ("name", "at", "day", "handle", "type", "subtype", "object_ids", "positions",
                 "query_id", "object_query_ids", "revenue", "currency", "object_revenues")
INSERT_EARLY = insert("analytics_early_events", EARLY_COLUMNS)
# the early events naming the batch's searches, forgotten as they are read
BATCH_EARLY = ("DELETE FROM analytics_early_events WHERE name IN "
               f"(SELECT query_id FROM {BATCH} WHERE query_id IS NOT NULL) "
               f"RETURNING id, name, {EVENT_FIELDS}")


SEARCHES = ("SELECT query_id, handle, day, query, tags, nb_hits, hits, clicks, conversions, "
            "carts, purchases FROM analytics_searches WHERE query_id IN ({}) ORDER BY query_id")
HIT_STATES = ("SELECT query_id, hit, clicks, conversions, carts, purchases "
              "FROM analytics_hit_events WHERE query_id IN ({})")


async def _named(tx: Transaction, statement: str, names: Sequence[str]) -> list[Any]:
    """The rows of ``statement`` for ``names`` (its ``{}``), 500 names a statement."""
    found: list[Any] = []
    for start in range(0, len(names), 500):
        part = names[start:start + 500]
        found += await tx.rows(statement.format(marks(len(part))), part)
    return found


async def apply_events(tx: Transaction, d: Dialect, events: Sequence[InsightsEvent], *,
                       early: Sequence[str] | None = None) -> None:
    """Inside a transaction: ``events`` written as ``plan_events`` says, the rows of the
    searches they name locked until it ends on a database several instances share."""
    names = sorted({q for e in events for q in named(e)} if early is None else set(early))
    searches = {row[0]: Search(row, d)
                for row in await _named(tx, SEARCHES + d.lock_rows, names)}
    hit_states = {(q, hit): [int(v) for v in state]
                  for q, hit, *state in await _named(tx, HIT_STATES, sorted(searches))}
    for statement, step_rows in plan_events(d, events, searches, hit_states, early=early,
                                            today=utc_day(time.time())):
        if step_rows:
            await tx.executemany(statement, step_rows)


async def apply_early(tx: Transaction, d: Dialect) -> None:
    """Inside the transaction writing the searches of ``BATCH``: the early events naming
    them applied, in the order they came, and forgotten."""
    found = sorted(await tx.rows(BATCH_EARLY), key=lambda row: int(row[0]))
    if found:
        await apply_events(tx, d, [event_of(row[2:]) for row in found],
                           early=[row[1] for row in found])


def _list(value: Any) -> list[Any]:
    if isinstance(value, str | bytes):
        return list(msgspec.json.decode(value))
    return list(value)


class Search:
    """A tracked search as the rollups need it, and what its events did so far."""

    def __init__(self, row: Sequence[Any], d: Dialect) -> None:
        (self.query_id, self.handle, day, self.query, tags, self.nb_hits, hits,
         *state) = row
        self.day: date = d.read_day(day)
        self.tags = tuple(_list(tags))
        self.hits = frozenset(_list(hits))
        self.state = [int(v) for v in state]
        self.changed = False


def event_of(row: Sequence[Any]) -> InsightsEvent:
    """An event read back (``EVENT_FIELDS``), as far as the rollups need it."""
    (at, handle, kind, subtype, objects, positions, query_id, object_query_ids, revenue,
     currency, object_revenues) = row
    return InsightsEvent(at=float(at), handle=handle, type=kind, subtype=subtype, name="",
                         user_token="", object_ids=tuple(_list(objects)),
                         positions=tuple(_list(positions)), query_id=query_id,
                         object_query_ids=tuple(_list(object_query_ids)),
                         revenue=revenue, currency=currency,
                         object_revenues=tuple(_list(object_revenues)))


def named(event: InsightsEvent) -> set[str]:
    """The searches an event names: its ``queryID``, else (a conversion) each object's."""
    if event.query_id:
        return {event.query_id}
    if event.type == "conversion":
        return set(event.object_query_ids) - {""}
    return set()


def event_rows(d: Dialect, events: Sequence[InsightsEvent]) -> list[tuple[Any, ...]]:
    return [(e.at, d.day_at(e.at), e.handle, e.type, e.subtype, e.name, e.user_token,
             e.authenticated_user_token, d.json(e.object_ids), d.json(e.positions),
             e.query_id, d.json(e.filters), d.json(e.object_query_ids), e.revenue,
             e.currency, d.json(e.object_revenues)) for e in events]


def early_rows(d: Dialect, waiting: Sequence[tuple[str, InsightsEvent]]
               ) -> list[tuple[Any, ...]]:
    return [(name, e.at, d.day_at(e.at), e.handle, e.type, e.subtype, d.json(e.object_ids),
             d.json(e.positions), e.query_id, d.json(e.object_query_ids), e.revenue,
             e.currency, d.json(e.object_revenues)) for name, e in waiting]


_PLACES = {table: {name: i for i, name in enumerate(counters)}
           for table, (_, counters) in DAILY.items()}


class _Sums:
    """Counters to add, per table and key."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[tuple[Any, ...], list[float]]] = {t: {} for t in DAILY}

    def add(self, table: str, key: tuple[Any, ...], **counts: float) -> None:
        places = _PLACES[table]
        row = self.tables[table].get(key)
        if row is None:
            row = self.tables[table][key] = [0] * len(places)
        for name, n in counts.items():
            row[places[name]] += n

    def steps(self, d: Dialect) -> list[Step]:
        found = []
        for table, sums in self.tables.items():
            if not sums:
                continue
            keys = DAILY[table][0]
            kinds = [("day" if name == "day" else "json" if name in JSON_KEYS else "")
                     for name in keys]
            # in key order: writers sharing a database lock the rows they add to in the
            # same order, so that two of them never wait for each other
            rows = [tuple(d.day(v) if kind == "day" else d.json(list(v)) if kind else v
                          for kind, v in zip(kinds, key, strict=True)) + tuple(counts)
                    for key, counts in sorted(sums.items(), key=_order)]
            found.append((UPSERTS[table], rows))
        return found


def _order(item: tuple[tuple[Any, ...], list[float]]) -> tuple[str, ...]:
    return tuple(repr(part) for part in item[0])


def plan_events(d: Dialect, events: Sequence[InsightsEvent], searches: dict[str, Search],
                hit_states: dict[tuple[str, str], list[int]], *,
                early: Sequence[str] | None = None, today: date) -> list[Step]:
    """``events`` written, and what they did added to the rollups of the ``searches`` they
    name (``hit_states``: what each object of a search has had so far); those naming a
    search not in ``searches`` kept as early events too. Given ``early`` (early events,
    already kept: the search each waited for), only what they add is written. The blocks
    of days holding the searches added to are forgotten as added up (``invalidate``)."""
    sums = _Sums()
    touched: dict[tuple[str, str], Search] = {}
    waiting: list[tuple[str, InsightsEvent]] = []
    days: set[date] = set()
    for n, e in enumerate(events):
        own = searches.get(e.query_id or "")
        day = utc_day(e.at)
        if e.type == "click" and early is None:
            for p in e.positions:  # by the click's own day and handle
                sums.add("analytics_click_days", (e.handle, day, p, own.tags if own else ()),
                         clicks=1)
        elif e.type == "click" and own is not None and own.tags:
            for p in e.positions:  # counted under no tags when it came: now its search's
                sums.add("analytics_click_days", (e.handle, day, p, ()), clicks=-1)
                sums.add("analytics_click_days", (e.handle, day, p, own.tags), clicks=1)
        names = named(e) if early is None else {early[n]}
        for q in sorted(names):
            s = searches.get(q)
            if s is None:
                if early is None and e.type in ("click", "conversion"):
                    waiting.append((q, e))
                continue
            _apply(sums, e, s)
            days.add(s.day)
            for i, hit in enumerate(e.object_ids):
                object_q = e.query_id or (e.object_query_ids[i]
                                          if i < len(e.object_query_ids) else "")
                if object_q != q or hit not in s.hits:
                    continue
                state = hit_states.setdefault((q, hit), [0, 0, 0, 0])
                touched[(q, hit)] = s
                _apply_hit(sums, e, s, hit, state, _object_revenue(e, i))
    steps = [] if early is not None else [(INSERT_EVENT, event_rows(d, events))]
    if waiting:
        steps.append((INSERT_EARLY, early_rows(d, waiting)))
    steps += sums.steps(d)
    changed = sorted((s for s in searches.values() if s.changed), key=lambda s: s.query_id)
    if changed:
        steps.append((SET_STATE, [(*s.state, s.query_id) for s in changed]))
    if touched:
        steps.append((HIT_STATE, [(q, hit, d.day(s.day), *hit_states[(q, hit)])
                                  for (q, hit), s in sorted(touched.items())]))
    steps += [(statement, [tuple(params)]) for statement, params in invalidate(d, days, today)]
    return steps


def _kinds(e: InsightsEvent) -> list[int]:
    """Which of ``EVENT_STATE`` the event is: click, conversion, add-to-cart, purchase."""
    return [i for i, yes in enumerate((e.type == "click", e.type == "conversion",
                                       e.subtype == "addToCart", e.subtype == "purchase"))
            if yes]


_FIRST = ("clicked", "converted", "carted", "purchased")


def _counts(e: InsightsEvent, state: list[int]) -> dict[str, float]:
    """The counters ``e`` adds to a search's or an object's rollups, given ``state`` (its
    events so far, updated): one event of its kinds, and the first of each."""
    counts: dict[str, float] = {}
    for kind in _kinds(e):
        counts[EVENT_STATE[kind]] = 1
        if state[kind] == 0:
            counts[_FIRST[kind]] = 1
        state[kind] += 1
    return counts


def _purchase(sums: _Sums, e: InsightsEvent, s: Search, hit: str,
              revenue: float | None) -> None:
    if e.subtype == "purchase" and revenue is not None and e.currency:
        sums.add("analytics_revenue_days", (s.handle, s.day, s.query, hit, s.tags, e.currency),
                 revenue=revenue)


def _apply(sums: _Sums, e: InsightsEvent, s: Search) -> None:
    counts = _counts(e, s.state)
    s.changed = s.changed or bool(counts)
    if "clicked" in counts:
        counts["unclicked"] = -1
        counts["unclicked_hits_sum"] = -s.nb_hits
    if e.type == "click" and e.query_id == s.query_id:
        counts["position_sum"] = sum(e.positions)
        counts["positions"] = len(e.positions)
        for p in e.positions:
            name = f"range{click_range(p)}"
            counts[name] = counts.get(name, 0) + 1
    _purchase(sums, e, s, "", e.revenue)
    sums.add("analytics_query_days", (s.handle, s.day, s.query, s.tags), **counts)
    daily = {name: n for name, n in counts.items() if name in _PLACES["analytics_days"]}
    if daily:
        sums.add("analytics_days", (s.handle, s.day, s.tags), **daily)


def _object_revenue(e: InsightsEvent, i: int) -> float | None:
    if i < len(e.object_revenues) and e.object_revenues[i] is not None:
        return e.object_revenues[i]
    return e.revenue if len(e.object_ids) == 1 else None


def _apply_hit(sums: _Sums, e: InsightsEvent, s: Search, hit: str, state: list[int],
               revenue: float | None) -> None:
    sums.add("analytics_object_days", (s.handle, s.day, hit, s.tags), **_counts(e, state))
    _purchase(sums, e, s, hit, revenue)
