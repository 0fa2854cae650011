"""What SQLite and PostgreSQL spell differently in the query log's statements (written
once, with ``?`` placeholders), the pieces of SQL the statements share, and the
``Transaction`` a store runs them in."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any, Protocol

import msgspec

from searchport.domain.analytics.records import utc_day
from searchport.domain.analytics.segments import Segment

Params = list[Any]
_json = msgspec.json.Encoder()


def json_text(value: object) -> str:
    return _json.encode(value).decode("utf-8")


def marks(count: int) -> str:
    return ", ".join("?" * count)


def insert(table: str, columns: Sequence[str]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks(len(columns))})"


def adding(table: str, keys: Sequence[str], counters: Sequence[str]) -> str:
    """The ``ON CONFLICT`` clause adding an inserted row's ``counters`` to those of the row
    of ``table`` with the same ``keys``."""
    return (f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET "
            + ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in counters))


def first_columns(count: int) -> str:
    """``1, 2, ...``: the first ``count`` columns of a SELECT, for a GROUP or ORDER BY."""
    return ", ".join(str(i + 1) for i in range(count))


class Dialect:
    """What SQLite and PostgreSQL spell differently (the subclasses below)."""

    name = ""  # as in schema.TYPES
    text_order = ""  # appended to an ORDER BY on text: byte order on both
    # an INSERT ... ON CONFLICT DO UPDATE may meet each key once only (PostgreSQL), so its
    # rows are grouped first; SQLite updates a row again as often as it is met. PostgreSQL
    # is also the database several instances share: its writers take turns on locks
    upserts_once = False
    batch_suffix = ""  # the end of the statement creating a connection's batch table
    lock_rows = ""  # appended to a SELECT whose rows the transaction then updates

    def sql(self, statement: str) -> str:
        """``statement`` with this database's placeholders (``?`` as written)."""
        return statement

    def day(self, day: date) -> Any:
        return day

    def day_at(self, at: float) -> Any:
        """``day`` of the UTC day of the instant ``at``."""
        return self.day(utc_day(at))

    def read_day(self, value: Any) -> date:
        return value if isinstance(value, date) else date.fromisoformat(value)

    def json(self, value: object) -> Any:
        return json_text(value)

    def elements(self, column: str, alias: str) -> str:
        """A FROM item: the elements of the JSON array ``column``, ``alias.value`` (text)."""
        return f"json_each({column}) AS {alias}"

    def array_length(self, column: str) -> str:
        return f"json_array_length({column})"

    def objects(self, column: str, alias: str) -> str:
        """A FROM item: the elements of the JSON array ``column`` as JSON, ``alias.value``
        (``alias.value ->> 0``: the first item of an element that is an array)."""
        return f"json_each({column}) AS {alias}"

    def segment(self, column: str, segment: Segment) -> tuple[str, Params]:
        """A condition: the JSON array ``column`` holds every tag of one of the
        alternatives of ``segment``."""
        alternatives, params = [], []
        for tags in segment:
            sql, more = self.has_tags(column, tags)
            alternatives.append(sql)
            params.extend(more)
        return "(" + " OR ".join(alternatives) + ")", params

    def stored(self, tags: Any) -> Any:
        """A set of tags as the database gave it, as a parameter compared with the column."""
        return tags if isinstance(tags, str) else self.json(tags)

    def has_tags(self, column: str, tags: Sequence[str]) -> tuple[str, Params]:
        """A condition: the JSON array ``column`` holds every one of ``tags``."""
        one = f"EXISTS (SELECT 1 FROM json_each({column}) AS tg WHERE tg.value = ?)"
        return "(" + " AND ".join([one] * len(tags)) + ")", list(tags)

    def epoch_day(self, column: str) -> str:
        """The day ``column`` as a number of days since 1970-01-01 (an integer)."""
        return f"CAST(julianday({column}) - 2440587.5 AS INTEGER)"

    def span_day(self, column: str, span: int) -> str:
        """The first day of the block of ``span`` days (from 1970-01-01) holding the day
        ``column``, as a day."""
        return f"date({column}, '-' || ({self.epoch_day(column)} % {span}) || ' days')"


class SqliteDialect(Dialect):
    name = "sqlite"

    def day(self, day: date) -> Any:
        return day.isoformat()


class PostgresDialect(Dialect):
    name = "postgres"
    text_order = ' COLLATE "C"'
    upserts_once = True
    batch_suffix = " ON COMMIT DELETE ROWS"  # emptied by the commit, no dead rows kept
    lock_rows = " FOR UPDATE"  # two instances count each first click of a search once

    def sql(self, statement: str) -> str:
        return statement.replace("%", "%%").replace("?", "%s")

    def json(self, value: object) -> Any:
        from psycopg.types.json import Jsonb  # the postgres extra, imported when used

        return Jsonb(value, dumps=json_text)

    def elements(self, column: str, alias: str) -> str:
        return f"jsonb_array_elements_text({column}) AS {alias}(value)"

    def array_length(self, column: str) -> str:
        return f"jsonb_array_length({column})"

    def objects(self, column: str, alias: str) -> str:
        return f"jsonb_array_elements({column}) AS {alias}(value)"

    def has_tags(self, column: str, tags: Sequence[str]) -> tuple[str, Params]:
        return f"{column} @> ?::jsonb", [json_text(list(tags))]

    def epoch_day(self, column: str) -> str:
        return f"({column} - DATE '1970-01-01')"

    def span_day(self, column: str, span: int) -> str:
        return f"({column} - {self.epoch_day(column)} % {span})"


SQLITE = SqliteDialect()
POSTGRES = PostgresDialect()


class Transaction(Protocol):
    """The statements of one transaction (written with ``?``), run on a store's connection."""

    async def execute(self, statement: str, params: Sequence[Any] = ()) -> int:
        """Run ``statement``; how many rows it changed."""
        ...

    async def executemany(self, statement: str, rows: Iterable[Sequence[Any]]) -> None: ...

    async def rows(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        ...
