"""The distinct users of the query log (docs/analytics.md, "Storage"), kept as the searches
are written: per handle, a row per user and block of ``USER_BLOCK`` days whose ``days`` has
a bit per day the user searched on, and per day a count of distinct users, added to when a
batch brings a user's first search of the day (its bit not yet set); the same per set of
``analyticsTags``, for the segments. On PostgreSQL, batches take turns on a
transaction-scoped advisory lock (before any row lock of the batch), so that two cannot
both count the same user's first search of a day.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import date
from typing import Any

from searchport.adapters.analytics.dialect import Dialect, adding, first_columns, marks
from searchport.adapters.analytics.schema import EPOCH, USER_BLOCK
from searchport.domain.analytics.reports import DayUsers
from searchport.domain.analytics.segments import EVERY_SEARCH, Segment

USERS_LOCK = 0x7573657273  # pg_advisory_xact_lock key of the users' counting
Rows = Callable[[str, Sequence[Any]], Awaitable[list[tuple[Any, ...]]]]


def rollup(d: Dialect, source: str) -> list[str]:
    """The statements adding the searches of the batch ``source`` to the users' rollups."""
    found = [f"SELECT pg_advisory_xact_lock({USERS_LOCK})"] if d.upserts_once else []
    for tagged in (False, True):
        found += _rollup(d, source, tagged)
    return found


def _rollup(d: Dialect, source: str, tagged: bool) -> list[str]:
    number = d.epoch_day("b.day")
    block = f"{number} / {USER_BLOCK}"
    bit = f"({number} - {number} / {USER_BLOCK} * {USER_BLOCK})"
    tags = ", b.tags" if tagged else ""
    only = f"WHERE {d.array_length('s.tags')} > 0" if tagged else ""
    pairs = (f"(SELECT DISTINCT s.handle, s.day{tags.replace('b.', 's.')}, s.user_token "
             f"FROM {source} s {only}) b")
    blocks, daily = (("analytics_tag_user_blocks", "analytics_tag_day_users") if tagged
                     else ("analytics_user_blocks", "analytics_day_users"))
    same_tags = " AND u.tags = b.tags" if tagged else ""
    day_keys = ("handle", "day", *(("tags",) if tagged else ()))
    block_keys = f"handle, block{', tags' if tagged else ''}, user_token"
    width = 3 if tagged else 2
    order = f" ORDER BY {first_columns(width)}" if d.upserts_once else ""
    new_pairs = (
        f"INSERT INTO {daily} ({', '.join(day_keys)}, users) "
        f"SELECT b.handle, b.day{tags}, count(*) FROM {pairs} "
        f"LEFT JOIN {blocks} u ON u.handle = b.handle AND u.block = {block} "
        f"AND u.user_token = b.user_token{same_tags} "
        f"WHERE u.days IS NULL OR (u.days >> {bit}) & 1 = 0 "
        f"GROUP BY b.handle, b.day{tags}{order} "
        f"{adding(daily, day_keys, ('users',))}")
    if d.upserts_once:  # each key once per statement: the bits of a batch OR-ed first
        keys = first_columns(width + 1)
        bits = (f"SELECT b.handle, {block}{tags}, b.user_token, "
                f"bit_or(CAST(1 AS BIGINT) << {bit}) FROM {pairs} "
                f"GROUP BY {keys} ORDER BY {keys}")
    else:  # SQLite meets a key again as often as it comes
        bits = (f"SELECT b.handle, {block}{tags}, b.user_token, 1 << {bit} "
                f"FROM {pairs} WHERE true")
    set_bits = (f"INSERT INTO {blocks} ({block_keys}, days) {bits} "
                f"ON CONFLICT ({block_keys}) DO UPDATE SET days = {blocks}.days | excluded.days")
    return [new_pairs, set_bits]


PURGE_DAYS = tuple(f"DELETE FROM {table} WHERE day < ?"
                   for table in ("analytics_day_users", "analytics_tag_day_users"))


def purge(d: Dialect, before: date) -> list[tuple[str, list[Any]]]:
    """The statements forgetting the days before ``before``: the blocks before its block,
    the bits of the earlier days of its block, the rows left without a day."""
    number = (before - EPOCH).days
    block, first = divmod(number, USER_BLOCK)
    kept = ((1 << USER_BLOCK) - 1) & ~((1 << first) - 1)
    found: list[tuple[str, list[Any]]] = [(sql, [d.day(before)]) for sql in PURGE_DAYS]
    for table in ("analytics_user_blocks", "analytics_tag_user_blocks"):
        found += [(f"DELETE FROM {table} WHERE block < ?", [block]),
                  (f"UPDATE {table} SET days = days & ? WHERE block = ?", [kept, block]),
                  (f"DELETE FROM {table} WHERE days = 0", [])]
    return found


def _blocks(start: date, end: date) -> list[tuple[int, int]]:
    """The blocks of the days from ``start`` to ``end``, each with the bits of these days."""
    first, last = (start - EPOCH).days, (end - EPOCH).days
    found = []
    for block in range(first // USER_BLOCK, last // USER_BLOCK + 1):
        low = max(first, block * USER_BLOCK) - block * USER_BLOCK
        high = min(last, block * USER_BLOCK + USER_BLOCK - 1) - block * USER_BLOCK
        found.append((block, ((1 << (high + 1)) - 1) & ~((1 << low) - 1)))
    return found


def _in_blocks(start: date, end: date) -> tuple[str, list[Any]]:
    blocks = _blocks(start, end)
    where = " OR ".join(["(q.block = ? AND (q.days & ?) <> 0)"] * len(blocks))
    return f"({where})", [v for pair in blocks for v in pair]


async def users(rows: Rows, d: Dialect, handle: str, start: date, end: date,
                segment: Segment = EVERY_SEARCH) -> tuple[int, list[DayUsers]]:
    """Distinct users over the period, and per day (days without searches left out)."""
    if end < start:
        return 0, []
    in_period, params = _in_blocks(start, end)
    if not segment:
        count = "count(*)" if len(_blocks(start, end)) == 1 else "count(DISTINCT q.user_token)"
        total = await rows(f"SELECT {count} FROM analytics_user_blocks q "
                           f"WHERE q.handle = ? AND {in_period}", [handle, *params])
        days = await rows("SELECT q.day, q.users FROM analytics_day_users q WHERE q.handle = ? "
                          "AND q.day BETWEEN ? AND ? ORDER BY q.day",
                          [handle, d.day(start), d.day(end)])
        return int(total[0][0]), [DayUsers(d.read_day(day), int(n)) for day, n in days]
    matches, more = d.segment("q.tags", segment)
    found = await rows(f"SELECT q.day, q.tags, q.users FROM analytics_tag_day_users q "
                       f"WHERE q.handle = ? AND q.day BETWEEN ? AND ? AND {matches} "
                       "ORDER BY q.day", [handle, d.day(start), d.day(end), *more])
    # the sets of tags of the segment met in the period: the users' rows read by their key
    sets = list({_key(tags): tags for _, tags, _ in found}.values())
    if not sets:
        return 0, []
    distinct = await _distinct(rows, d, handle, start, end, sets)
    per_day: dict[date, list[int]] = {}
    for day, _, n in found:
        per_day.setdefault(d.read_day(day), []).append(int(n))
    counted = []
    for day, counts in sorted(per_day.items()):
        if len(counts) > 1:  # several sets of tags that day: a user may be in more than one
            counts = [await _distinct(rows, d, handle, day, day, sets)]
        counted.append(DayUsers(day, counts[0]))
    return distinct, counted


def _key(tags: Any) -> str:
    return tags if isinstance(tags, str) else repr(tags)


async def _distinct(rows: Rows, d: Dialect, handle: str, start: date, end: date,
                    sets: list[Any]) -> int:
    """The distinct users of the days from ``start`` to ``end`` under one of ``sets`` (as
    the database gave them: SQLite's JSON text is compared as it was written)."""
    in_period, params = _in_blocks(start, end)
    one = len(sets) == 1 and len(_blocks(start, end)) == 1
    count = "count(*)" if one else "count(DISTINCT q.user_token)"
    found = await rows(f"SELECT {count} FROM analytics_tag_user_blocks q WHERE q.handle = ? "
                       f"AND q.tags IN ({marks(len(sets))}) AND {in_period}",
                       [handle, *map(d.stored, sets), *params])
    return int(found[0][0])
