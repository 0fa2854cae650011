"""The tables of the query log, the same on SQLite and PostgreSQL (column types spelled
per database: ``TYPES``), and their version, the one row of ``analytics_schema``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta

from searchport.domain.analytics.reports import CLICK_RANGES

TYPES: Mapping[str, Mapping[str, str]] = {
    "sqlite": {"day": "TEXT", "real": "REAL", "json": "TEXT", "bytes": "BLOB",
               "bigint": "INTEGER", "id": "INTEGER PRIMARY KEY",
               "keyed": " WITHOUT ROWID"},
    "postgres": {"day": "DATE", "real": "DOUBLE PRECISION", "json": "JSONB",
                 "bytes": "BYTEA", "bigint": "BIGINT",
                 "id": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "keyed": ""},
}

VERSION = 1
VERSION_TABLE = "CREATE TABLE IF NOT EXISTS analytics_schema (version INTEGER NOT NULL)"

# the counters of a query's searches per day (and per block of days), what the events did
# to its tracked ones included; and of an object shown
QUERY_COUNTERS = ("searches", "no_results", "no_results_filtered", "filtered", "hits_sum",
                  "tracked", "unclicked", "unclicked_hits_sum", "clicked", "clicks",
                  "converted", "conversions", "carted", "carts", "purchased", "purchases",
                  "position_sum", "positions", *(f"range{i}" for i in range(len(CLICK_RANGES))))
HIT_COUNTERS = ("count", "tracked", "clicked", "clicks", "converted", "conversions",
                "carted", "carts", "purchased", "purchases")
# the counters of analytics_query_days the rankings order and filter by (``totals.py``)
TOTAL_COUNTERS = ("searches", "filtered", "hits_sum", "tracked", "unclicked",
                  "unclicked_hits_sum", "clicked", "converted", "position_sum", "positions")
# the daily rollups: per table, its key columns and its counters
DAILY: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "analytics_days": (("handle", "day", "tags"),
                       ("searches", "no_results", "tracked", "clicked", "clicks", "converted",
                        "conversions")),
    "analytics_query_days": (("handle", "day", "query", "tags"), QUERY_COUNTERS),
    "analytics_object_days": (("handle", "day", "hit", "tags"), HIT_COUNTERS),
    "analytics_filter_days": (("handle", "day", "query", "attribute", "operator", "value",
                               "tags"), ("count",)),
    "analytics_refinement_days": (("handle", "day", "attribute", "operator", "value", "tags"),
                                  ("count",)),
    "analytics_no_result_days": (("handle", "day", "query", "refinements", "tags"),
                                 ("count",)),
    "analytics_click_days": (("handle", "day", "position", "tags"), ("clicks",)),
    "analytics_revenue_days": (("handle", "day", "query", "hit", "tags", "currency"),
                               ("revenue",)),
}
_KEY_TYPES = {"day": "{day}", "tags": "{json}", "refinements": "{json}", "block": "{bigint}",
              "span": "INTEGER", "position": "INTEGER"}


def _keyed(table: str, keys: Sequence[str], counters: Sequence[str] = (),
           counter_type: str = "{bigint}") -> str:
    """A table of counters (default 0) by ``keys``, its primary key."""
    columns = [*(f"{key} {_KEY_TYPES.get(key, 'TEXT')} NOT NULL" for key in keys),
               *(f"{c} {counter_type} NOT NULL DEFAULT 0" for c in counters)]
    return (f"CREATE TABLE {table} ({', '.join(columns)}, "
            f"PRIMARY KEY ({', '.join(keys)})){{keyed}}")


EVENT_COLUMNS = ("at {real} NOT NULL, day {day} NOT NULL, handle TEXT NOT NULL, "
                 "type TEXT NOT NULL, subtype TEXT")
EVENT_OBJECTS = ("object_ids {json} NOT NULL, positions {json} NOT NULL, query_id TEXT, "
                 "object_query_ids {json} NOT NULL, revenue {real}, currency TEXT, "
                 "object_revenues {json} NOT NULL")

TABLES: tuple[str, ...] = (
    # the log: one row per search, what the events did to it counted on it
    "CREATE TABLE analytics_searches (at {real} NOT NULL, day {day} NOT NULL, "
    "handle TEXT NOT NULL, query TEXT NOT NULL, nb_hits {bigint} NOT NULL, "
    "page INTEGER NOT NULL, refinements {json} NOT NULL, tags {json} NOT NULL, "
    "user_token TEXT NOT NULL, latency_ms {real} NOT NULL, query_id TEXT, "
    "hits {json} NOT NULL, clicks {bigint} NOT NULL DEFAULT 0, "
    "conversions {bigint} NOT NULL DEFAULT 0, carts {bigint} NOT NULL DEFAULT 0, "
    "purchases {bigint} NOT NULL DEFAULT 0)",
    "CREATE INDEX analytics_searches_query_id ON analytics_searches (query_id) "
    "WHERE query_id IS NOT NULL",
    "CREATE INDEX analytics_searches_handle_at ON analytics_searches (handle, at)",
    "CREATE INDEX analytics_searches_query ON analytics_searches (handle, query, day)",
    f"CREATE TABLE analytics_events (id {{id}}, {EVENT_COLUMNS}, name TEXT NOT NULL, "
    "user_token TEXT NOT NULL, authenticated_user_token TEXT, filters {json} NOT NULL, "
    f"{EVENT_OBJECTS})",
    "CREATE INDEX analytics_events_handle_day ON analytics_events (handle, day)",
    "CREATE INDEX analytics_events_query_id ON analytics_events (query_id, type) "
    "WHERE query_id IS NOT NULL",
    # an event kept before a search it names, once per such search (``name``): what a
    # batch of searches looks up by its queryIDs, applies, then forgets
    f"CREATE TABLE analytics_early_events (id {{id}}, name TEXT NOT NULL, {EVENT_COLUMNS}, "
    f"{EVENT_OBJECTS})",
    "CREATE INDEX analytics_early_events_name ON analytics_early_events (name)",
    "CREATE TABLE analytics_day_salts (day {day} PRIMARY KEY, salt {bytes} NOT NULL)",
    # the daily rollups (rollups.py), and the queries' rows that found nothing read alone
    *(_keyed(table, keys, counters, "{real}" if table == "analytics_revenue_days"
             else "{bigint}") for table, (keys, counters) in DAILY.items()),
    "CREATE INDEX analytics_query_days_no_results ON analytics_query_days "
    "(handle, day, query, tags, no_results, no_results_filtered) WHERE no_results > 0",
    # what the events did so far to each object of each tracked search
    "CREATE TABLE analytics_hit_events (query_id TEXT NOT NULL, hit TEXT NOT NULL, "
    "day {day} NOT NULL, clicks {bigint} NOT NULL DEFAULT 0, "
    "conversions {bigint} NOT NULL DEFAULT 0, carts {bigint} NOT NULL DEFAULT 0, "
    "purchases {bigint} NOT NULL DEFAULT 0, PRIMARY KEY (query_id, hit)){keyed}",
    # the distinct users (users.py): per day, and each user's days in blocks (a bit a day)
    _keyed("analytics_day_users", ("handle", "day"), ("users",)),
    _keyed("analytics_tag_day_users", ("handle", "day", "tags"), ("users",)),
    _keyed("analytics_user_blocks", ("handle", "block", "user_token"), ("days",)),
    _keyed("analytics_tag_user_blocks", ("handle", "block", "tags", "user_token"), ("days",)),
    # the queries' and objects' rows per block of days (rollups.SPANS), ``day`` its first
    _keyed("analytics_query_spans", ("handle", "span", "day", "query", "tags"),
           QUERY_COUNTERS),
    "CREATE INDEX analytics_query_spans_no_results ON analytics_query_spans "
    "(handle, span, day, query, tags, no_results, no_results_filtered) WHERE no_results > 0",
    _keyed("analytics_object_spans", ("handle", "span", "day", "hit", "tags"), HIT_COUNTERS),
    _keyed("analytics_span_blocks", ("span", "day")),  # the blocks added up
    # running totals per query and object, each query's objects per day (totals.py)
    _keyed("analytics_query_totals", ("day", "handle", "query", "tags"), TOTAL_COUNTERS),
    _keyed("analytics_object_totals", ("day", "handle", "hit", "tags"), ("count",)),
    _keyed("analytics_totals_built", ("kind", "day"), ("total_rows", "day_rows")),
    _keyed("analytics_query_hit_days", ("handle", "query", "day", "hit", "tags"),
           HIT_COUNTERS),
    "CREATE INDEX analytics_query_hit_days_day ON analytics_query_hit_days (day)",
    # the days added up (``building`` null), or being added up (a build's token)
    "CREATE TABLE analytics_query_hits_built (day {day} PRIMARY KEY, building TEXT)",
)


def upgrade(dialect: str, found: int | None) -> list[str]:
    """The statements creating the tables of a new database (``found`` None); none for
    one at ``VERSION``; any other version is refused, never changed (``SchemaMismatch``).
    A later version would bring an older database to its own here."""
    if found is None:
        return [*(table.format(**TYPES[dialect]) for table in TABLES),
                f"INSERT INTO analytics_schema (version) VALUES ({VERSION:d})"]
    if found != VERSION:
        raise SchemaMismatch(
            f"the analytics database is at schema version {found}, which this searchport "
            f"(schema version {VERSION}) cannot read: give it another analytics.path or "
            "analytics.url, or use the searchport that wrote it")
    return []


class SchemaMismatch(Exception):
    """A database whose schema version this searchport does not know."""


USER_BLOCK = 32  # days per row of analytics_user_blocks: one bit each in a BIGINT
EPOCH = date(1970, 1, 1)  # blocks of days (of users, spans, chains) are counted from it


def block_start(day: date, days: int) -> date:
    """The first day of the block of ``days`` days that holds ``day``."""
    return day - timedelta(days=(day - EPOCH).days % days)
