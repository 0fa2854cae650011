"""Every statement of the query log, written once for SQLite and PostgreSQL.

A statement is written with ``?`` placeholders and the few things the two databases spell
differently come from a ``Dialect``: how parameters are written, how a day is passed and
read back, how a JSON array column is expanded into rows, how a set of tags is matched,
how text is ordered. ``SqlAnalytics`` holds every read of the ``AnalyticsStore`` port over
two primitives an adapter gives (``_rows`` and its ``dialect``); the adapters keep only
their connections, transactions and migrations.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

import msgspec

from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import SearchRecord, utc_day
from searchport.domain.analytics.reports import (
    DayClicks,
    DayCount,
    DayPosition,
    DayUsers,
    EventCounts,
    FilterCombination,
    FilterCount,
    HitStats,
    KeyPosition,
    Revenue,
    SearchStats,
    TopSearch,
)
from searchport.domain.analytics.segments import EVERY_SEARCH, Segment

Params = list[Any]
_json = msgspec.json.Encoder()
_refinements = msgspec.json.Decoder(list[tuple[str, str, str]])


def json_text(value: object) -> str:
    return _json.encode(value).decode("utf-8")


class Dialect:
    """What SQLite and PostgreSQL spell differently (the subclasses below)."""

    name = ""
    text_order = ""  # appended to an ORDER BY on text: byte order on both

    def sql(self, statement: str) -> str:
        """``statement`` with this database's placeholders (``?`` as written)."""
        return statement

    def day(self, day: date) -> Any:
        return day

    def read_day(self, value: Any) -> date:
        return value if isinstance(value, date) else date.fromisoformat(value)

    def json(self, value: object) -> Any:
        return json_text(value)

    def elements(self, column: str, alias: str) -> str:
        """A FROM item: the elements of the JSON array ``column``, ``alias.value`` (text),
        with their places in the array (``place``)."""
        raise NotImplementedError

    def place(self, alias: str) -> str:
        """The place of an element of ``elements`` in its array, counted as each database
        counts it: compare places only to places."""
        raise NotImplementedError

    def outer_elements(self, column: str, alias: str) -> str:
        """``elements`` for a LEFT JOIN (its ON clause follows)."""
        return self.elements(column, alias)

    def array_length(self, column: str) -> str:
        return f"json_array_length({column})"

    def has_tags(self, column: str, tags: Sequence[str]) -> tuple[str, Params]:
        """A condition: the JSON array ``column`` holds every one of ``tags``."""
        raise NotImplementedError


class SqliteDialect(Dialect):
    name = "sqlite"

    def day(self, day: date) -> Any:
        return day.isoformat()

    def elements(self, column: str, alias: str) -> str:
        return f"json_each({column}) AS {alias}"

    def place(self, alias: str) -> str:
        return f"{alias}.key"

    def has_tags(self, column: str, tags: Sequence[str]) -> tuple[str, Params]:
        one = f"EXISTS (SELECT 1 FROM json_each({column}) AS tg WHERE tg.value = ?)"
        return "(" + " AND ".join([one] * len(tags)) + ")", list(tags)


class PostgresDialect(Dialect):
    name = "postgres"
    text_order = ' COLLATE "C"'

    def sql(self, statement: str) -> str:
        return statement.replace("%", "%%").replace("?", "%s")

    def json(self, value: object) -> Any:
        from psycopg.types.json import Jsonb  # the postgres extra, imported when used

        return Jsonb(value, dumps=json_text)

    def elements(self, column: str, alias: str) -> str:
        return f"jsonb_array_elements_text({column}) WITH ORDINALITY AS {alias}(value, idx)"

    def place(self, alias: str) -> str:
        return f"{alias}.idx"

    def outer_elements(self, column: str, alias: str) -> str:
        return "LATERAL " + self.elements(column, alias)

    def array_length(self, column: str) -> str:
        return f"jsonb_array_length({column})"

    def has_tags(self, column: str, tags: Sequence[str]) -> tuple[str, Params]:
        return f"{column} @> ?::jsonb", [json_text(list(tags))]


SQLITE = SqliteDialect()
POSTGRES = PostgresDialect()

# -- writes --------------------------------------------------------------------------------

SEARCH_COLUMNS = ("at", "day", "handle", "query", "nb_hits", "page", "refinements", "tags",
                  "user_token", "latency_ms", "query_id", "hits")
EVENT_COLUMNS = ("at", "day", "handle", "type", "subtype", "name", "user_token",
                 "authenticated_user_token", "object_ids", "positions", "query_id",
                 "filters", "object_query_ids", "revenue", "currency", "object_revenues")


def _insert(table: str, columns: Sequence[str]) -> str:
    return (f"INSERT INTO {table} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))})")


INSERT_SEARCH = _insert("analytics_searches", SEARCH_COLUMNS)
INSERT_EVENT = _insert("analytics_events", EVENT_COLUMNS)
INSERT_SALT = ("INSERT INTO analytics_day_salts (day, salt) VALUES (?, ?) "
               "ON CONFLICT (day) DO NOTHING")
FORGET_SALTS = "DELETE FROM analytics_day_salts WHERE day < ?"
READ_SALT = "SELECT salt FROM analytics_day_salts WHERE day = ?"
PURGE = ("DELETE FROM analytics_searches WHERE day < ?",
         "DELETE FROM analytics_events WHERE day < ?")


def search_rows(d: Dialect, records: Sequence[SearchRecord]) -> list[tuple[Any, ...]]:
    return [(r.at, d.day(utc_day(r.at)), r.handle, r.query, r.nb_hits, r.page,
             d.json(r.refinements), d.json(r.tags), r.user_token, r.latency_ms, r.query_id,
             d.json(r.hits)) for r in records]


def event_rows(d: Dialect, events: Sequence[InsightsEvent]) -> list[tuple[Any, ...]]:
    return [(e.at, d.day(utc_day(e.at)), e.handle, e.type, e.subtype, e.name, e.user_token,
             e.authenticated_user_token, d.json(e.object_ids), d.json(e.positions),
             e.query_id, d.json(e.filters), d.json(e.object_query_ids), e.revenue,
             e.currency, d.json(e.object_revenues)) for e in events]


# -- reads ---------------------------------------------------------------------------------

class Scope:
    """The searches a read counts: one handle, the days from ``start`` to ``end``, the
    searches of one ``segment`` (``tags``), of one query (``search``), and how to say it
    on ``d`` of the searches table under ``alias``."""

    def __init__(self, d: Dialect, handle: str, start: date, end: date,
                 segment: Segment = EVERY_SEARCH, search: str | None = None,
                 alias: str = "s") -> None:
        self.d, self.handle, self.start, self.end = d, handle, start, end
        self.segment, self.search = segment, search
        where = [f"{alias}.handle = ?", f"{alias}.day BETWEEN ? AND ?"]
        params: Params = [handle, d.day(start), d.day(end)]
        if search is not None:
            where.append(f"{alias}.query = ?")
            params.append(search)
        if segment:
            alternatives = []
            for tags in segment:
                sql, more = d.has_tags(f"{alias}.tags", tags)
                alternatives.append(sql)
                params.extend(more)
            where.append("(" + " OR ".join(alternatives) + ")")
        self.where = " AND ".join(where)
        self.params = params

    def events_since(self) -> Any:
        """Events are read from the day before the period (clocks of several instances)."""
        return self.d.day(self.start - timedelta(days=1))


def _named_events(d: Dialect) -> str:
    """Each click or conversion once per search it names (``q``): its ``queryID``, or (a
    conversion without one) each object's. A ``queryID`` names one search whatever the
    event's ``index``; events are read from the day before the period on."""
    return f"""
        SELECT DISTINCT e.id, e.type, e.subtype, coalesce(e.query_id, j.value) AS q,
               e.revenue, e.currency
        FROM analytics_events e
        LEFT JOIN {d.outer_elements('e.object_query_ids', 'j')} ON e.query_id IS NULL
        WHERE e.day >= ? AND e.type IN ('click', 'conversion')"""


def _per_search(d: Dialect) -> str:
    """Per ``queryID`` named by events: the events of each kind."""
    return f"""
        SELECT q,
               count(*) FILTER (WHERE type = 'click') AS clicks,
               count(*) FILTER (WHERE type = 'conversion') AS conversions,
               count(*) FILTER (WHERE subtype = 'addToCart') AS carts,
               count(*) FILTER (WHERE subtype = 'purchase') AS purchases
        FROM ({_named_events(d)}) AS named
        WHERE q IS NOT NULL AND q <> '' GROUP BY q"""


_EVENT_FIGURES = """
    count(*) FILTER (WHERE s.query_id IS NOT NULL),
    count(c.q) FILTER (WHERE c.clicks > 0), coalesce(sum(c.clicks), 0),
    count(c.q) FILTER (WHERE c.conversions > 0), coalesce(sum(c.conversions), 0),
    count(c.q) FILTER (WHERE c.carts > 0), coalesce(sum(c.carts), 0),
    count(c.q) FILTER (WHERE c.purchases > 0), coalesce(sum(c.purchases), 0)"""


def _counts(row: Sequence[Any], positions: tuple[int, int] = (0, 0)) -> EventCounts:
    (tracked, clicked, clicks, converted, conversions, carted, carts, purchased,
     purchases) = (int(v) for v in row)
    return EventCounts(tracked=tracked, clicked=clicked, clicks=clicks, converted=converted,
                       conversions=conversions, carted=carted, add_to_carts=carts,
                       purchased=purchased, purchases=purchases, positions=positions[0],
                       clicked_positions=positions[1])


_SEARCH_ORDER = {
    "searchCount": "count(*)",
    "clickThroughRate": "count(c.q) FILTER (WHERE c.clicks > 0) * 1.0 "
                        "/ nullif(count(*) FILTER (WHERE s.query_id IS NOT NULL), 0)",
    "conversionRate": "count(c.q) FILTER (WHERE c.conversions > 0) * 1.0 "
                      "/ nullif(count(*) FILTER (WHERE s.query_id IS NOT NULL), 0)",
    "averageClickPosition": "max(p.total) * 1.0 / nullif(max(p.n), 0)",
}


class SqlAnalytics:
    """The reads of ``AnalyticsStore``, over ``_rows`` (one statement's rows, with
    ``?`` placeholders) and ``dialect``."""

    dialect: Dialect

    async def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _scope(self, handle: str, start: date, end: date, segment: Segment = EVERY_SEARCH,
               search: str | None = None, alias: str = "s") -> Scope:
        return Scope(self.dialect, handle, start, end, segment, search, alias)

    async def searches_by_day(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayCount]:
        scope = self._scope(handle, start, end, segment)
        rows = await self._rows(
            "SELECT s.day, count(*), count(*) FILTER (WHERE s.nb_hits = 0) "
            f"FROM analytics_searches s WHERE {scope.where} GROUP BY s.day ORDER BY s.day",
            scope.params)
        return [DayCount(self.dialect.read_day(day), count, none) for day, count, none in rows]

    async def users(self, handle: str, start: date, end: date, *,
                    segment: Segment = EVERY_SEARCH) -> tuple[int, list[DayUsers]]:
        scope = self._scope(handle, start, end, segment)
        total = await self._rows("SELECT count(DISTINCT s.user_token) FROM analytics_searches "
                                 f"s WHERE {scope.where}", scope.params)
        days = await self._rows(
            "SELECT s.day, count(DISTINCT s.user_token) FROM analytics_searches s "
            f"WHERE {scope.where} GROUP BY s.day ORDER BY s.day", scope.params)
        return int(total[0][0]), [DayUsers(self.dialect.read_day(d), n) for d, n in days]

    async def top_searches(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, no_results: bool = False,
                           no_clicks: bool = False,
                           segment: Segment = EVERY_SEARCH) -> list[TopSearch]:
        scope = self._scope(handle, start, end, segment)
        where = scope.where + (" AND s.nb_hits = 0" if no_results else "")
        if no_clicks:
            where += (" AND s.query_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
                      "analytics_events e WHERE e.query_id = s.query_id AND e.type = 'click')")
        rows = await self._rows(
            "SELECT s.query, count(*) AS n, CAST(round(avg(s.nb_hits)) AS BIGINT), "
            "count(*) FILTER (WHERE s.refinements <> '[]') "
            f"FROM analytics_searches s WHERE {where} GROUP BY s.query "
            f"ORDER BY n DESC, s.query{self.dialect.text_order} LIMIT ? OFFSET ?",
            [*scope.params, limit, offset])
        return [TopSearch(q, n, int(hits), int(filtered)) for q, n, hits, filtered in rows]

    async def _events_by_day(self, scope: Scope, kind: str) -> list[DayClicks]:
        d = self.dialect
        rows = await self._rows(
            f"SELECT s.day, {_EVENT_FIGURES} FROM analytics_searches s "
            f"LEFT JOIN ({_per_search(d)}) AS c ON c.q = s.query_id "
            f"WHERE {scope.where} AND s.query_id IS NOT NULL GROUP BY s.day ORDER BY s.day",
            [scope.events_since(), *scope.params])
        found = []
        for day, *figures in rows:
            counts = _counts(figures)
            if kind == "click":
                found.append(DayClicks(d.read_day(day), counts.tracked, counts.clicked,
                                       counts.clicks))
            else:
                found.append(DayClicks(d.read_day(day), counts.tracked, counts.converted,
                                       counts.conversions))
        return found

    async def clicks_by_day(self, handle: str, start: date, end: date, *,
                            segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        return await self._events_by_day(self._scope(handle, start, end, segment), "click")

    async def conversions_by_day(self, handle: str, start: date, end: date, *,
                                 segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        return await self._events_by_day(self._scope(handle, start, end, segment),
                                         "conversion")

    async def click_positions(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayPosition]:
        d = self.dialect
        params: Params = [handle, d.day(start), d.day(end)]
        where = "e.handle = ? AND e.type = 'click' AND e.day BETWEEN ? AND ?"
        if segment:
            scope = self._scope(handle, start - timedelta(days=1), end, segment)
            where += (" AND e.query_id IN (SELECT s.query_id FROM analytics_searches s "
                      f"WHERE {scope.where} AND s.query_id IS NOT NULL)")
            params += scope.params
        rows = await self._rows(
            f"SELECT e.day, CAST(j.value AS INTEGER) AS p, count(*) "
            f"FROM analytics_events e, {d.elements('e.positions', 'j')} "
            f"WHERE {where} GROUP BY e.day, p ORDER BY e.day, p", params)
        return [DayPosition(d.read_day(day), int(p), n) for day, p, n in rows]

    async def search_stats(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, segment: Segment = EVERY_SEARCH,
                           with_events: bool = False, order_by: str = "searchCount",
                           descending: bool = False) -> list[SearchStats]:
        """The queries of the period, ordered by ``order_by`` (one of Algolia's
        ``searchCount``, ``clickThroughRate``, ``conversionRate``,
        ``averageClickPosition``: the others need ``with_events``), null figures last,
        then by query."""
        d = self.dialect
        scope = self._scope(handle, start, end, segment)
        direction = "DESC" if descending else "ASC"
        order = f"{_SEARCH_ORDER[order_by]} {direction}"
        if order_by != "searchCount":
            order = f"{_SEARCH_ORDER[order_by]} IS NULL, {order}"
        head = "SELECT s.query, count(*), CAST(round(avg(s.nb_hits)) AS BIGINT)"
        if not with_events:
            rows = await self._rows(
                f"{head} FROM analytics_searches s WHERE {scope.where} GROUP BY s.query "
                f"ORDER BY {order}, s.query{d.text_order} LIMIT ? OFFSET ?",
                [*scope.params, limit, offset])
            return [SearchStats(query=q, count=n, nb_hits=int(h)) for q, n, h in rows]
        positions = self._positions_by_query(scope)
        rows = await self._rows(
            f"{head}, {_EVENT_FIGURES}, max(p.total), max(p.n) FROM analytics_searches s "
            f"LEFT JOIN ({_per_search(d)}) AS c ON c.q = s.query_id "
            f"LEFT JOIN ({positions[0]}) AS p ON p.query = s.query "
            f"WHERE {scope.where} GROUP BY s.query "
            f"ORDER BY {order}, s.query{d.text_order} LIMIT ? OFFSET ?",
            [scope.events_since(), *positions[1], *scope.params, limit, offset])
        return [SearchStats(query=q, count=n, nb_hits=int(h),
                            events=_counts(figures, (int(total or 0), int(clicked or 0))))
                for q, n, h, *figures, total, clicked in rows]

    def _positions_by_query(self, scope: Scope, key: str = "query") -> tuple[str, Params]:
        """Per query of ``scope``'s tracked searches: the sum of the clicked positions
        (``total``) and how many (``n``)."""
        d = self.dialect
        inner = self._scope(scope.handle, scope.start, scope.end, scope.segment,
                            scope.search, alias="t")
        return (f"""
            SELECT t.{key} AS query, sum(CAST(j.value AS INTEGER)) AS total, count(*) AS n
            FROM analytics_events e, {d.elements('e.positions', 'j')}, analytics_searches t
            WHERE e.day >= ? AND e.type = 'click'
              AND t.query_id = e.query_id AND {inner.where}
            GROUP BY t.{key}""", [scope.events_since(), *inner.params])

    async def query_positions(self, handle: str, start: date, end: date,
                              queries: Sequence[str], *,
                              segment: Segment = EVERY_SEARCH) -> list[KeyPosition]:
        """The clicked positions after the tracked searches of ``queries``, counted per
        query and position."""
        if not queries:
            return []
        d = self.dialect
        scope = self._scope(handle, start, end, segment)
        rows = await self._rows(
            f"SELECT s.query, CAST(j.value AS INTEGER) AS p, count(*) "
            f"FROM analytics_searches s, analytics_events e, {d.elements('e.positions', 'j')} "
            f"WHERE {scope.where} AND s.query IN ({', '.join('?' * len(queries))}) "
            "AND e.query_id = s.query_id AND e.type = 'click' AND e.day >= ? "
            "GROUP BY s.query, p",
            [*scope.params, *queries, scope.events_since()])
        return [KeyPosition(q, int(p), n) for q, p, n in rows]

    async def query_revenue(self, handle: str, start: date, end: date,
                            queries: Sequence[str], *,
                            segment: Segment = EVERY_SEARCH) -> list[Revenue]:
        """The revenue of the purchases naming the tracked searches of ``queries``, per
        query and currency."""
        if not queries:
            return []
        d = self.dialect
        scope = self._scope(handle, start, end, segment)
        rows = await self._rows(
            f"SELECT s.query, c.currency, sum(c.revenue) FROM analytics_searches s "
            f"JOIN ({_named_events(d)}) AS c ON c.q = s.query_id "
            f"WHERE {scope.where} AND s.query IN ({', '.join('?' * len(queries))}) "
            "AND c.subtype = 'purchase' AND c.revenue IS NOT NULL AND c.currency IS NOT NULL "
            "GROUP BY s.query, c.currency",
            [scope.events_since(), *scope.params, *queries])
        return [Revenue(q, currency, float(total)) for q, currency, total in rows]

    async def hit_stats(self, handle: str, start: date, end: date, *, limit: int,
                        offset: int = 0, segment: Segment = EVERY_SEARCH,
                        search: str | None = None,
                        with_events: bool = False) -> list[HitStats]:
        """The objects the searches of the period returned most often (most first, then
        by objectID), with (``with_events``) what the events after their tracked searches
        did to each."""
        d = self.dialect
        scope = self._scope(handle, start, end, segment, search)
        hits = d.elements("s.hits", "h")
        if not with_events:
            rows = await self._rows(
                f"SELECT h.value, count(*) AS n FROM analytics_searches s, {hits} "
                f"WHERE {scope.where} GROUP BY h.value "
                f"ORDER BY n DESC, h.value{d.text_order} LIMIT ? OFFSET ?",
                [*scope.params, limit, offset])
            return [HitStats(hit=hit, count=n) for hit, n in rows]
        rows = await self._rows(f"""
            SELECT h.value, count(*) AS n, {_EVENT_FIGURES}
            FROM analytics_searches s
            CROSS JOIN {hits}
            LEFT JOIN ({self._per_search_hit()}) AS c
              ON c.q = s.query_id AND c.hit = h.value
            WHERE {scope.where} GROUP BY h.value
            ORDER BY n DESC, h.value{d.text_order} LIMIT ? OFFSET ?""",
            [scope.events_since(), *scope.params, limit, offset])
        return [HitStats(hit=hit, count=n, events=_counts(figures))
                for hit, n, *figures in rows]

    def _hit_events(self) -> str:
        """Each click or conversion once per object it names (``hit``) and the search it
        names for that object (``q``: its ``queryID``, else the object's own), with the
        object's revenue (``objectData``), else the event's when it names one object."""
        d = self.dialect
        return f"""
            SELECT e.id, e.type, e.subtype, o.value AS hit,
                   coalesce(e.query_id, j.value) AS q,
                   coalesce(CAST(r.value AS REAL),
                            CASE WHEN {d.array_length('e.object_ids')} = 1
                                 THEN e.revenue END) AS revenue,
                   e.currency
            FROM analytics_events e
            CROSS JOIN {d.outer_elements('e.object_ids', 'o')}
            LEFT JOIN {d.outer_elements('e.object_query_ids', 'j')}
              ON e.query_id IS NULL AND {d.place('j')} = {d.place('o')}
            LEFT JOIN {d.outer_elements('e.object_revenues', 'r')}
              ON {d.place('r')} = {d.place('o')}
            WHERE e.day >= ? AND e.type IN ('click', 'conversion')"""

    def _per_search_hit(self) -> str:
        return f"""
            SELECT q, hit,
                   count(*) FILTER (WHERE type = 'click') AS clicks,
                   count(*) FILTER (WHERE type = 'conversion') AS conversions,
                   count(*) FILTER (WHERE subtype = 'addToCart') AS carts,
                   count(*) FILTER (WHERE subtype = 'purchase') AS purchases
            FROM ({self._hit_events()}) AS named
            WHERE q IS NOT NULL AND q <> '' GROUP BY q, hit"""

    async def hit_revenue(self, handle: str, start: date, end: date, hits: Sequence[str], *,
                          segment: Segment = EVERY_SEARCH,
                          search: str | None = None) -> list[Revenue]:
        """The revenue of the purchases of ``hits`` after tracked searches that returned
        them, per object and currency."""
        if not hits:
            return []
        d = self.dialect
        scope = self._scope(handle, start, end, segment, search)
        rows = await self._rows(f"""
            SELECT c.hit, c.currency, sum(c.revenue)
            FROM analytics_searches s
            CROSS JOIN {d.elements('s.hits', 'h')}
            JOIN ({self._hit_events()}) AS c ON c.q = s.query_id AND c.hit = h.value
            WHERE {scope.where} AND h.value IN ({', '.join('?' * len(hits))})
              AND c.subtype = 'purchase' AND c.revenue IS NOT NULL
              AND c.currency IS NOT NULL
            GROUP BY c.hit, c.currency""",
            [scope.events_since(), *scope.params, *hits])
        return [Revenue(hit, currency, float(total)) for hit, currency, total in rows]

    async def filter_counts(self, handle: str, start: date, end: date, *, limit: int,
                            offset: int = 0, segment: Segment = EVERY_SEARCH,
                            search: str | None = None,
                            attribute: str | None = None) -> list[FilterCount]:
        """The refinements the searches applied, counted per attribute (or, given
        ``attribute``, per value of it with its operator): most first, then by name."""
        d = self.dialect
        scope = self._scope(handle, start, end, segment, search)
        refinements = d.elements("s.refinements", "f")
        attr, operator, value = (_item(d, "f.value", i) for i in range(3))
        if attribute is None:
            rows = await self._rows(
                f"SELECT {attr} AS a, count(*) AS n FROM analytics_searches s, {refinements} "
                f"WHERE {scope.where} GROUP BY {attr} ORDER BY n DESC, {attr}{d.text_order} "
                "LIMIT ? OFFSET ?", [*scope.params, limit, offset])
            return [FilterCount(a, "", "", n) for a, n in rows]
        rows = await self._rows(
            f"SELECT {operator} AS o, {value} AS v, count(*) AS n "
            f"FROM analytics_searches s, {refinements} WHERE {scope.where} AND {attr} = ? "
            f"GROUP BY {operator}, {value} "
            f"ORDER BY n DESC, {value}{d.text_order}, {operator}{d.text_order} "
            "LIMIT ? OFFSET ?", [*scope.params, attribute, limit, offset])
        return [FilterCount(attribute, o, v, n) for o, v, n in rows]

    async def no_result_filters(self, handle: str, start: date, end: date, *, limit: int,
                                offset: int = 0, segment: Segment = EVERY_SEARCH,
                                search: str | None = None) -> list[FilterCombination]:
        """The combinations of refinements of the searches that found nothing, most
        frequent first."""
        d = self.dialect
        scope = self._scope(handle, start, end, segment, search)
        text = "CAST(s.refinements AS TEXT)"
        rows = await self._rows(
            f"SELECT {text} AS r, count(*) AS n FROM analytics_searches s "
            f"WHERE {scope.where} AND s.nb_hits = 0 AND s.refinements <> '[]' "
            f"GROUP BY {text} ORDER BY n DESC, {text}{d.text_order} LIMIT ? OFFSET ?",
            [*scope.params, limit, offset])
        return [FilterCombination(tuple(_refinements.decode(r)), n) for r, n in rows]

    async def last_update(self, handle: str) -> float | None:
        rows = await self._rows("SELECT max(at) FROM analytics_searches WHERE handle = ?",
                                [handle])
        return None if rows[0][0] is None else float(rows[0][0])


def _item(d: Dialect, column: str, index: int) -> str:
    """Element ``index`` (from 0) of the JSON array held as text in ``column``."""
    if d.name == "sqlite":
        return f"json_extract({column}, '$[{index}]')"
    return f"(CAST({column} AS JSONB) ->> {index})"

