"""The reads of the ``AnalyticsStore`` port, written once for SQLite and PostgreSQL over
a store's ``_rows`` and ``dialect``: from the daily rollups (``rollups.py``, ``users.py``);
the rankings also from the blocks of days and running totals (``_spanned``), one query's
objects from its objects per day and the log (``_query_hits``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

import msgspec

from searchport.adapters.analytics import totals, users
from searchport.adapters.analytics.dialect import Dialect, Params, marks
from searchport.adapters.analytics.rollups import BLOCKS, SPANNED, SPANS, cover
from searchport.adapters.analytics.schema import HIT_COUNTERS, QUERY_COUNTERS
from searchport.domain.analytics.reports import (
    DayClicks,
    DayCount,
    DayPosition,
    DayUsers,
    EventCounts,
    FilterCombination,
    FilterCount,
    HitStats,
    PopularQuery,
    Revenue,
    SearchStats,
    TopSearch,
)
from searchport.domain.analytics.segments import EVERY_SEARCH, Segment

_refinements = msgspec.json.Decoder(list[tuple[str, str, str]])
_BUILT_BETWEEN = f"SELECT span, day FROM {BLOCKS} WHERE day BETWEEN ? AND ?"


class Scope:
    """The searches a read counts (one handle, the days from ``start`` to ``end``, one
    ``segment``, one query ``search``) as a condition on a table under ``alias``; given
    ``sets`` (the segment's sets of tags, as the database gave them), the segment is said
    as one of them, compared whole."""

    def __init__(self, d: Dialect, handle: str, start: date, end: date,
                 segment: Segment = EVERY_SEARCH, search: str | None = None,
                 alias: str = "q", sets: Sequence[Any] | None = None) -> None:
        self.handle, self.start, self.end = handle, start, end
        self.segment, self.search = segment, search
        where: list[str] = []
        params: Params = []
        if search is not None:
            where.append(f"{alias}.query = ?")
            params.append(search)
        if segment and sets is not None:  # the sets of tags in the segment, given
            where.append(f"{alias}.tags IN ({marks(len(sets))})" if sets else "1 = 0")
            params.extend(sets)
        elif segment:
            sql, more = d.segment(f"{alias}.tags", segment)
            where.append(sql)
            params.extend(more)
        # the conditions but the handle's and the days'
        self.filters, self.filter_params = where, params
        self.where = " AND ".join([f"{alias}.handle = ?", f"{alias}.day BETWEEN ? AND ?",
                                   *where])
        self.params = [handle, d.day(start), d.day(end), *params]


# the figures of a set of tracked searches (of objects shown), summed over rollup rows ``q``
_HIT_FIGURES = ", ".join(f"sum(q.{c})" for c in HIT_COUNTERS[1:])
_EVENT_FIGURES = ", ".join((_HIT_FIGURES, *(
    f"sum(q.{c})" for c in QUERY_COUNTERS[QUERY_COUNTERS.index("position_sum"):])))
_COUNTS = ("tracked", "clicked", "clicks", "converted", "conversions", "carted",
           "add_to_carts", "purchased", "purchases", "positions", "clicked_positions")


def _counts(row: Sequence[Any]) -> EventCounts:
    values = [int(v or 0) for v in row]
    return EventCounts(**dict(zip(_COUNTS, values, strict=False)), ranges=tuple(values[11:]))


_SEARCH_ORDER = {
    "searchCount": "sum(q.searches)",
    "clickThroughRate": "sum(q.clicked) * 1.0 / nullif(sum(q.tracked), 0)",
    "conversionRate": "sum(q.converted) * 1.0 / nullif(sum(q.tracked), 0)",
    "averageClickPosition": "sum(q.position_sum) * 1.0 / nullif(sum(q.positions), 0)",
}
_AVERAGE_HITS = "CAST(round(sum(q.{total}) * 1.0 / sum(q.{count})) AS BIGINT)"
_ORDER_SUMS = {"searchCount": (), "clickThroughRate": ("clicked", "tracked"),
               "conversionRate": ("converted", "tracked"),
               "averageClickPosition": ("position_sum", "positions")}


class SqlReads:
    """The reads of ``AnalyticsStore``, over ``_rows`` (one statement's rows, with
    ``?`` placeholders) and ``dialect``."""

    dialect: Dialect

    async def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    async def _spanned(self, days: str, scope: Scope, counters: Sequence[str],
                       only: str = "", only_params: Sequence[Any] = ()
                       ) -> tuple[str, str, Params]:
        """A FROM item (alias ``q``), its WHERE condition and their parameters, giving the
        rows of the table ``days`` (``analytics_query_days`` or ``analytics_object_days``)
        that ``scope`` counts, with their key and ``counters``: the running totals where
        they read fewer rows (those at the day before a chain's part of the period
        negated), whole blocks of days where added up (``cover``), days elsewhere. A key
        may come with sums of zero (searched before the period only): the caller keeps
        those with searches (``HAVING``). ``only``: a condition more on the rows
        (unqualified names, true of a row of totals whenever of the totals before it),
        with ``only_params``."""
        d = self.dialect
        pieces: list[tuple[date, int]] = []
        ranges = [(scope.start, scope.end)]
        table, kind, own, summed = totals.KINDS[days]
        if set(counters) <= set(summed) and scope.end > scope.start:
            found = await self._rows(totals.DAYS_BETWEEN,
                                     [kind, d.day(totals.chain_start(scope.start)),
                                      d.day(scope.end)])
            pieces, ranges = totals.plan_totals(
                scope.start, scope.end,
                {d.read_day(day): (int(rows), int(own)) for day, rows, own in found})
        blocks: list[tuple[int, date, date]] = []
        if any((last - first).days + 1 >= min(SPANS) for first, last in ranges):
            built = await self._rows(_BUILT_BETWEEN, [d.day(ranges[0][0]),
                                                      d.day(ranges[-1][1])])
            done = {(int(span), d.read_day(day)) for span, day in built}
            for first, last in ranges:
                blocks += cover(first, last, done)
        else:
            blocks = [(1, first, last) for first, last in ranges]
        more = f" AND {only}" if only else ""
        if not pieces and len(blocks) == 1 and blocks[0][0] == 1:
            scope = await self._in_sets(Scope(d, scope.handle, blocks[0][1], blocks[0][2],
                                              scope.segment, scope.search), "q")
            return days, scope.where + more, [*scope.params, *only_params]
        inner = await self._in_sets(scope, "r")
        more += "".join(f" AND {f}" for f in inner.filters)
        key = f"r.{own}"
        columns = ", ".join((key, *(f"r.{c}" for c in counters)))
        parts, params = [], []
        for day, sign in pieces:
            signed = columns if sign > 0 else ", ".join(
                (key, *(f"-r.{c}" for c in counters)))
            parts.append(f"SELECT {signed} FROM {table} r "
                         f"WHERE r.day = ? AND r.handle = ?{more}")
            params += [d.day(day), scope.handle, *only_params, *inner.filter_params]
        for span, first, last in blocks:
            # given keys (``only_params``), the days named one by one: each key of each
            # day (block) is then looked up by the index, not read among the day's rows
            named = [first + timedelta(days=n) for n in range(0, (last - first).days + 1, span)]
            on = (f"r.day IN ({marks(len(named))})", [d.day(n) for n in named])
            if not only_params or len(named) > 64:
                on = ("r.day BETWEEN ? AND ?", [d.day(first), d.day(last)])
            if span == 1:
                parts.append(f"SELECT {columns} FROM {days} r "
                             f"WHERE r.handle = ? AND {on[0]}{more}")
                params += [scope.handle, *on[1]]
            else:
                parts.append(f"SELECT {columns} FROM {SPANNED[days]} r WHERE r.handle = ? "
                             f"AND r.span = ? AND {on[0]}{more}")
                params += [scope.handle, span, *on[1]]
            params += [*only_params, *inner.filter_params]
        return "(" + " UNION ALL ".join(parts) + ")", "true", params

    async def _in_sets(self, scope: Scope, alias: str) -> Scope:
        """``scope`` under ``alias``, its segment said by the few sets of tags of its period
        that it holds (from ``analytics_days``), compared whole: not looked into the tags
        of every row read."""
        d = self.dialect
        if not scope.segment:
            return Scope(d, scope.handle, scope.start, scope.end, search=scope.search,
                         alias=alias)
        days = Scope(d, scope.handle, scope.start, scope.end, scope.segment)
        rows = await self._rows(
            f"SELECT DISTINCT q.tags FROM analytics_days q WHERE {days.where}", days.params)
        return Scope(d, scope.handle, scope.start, scope.end, scope.segment, scope.search,
                     alias, [d.stored(tags) for tags, in rows])

    def _scope(self, handle: str, start: date, end: date, segment: Segment = EVERY_SEARCH,
               search: str | None = None, alias: str = "q") -> Scope:
        return Scope(self.dialect, handle, start, end, segment, search, alias)

    async def _per_day(self, table: str, columns: str, scope: Scope, more: str = "",
                       by: str = "") -> list[tuple[Any, ...]]:
        """The day, then ``columns``, of the rows of ``table`` that ``scope`` counts, per
        day (and ``by``), in that order."""
        rows = await self._rows(f"SELECT q.day, {columns} FROM {table} q WHERE {scope.where}"
                                f"{more} GROUP BY q.day{by} ORDER BY q.day{by}", scope.params)
        return [(self.dialect.read_day(day), *map(int, rest)) for day, *rest in rows]

    async def searches_by_day(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayCount]:
        return [DayCount(*row) for row in await self._per_day(
            "analytics_days", "sum(q.searches), sum(q.no_results)",
            self._scope(handle, start, end, segment))]

    async def users(self, handle: str, start: date, end: date, *,
                    segment: Segment = EVERY_SEARCH) -> tuple[int, list[DayUsers]]:
        return await users.users(self._rows, self.dialect, handle, start, end, segment)

    async def top_searches(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, no_results: bool = False,
                           no_clicks: bool = False,
                           segment: Segment = EVERY_SEARCH) -> list[TopSearch]:
        scope = self._scope(handle, start, end, segment)
        count, total, refined = "searches", "hits_sum", "filtered"
        if no_results:
            count, total, refined = "no_results", "no_results", "no_results_filtered"
        elif no_clicks:
            count, total, refined = "unclicked", "unclicked_hits_sum", ""
        filtered = f"sum(q.{refined})" if refined else "0"
        average = "0" if no_results else _AVERAGE_HITS.format(total=total, count=count)
        source, where, params = await self._spanned(
            "analytics_query_days", scope,
            [*dict.fromkeys((count, total)), *((refined,) if refined else ())],
            f"{count} > 0")
        rows = await self._rows(
            f"SELECT q.query, sum(q.{count}) AS n, {average}, {filtered} "
            f"FROM {source} q WHERE {where} GROUP BY q.query HAVING sum(q.{count}) > 0 "
            f"ORDER BY n DESC, q.query{self.dialect.text_order} "
            "LIMIT ? OFFSET ?", [*params, limit, offset])
        return [TopSearch(q, int(n), int(hits), int(f)) for q, n, hits, f in rows]

    async def popular_queries(self, handle: str, start: date, end: date, *,
                              min_count: int, limit: int) -> list[PopularQuery]:
        scope = self._scope(handle, start, end)
        average = _AVERAGE_HITS.format(total="hits_sum", count="searches")
        source, where, params = await self._spanned("analytics_query_days", scope,
                                              ("searches", "hits_sum"), "query <> ''")
        rows = await self._rows(
            f"SELECT q.query, sum(q.searches) AS n, {average} FROM {source} q "
            f"WHERE {where} GROUP BY q.query "
            "HAVING sum(q.searches) >= ? AND sum(q.searches) > 0 "
            f"ORDER BY n DESC, q.query{self.dialect.text_order} "
            "LIMIT ?", [*params, min_count, limit])
        return [PopularQuery(q, int(n), int(hits)) for q, n, hits in rows]

    async def _tracked_by_day(self, scope: Scope, done: str, events: str) -> list[DayClicks]:
        return [DayClicks(*row) for row in await self._per_day(
            "analytics_days", f"sum(q.tracked), sum(q.{done}), sum(q.{events})", scope,
            " AND q.tracked > 0")]

    async def clicks_by_day(self, handle: str, start: date, end: date, *,
                            segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        return await self._tracked_by_day(self._scope(handle, start, end, segment),
                                          "clicked", "clicks")

    async def conversions_by_day(self, handle: str, start: date, end: date, *,
                                 segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        return await self._tracked_by_day(self._scope(handle, start, end, segment),
                                          "converted", "conversions")

    async def click_positions(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayPosition]:
        return [DayPosition(*row) for row in await self._per_day(
            "analytics_click_days", "q.position, sum(q.clicks)",
            self._scope(handle, start, end, segment), by=", q.position")]

    async def search_stats(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, segment: Segment = EVERY_SEARCH,
                           with_events: bool = False, order_by: str = "searchCount",
                           descending: bool = False) -> list[SearchStats]:
        d = self.dialect
        scope = self._scope(handle, start, end, segment)
        order = f"{_SEARCH_ORDER[order_by]} {'DESC' if descending else 'ASC'}"
        if order_by != "searchCount":
            order = f"{_SEARCH_ORDER[order_by]} IS NULL, {order}"
        order += f", q.query{d.text_order}"
        average = _AVERAGE_HITS.format(total="hits_sum", count="searches")
        if not with_events:
            source, where, params = await self._spanned("analytics_query_days", scope,
                                                  ("searches", "hits_sum"))
            rows = await self._rows(
                f"SELECT q.query, sum(q.searches), {average} FROM {source} q "
                f"WHERE {where} GROUP BY q.query HAVING sum(q.searches) > 0 "
                f"ORDER BY {order} LIMIT ? OFFSET ?",
                [*params, limit, offset])
            return [SearchStats(query=q, count=int(n), nb_hits=int(h)) for q, n, h in rows]
        # the page's queries first, by the sums their order needs; then their figures
        source, where, params = await self._spanned(
            "analytics_query_days", scope, ("searches", *_ORDER_SUMS[order_by]))
        page = [query for query, in await self._rows(
            f"SELECT q.query FROM {source} q WHERE {where} GROUP BY q.query "
            f"HAVING sum(q.searches) > 0 ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, limit, offset])]
        if not page:
            return []
        # the page's queries named: each read by its key, wherever its rows are
        source, where, params = await self._spanned(
            "analytics_query_days", scope, QUERY_COUNTERS,
            f"query IN ({marks(len(page))})", page)
        rows = await self._rows(
            f"SELECT q.query, sum(q.searches), {average}, {_EVENT_FIGURES} "
            f"FROM {source} q WHERE {where} GROUP BY q.query ORDER BY {order}", params)
        return [SearchStats(query=q, count=int(n), nb_hits=int(h), events=_counts(rest))
                for q, n, h, *rest in rows]

    async def query_revenue(self, handle: str, start: date, end: date,
                            queries: Sequence[str], *,
                            segment: Segment = EVERY_SEARCH) -> list[Revenue]:
        return await self._revenue("query", self._scope(handle, start, end, segment),
                                   queries, " AND q.hit = ''")

    async def _revenue(self, key: str, scope: Scope, keys: Sequence[str],
                       more: str = "") -> list[Revenue]:
        if not keys:
            return []
        rows = await self._rows(
            f"SELECT q.{key}, q.currency, sum(q.revenue) FROM analytics_revenue_days q "
            f"WHERE {scope.where}{more} AND q.{key} IN ({marks(len(keys))}) "
            f"GROUP BY q.{key}, q.currency", [*scope.params, *keys])
        return [Revenue(k, currency, float(total)) for k, currency, total in rows]

    async def hit_stats(self, handle: str, start: date, end: date, *, limit: int,
                        offset: int = 0, segment: Segment = EVERY_SEARCH,
                        search: str | None = None,
                        with_events: bool = False) -> list[HitStats]:
        d = self.dialect
        if search is not None:
            rows = await self._query_hits(self._scope(handle, start, end, segment, search),
                                          limit, offset, with_events)
        else:
            scope = self._scope(handle, start, end, segment)
            source, where, params = await self._spanned("analytics_object_days", scope,
                                                  ("count",))
            order = f"ORDER BY sum(q.count) DESC, q.hit{d.text_order}"
            page = (f"SELECT q.hit, sum(q.count) FROM {source} q WHERE {where} "
                    f"GROUP BY q.hit HAVING sum(q.count) > 0 {order} LIMIT ? OFFSET ?")
            if not with_events:
                rows = await self._rows(page, [*params, limit, offset])
            else:  # the page's objects first, then their figures
                hits = [hit for hit, _ in await self._rows(page, [*params, limit, offset])]
                if not hits:
                    return []
                source, where, params = await self._spanned(
                    "analytics_object_days", scope, HIT_COUNTERS,
                    f"hit IN ({marks(len(hits))})", hits)
                rows = await self._rows(
                    f"SELECT q.hit, sum(q.count), {_HIT_FIGURES} "
                    f"FROM {source} q WHERE {where} GROUP BY q.hit {order}", params)
        return [HitStats(hit=hit, count=int(n),
                         events=_counts(rest) if with_events else EventCounts())
                for hit, n, *rest in rows]

    async def _query_hits(self, scope: Scope, limit: int, offset: int,
                          with_events: bool) -> list[tuple[Any, ...]]:
        """The objects of one query's searches (``scope.search``), as ``hit_stats`` gives
        them: from its objects per day for the days added up, from the log by its index for
        the others (the searches with the same objects counted together first, then each
        object of each list; the events of the page's objects only)."""
        d = self.dialect
        done = await self._rows(f"{totals.DAYS_OF_HITS} AND day BETWEEN ? AND ?",
                                [d.day(scope.start), d.day(scope.end)])
        runs = totals.runs(scope.start, scope.end, {d.read_day(day) for day, in done})
        log, rolled = await self._in_sets(scope, "s"), await self._in_sets(scope, "r")

        def parts(select: str, alias: str, built: bool, more: str = "") -> tuple[str, Params]:
            found = rolled if alias == "r" else log
            where = [f"{alias}.handle = ? AND {alias}.day BETWEEN ? AND ?", *found.filters]
            sql, params = [], []
            for first, last, yes in runs:
                if yes == built:
                    sql.append(f"{select} WHERE {' AND '.join(where)}{more}")
                    params += [scope.handle, d.day(first), d.day(last), *found.filter_params]
            return " UNION ALL ".join(sql), params

        logged, logged_params = parts("SELECT s.hits, s.query_id FROM analytics_searches s",
                                      "s", False)
        counted, counted_params = parts(
            f"SELECT r.hit, r.count AS n, r.tracked AS t FROM {totals.HIT_DAYS} r", "r", True)
        if logged:
            counted = " UNION ALL ".join(filter(None, (
                f"SELECT h.value AS hit, l.n, l.t FROM lists l, {d.elements('l.hits', 'h')} "
                "WHERE true", counted)))
        sql = (("WITH lists AS (SELECT s.hits, count(*) AS n, count(s.query_id) AS t "
                f"FROM ({logged}) s GROUP BY s.hits), ") if logged else "WITH "
               ) + (f"counted AS (SELECT x.hit, sum(x.n) AS n, sum(x.t) AS t FROM ({counted}) "
                    "x GROUP BY x.hit), "
                    "page AS (SELECT c.hit, c.n, c.t FROM counted c "
                    f"ORDER BY c.n DESC, c.hit{d.text_order} LIMIT ? OFFSET ?) ")
        params = [*logged_params, *counted_params, limit, offset]
        order = f"ORDER BY p.n DESC, p.hit{d.text_order}"
        if not with_events:
            return await self._rows(f"{sql}SELECT p.hit, p.n FROM page p {order}", params)
        flags = ", ".join(f"CASE WHEN e.{n} > 0 THEN 1 ELSE 0 END AS {done}, e.{n} AS {n}"
                          for done, n in zip(totals.HIT_FIGURES[::2], totals.HIT_FIGURES[1::2],
                                             strict=True))
        page = " AND e.hit IN (SELECT hit FROM page)"
        events, events_params = parts(
            f"SELECT e.hit AS hit, {flags} FROM analytics_searches s "
            "JOIN analytics_hit_events e ON e.query_id = s.query_id", "s", False,
            " AND s.query_id IS NOT NULL" + page)
        figures, figures_params = parts(
            f"SELECT r.hit, {', '.join(f'r.{c}' for c in totals.HIT_FIGURES)} "
            f"FROM {totals.HIT_DAYS} r", "r", True, page.replace("e.hit", "r.hit"))
        both = " UNION ALL ".join(filter(None, (events, figures)))
        return await self._rows(
            f"{sql}SELECT p.hit, p.n, p.t, "
            + ", ".join(f"sum(f.{c})" for c in totals.HIT_FIGURES)
            + f" FROM page p LEFT JOIN ({both}) f ON f.hit = p.hit "
            f"GROUP BY p.hit, p.n, p.t {order}",
            [*params, *events_params, *figures_params])

    async def hit_revenue(self, handle: str, start: date, end: date, hits: Sequence[str], *,
                          segment: Segment = EVERY_SEARCH,
                          search: str | None = None) -> list[Revenue]:
        return await self._revenue("hit", self._scope(handle, start, end, segment, search),
                                   hits)

    async def filter_counts(self, handle: str, start: date, end: date, *, limit: int,
                            offset: int = 0, segment: Segment = EVERY_SEARCH,
                            search: str | None = None,
                            attribute: str | None = None) -> list[FilterCount]:
        d = self.dialect
        scope = self._scope(handle, start, end, segment, search)
        table = "analytics_refinement_days" if search is None else "analytics_filter_days"
        if attribute is None:
            rows = await self._rows(
                f"SELECT q.attribute, sum(q.count) AS n FROM {table} q "
                f"WHERE {scope.where} GROUP BY q.attribute "
                f"ORDER BY n DESC, q.attribute{d.text_order} LIMIT ? OFFSET ?",
                [*scope.params, limit, offset])
            return [FilterCount(a, "", "", int(n)) for a, n in rows]
        rows = await self._rows(
            f"SELECT q.operator, q.value, sum(q.count) AS n FROM {table} q "
            f"WHERE {scope.where} AND q.attribute = ? GROUP BY q.operator, q.value "
            f"ORDER BY n DESC, q.value{d.text_order}, q.operator{d.text_order} "
            "LIMIT ? OFFSET ?", [*scope.params, attribute, limit, offset])
        return [FilterCount(attribute, o, v, int(n)) for o, v, n in rows]

    async def no_result_filters(self, handle: str, start: date, end: date, *, limit: int,
                                offset: int = 0, segment: Segment = EVERY_SEARCH,
                                search: str | None = None) -> list[FilterCombination]:
        d = self.dialect
        scope = self._scope(handle, start, end, segment, search)
        text = "CAST(q.refinements AS TEXT)"
        rows = await self._rows(
            f"SELECT {text}, sum(q.count) AS n FROM analytics_no_result_days q "
            f"WHERE {scope.where} GROUP BY {text} "
            f"ORDER BY n DESC, {text}{d.text_order} LIMIT ? OFFSET ?",
            [*scope.params, limit, offset])
        return [FilterCombination(tuple(_refinements.decode(r)), int(n)) for r, n in rows]

    async def last_update(self, handle: str) -> float | None:
        rows = await self._rows("SELECT max(at) FROM analytics_searches WHERE handle = ?",
                                [handle])
        return None if rows[0][0] is None else float(rows[0][0])
