"""The tables of the query log, the same on SQLite and PostgreSQL, and their migrations.

``analytics_schema`` holds one row: the version the database is at (the number of
migrations applied). Each migration is a list of statements written once, with the column
types spelled per database (``{day}``, ``{json}``...). A database at a version newer than
this searchport knows is refused, never downgraded.
"""

from __future__ import annotations

from collections.abc import Mapping

TYPES: Mapping[str, Mapping[str, str]] = {
    "sqlite": {"day": "TEXT", "real": "REAL", "json": "TEXT", "bytes": "BLOB",
               "bigint": "INTEGER", "id": "INTEGER PRIMARY KEY",
               "keyed": " WITHOUT ROWID"},
    "postgres": {"day": "DATE", "real": "DOUBLE PRECISION", "json": "JSONB",
                 "bytes": "BYTEA", "bigint": "BIGINT",
                 "id": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "keyed": ""},
}

VERSION_TABLE = "CREATE TABLE IF NOT EXISTS analytics_schema (version INTEGER NOT NULL)"

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE analytics_searches (
            at {real} NOT NULL,
            day {day} NOT NULL,
            handle TEXT NOT NULL,
            query TEXT NOT NULL,
            nb_hits {bigint} NOT NULL,
            page INTEGER NOT NULL,
            refinements {json} NOT NULL,
            tags {json} NOT NULL,
            user_token TEXT NOT NULL,
            latency_ms {real} NOT NULL,
            query_id TEXT
        )""",
        "CREATE INDEX analytics_searches_handle_day ON analytics_searches (handle, day)",
        "CREATE INDEX analytics_searches_query_id ON analytics_searches (query_id) "
        "WHERE query_id IS NOT NULL",
        """CREATE TABLE analytics_events (
            id {id},
            at {real} NOT NULL,
            day {day} NOT NULL,
            handle TEXT NOT NULL,
            type TEXT NOT NULL,
            subtype TEXT,
            name TEXT NOT NULL,
            user_token TEXT NOT NULL,
            authenticated_user_token TEXT,
            object_ids {json} NOT NULL,
            positions {json} NOT NULL,
            query_id TEXT,
            filters {json} NOT NULL,
            object_query_ids {json} NOT NULL
        )""",
        "CREATE INDEX analytics_events_handle_day ON analytics_events (handle, day)",
        "CREATE INDEX analytics_events_query_id ON analytics_events (query_id, type) "
        "WHERE query_id IS NOT NULL",
        "CREATE TABLE analytics_day_salts (day {day} PRIMARY KEY, salt {bytes} NOT NULL)",
    ),
    (  # the objects each search returned, the revenue of conversions, the daily rollups
        "ALTER TABLE analytics_searches ADD COLUMN hits {json} NOT NULL DEFAULT '[]'",
        *(f"ALTER TABLE analytics_searches ADD COLUMN {kind} {{bigint}} NOT NULL DEFAULT 0"
          for kind in ("clicks", "conversions", "carts", "purchases")),
        "ALTER TABLE analytics_events ADD COLUMN revenue {real}",
        "ALTER TABLE analytics_events ADD COLUMN currency TEXT",
        "ALTER TABLE analytics_events ADD COLUMN object_revenues {json} NOT NULL "
        "DEFAULT '[]'",
        "CREATE INDEX analytics_searches_handle_at ON analytics_searches (handle, at)",
        "CREATE INDEX analytics_searches_users ON analytics_searches "
        "(handle, day, user_token)",
        """CREATE TABLE analytics_days (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            tags {json} NOT NULL,
            searches {bigint} NOT NULL DEFAULT 0,
            no_results {bigint} NOT NULL DEFAULT 0,
            tracked {bigint} NOT NULL DEFAULT 0,
            clicked {bigint} NOT NULL DEFAULT 0,
            clicks {bigint} NOT NULL DEFAULT 0,
            converted {bigint} NOT NULL DEFAULT 0,
            conversions {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, tags)
        ){keyed}""",
        """CREATE TABLE analytics_query_days (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            query TEXT NOT NULL,
            tags {json} NOT NULL,
            searches {bigint} NOT NULL DEFAULT 0,
            no_results {bigint} NOT NULL DEFAULT 0,
            no_results_filtered {bigint} NOT NULL DEFAULT 0,
            filtered {bigint} NOT NULL DEFAULT 0,
            hits_sum {bigint} NOT NULL DEFAULT 0,
            tracked {bigint} NOT NULL DEFAULT 0,
            unclicked {bigint} NOT NULL DEFAULT 0,
            unclicked_hits_sum {bigint} NOT NULL DEFAULT 0,
            clicked {bigint} NOT NULL DEFAULT 0,
            clicks {bigint} NOT NULL DEFAULT 0,
            converted {bigint} NOT NULL DEFAULT 0,
            conversions {bigint} NOT NULL DEFAULT 0,
            carted {bigint} NOT NULL DEFAULT 0,
            carts {bigint} NOT NULL DEFAULT 0,
            purchased {bigint} NOT NULL DEFAULT 0,
            purchases {bigint} NOT NULL DEFAULT 0,
            position_sum {bigint} NOT NULL DEFAULT 0,
            positions {bigint} NOT NULL DEFAULT 0,
            range0 {bigint} NOT NULL DEFAULT 0,
            range1 {bigint} NOT NULL DEFAULT 0,
            range2 {bigint} NOT NULL DEFAULT 0,
            range3 {bigint} NOT NULL DEFAULT 0,
            range4 {bigint} NOT NULL DEFAULT 0,
            range5 {bigint} NOT NULL DEFAULT 0,
            range6 {bigint} NOT NULL DEFAULT 0,
            range7 {bigint} NOT NULL DEFAULT 0,
            range8 {bigint} NOT NULL DEFAULT 0,
            range9 {bigint} NOT NULL DEFAULT 0,
            range10 {bigint} NOT NULL DEFAULT 0,
            range11 {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, query, tags)
        ){keyed}""",
        """CREATE TABLE analytics_hit_days (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            query TEXT NOT NULL,
            hit TEXT NOT NULL,
            tags {json} NOT NULL,
            count {bigint} NOT NULL DEFAULT 0,
            tracked {bigint} NOT NULL DEFAULT 0,
            clicked {bigint} NOT NULL DEFAULT 0,
            clicks {bigint} NOT NULL DEFAULT 0,
            converted {bigint} NOT NULL DEFAULT 0,
            conversions {bigint} NOT NULL DEFAULT 0,
            carted {bigint} NOT NULL DEFAULT 0,
            carts {bigint} NOT NULL DEFAULT 0,
            purchased {bigint} NOT NULL DEFAULT 0,
            purchases {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, query, hit, tags)
        ){keyed}""",
        """CREATE TABLE analytics_object_days (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            hit TEXT NOT NULL,
            tags {json} NOT NULL,
            count {bigint} NOT NULL DEFAULT 0,
            tracked {bigint} NOT NULL DEFAULT 0,
            clicked {bigint} NOT NULL DEFAULT 0,
            clicks {bigint} NOT NULL DEFAULT 0,
            converted {bigint} NOT NULL DEFAULT 0,
            conversions {bigint} NOT NULL DEFAULT 0,
            carted {bigint} NOT NULL DEFAULT 0,
            carts {bigint} NOT NULL DEFAULT 0,
            purchased {bigint} NOT NULL DEFAULT 0,
            purchases {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, hit, tags)
        ){keyed}""",
        """CREATE TABLE analytics_refinement_days (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            attribute TEXT NOT NULL,
            operator TEXT NOT NULL,
            value TEXT NOT NULL,
            tags {json} NOT NULL,
            count {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, attribute, operator, value, tags)
        ){keyed}""",
        "CREATE INDEX analytics_hit_days_query ON analytics_hit_days (handle, query, day)",
        """CREATE TABLE analytics_filter_days (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            query TEXT NOT NULL,
            attribute TEXT NOT NULL,
            operator TEXT NOT NULL,
            value TEXT NOT NULL,
            tags {json} NOT NULL,
            count {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, query, attribute, operator, value, tags)
        ){keyed}""",
        """CREATE TABLE analytics_no_result_days (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            query TEXT NOT NULL,
            refinements {json} NOT NULL,
            tags {json} NOT NULL,
            count {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, query, refinements, tags)
        ){keyed}""",
        """CREATE TABLE analytics_click_days (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            position INTEGER NOT NULL,
            tags {json} NOT NULL,
            clicks {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, position, tags)
        ){keyed}""",
        """CREATE TABLE analytics_revenue_days (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            query TEXT NOT NULL,
            hit TEXT NOT NULL,
            tags {json} NOT NULL,
            currency TEXT NOT NULL,
            revenue {real} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, query, hit, tags, currency)
        ){keyed}""",
        """CREATE TABLE analytics_hit_events (
            query_id TEXT NOT NULL,
            hit TEXT NOT NULL,
            day {day} NOT NULL,
            clicks {bigint} NOT NULL DEFAULT 0,
            conversions {bigint} NOT NULL DEFAULT 0,
            carts {bigint} NOT NULL DEFAULT 0,
            purchases {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (query_id, hit)
        ){keyed}""",
    ),
    (  # the objects of one query's searches read from the log, not from a rollup per query
        # and object; (handle, day) lookups served by the users' index
        "DROP TABLE analytics_hit_days",
        "DROP INDEX analytics_searches_handle_day",
        "CREATE INDEX analytics_searches_query ON analytics_searches (handle, query, day)",
    ),
    (  # the distinct users: per day, and each user's days in blocks of USER_BLOCK days
        # (one bit a day), all searches and per set of tags (tagged searches only)
        """CREATE TABLE analytics_day_users (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            users {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day)
        ){keyed}""",
        """CREATE TABLE analytics_tag_day_users (
            handle TEXT NOT NULL,
            day {day} NOT NULL,
            tags {json} NOT NULL,
            users {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (handle, day, tags)
        ){keyed}""",
        """CREATE TABLE analytics_user_blocks (
            handle TEXT NOT NULL,
            block {bigint} NOT NULL,
            user_token TEXT NOT NULL,
            days {bigint} NOT NULL,
            PRIMARY KEY (handle, block, user_token)
        ){keyed}""",
        """CREATE TABLE analytics_tag_user_blocks (
            handle TEXT NOT NULL,
            block {bigint} NOT NULL,
            tags {json} NOT NULL,
            user_token TEXT NOT NULL,
            days {bigint} NOT NULL,
            PRIMARY KEY (handle, block, tags, user_token)
        ){keyed}""",
        # the queries' rows with searches that found nothing (/2/searches/noResults): a
        # few of the period's rows, read without the others
        "CREATE INDEX analytics_query_days_no_results ON analytics_query_days "
        "(handle, day, query, tags, no_results, no_results_filtered) WHERE no_results > 0",
    ),
    (  # the events kept before a search they name, once per such search (``name``): what
        # a batch of searches looks up, by its queryIDs, and applies (then forgets)
        """CREATE TABLE analytics_early_events (
            id {id},
            name TEXT NOT NULL,
            at {real} NOT NULL,
            day {day} NOT NULL,
            handle TEXT NOT NULL,
            type TEXT NOT NULL,
            subtype TEXT,
            object_ids {json} NOT NULL,
            positions {json} NOT NULL,
            query_id TEXT,
            object_query_ids {json} NOT NULL,
            revenue {real},
            currency TEXT,
            object_revenues {json} NOT NULL
        )""",
        "CREATE INDEX analytics_early_events_name ON analytics_early_events (name)",
    ),
    (  # the queries' and objects' rows per block of days too (sql.SPANS), ``day`` the
        # block's first, added up once the block has ended: a period reads them where it
        # can
        *(f"""CREATE TABLE analytics_{kind}_spans (
            handle TEXT NOT NULL,
            span INTEGER NOT NULL,
            day {{day}} NOT NULL,
            {key} TEXT NOT NULL,
            tags {{json}} NOT NULL,
            {counters},
            PRIMARY KEY (handle, span, day, {key}, tags)
        ){{keyed}}""" for kind, key, counters in (
            ("query", "query", ",\n            ".join(
                f"{c} {{bigint}} NOT NULL DEFAULT 0" for c in (
                    "searches", "no_results", "no_results_filtered", "filtered",
                    "hits_sum", "tracked", "unclicked", "unclicked_hits_sum", "clicked",
                    "clicks", "converted", "conversions", "carted", "carts", "purchased",
                    "purchases", "position_sum", "positions",
                    *(f"range{i}" for i in range(12))))),
            ("object", "hit", ",\n            ".join(
                f"{c} {{bigint}} NOT NULL DEFAULT 0" for c in (
                    "count", "tracked", "clicked", "clicks", "converted", "conversions",
                    "carted", "carts", "purchased", "purchases"))))),
        "CREATE INDEX analytics_query_spans_no_results ON analytics_query_spans "
        "(handle, span, day, query, tags, no_results, no_results_filtered) "
        "WHERE no_results > 0",
        # the blocks added up (all handles'), which the reads may use
        """CREATE TABLE analytics_span_blocks (
            span INTEGER NOT NULL,
            day {day} NOT NULL,
            PRIMARY KEY (span, day)
        ){keyed}""",
    ),
    (  # running totals per query and object in chains of days, each query's objects per day,
        # added up by the daily build (totals.py), with the days they were added up for
        """CREATE TABLE analytics_query_totals (
            day {day} NOT NULL,
            handle TEXT NOT NULL,
            query TEXT NOT NULL,
            tags {json} NOT NULL,
            """ + ",\n            ".join(
            f"{c} {{bigint}} NOT NULL DEFAULT 0" for c in (
                "searches", "filtered", "hits_sum", "tracked", "unclicked",
                "unclicked_hits_sum", "clicked", "converted", "position_sum", "positions"))
        + """,
            PRIMARY KEY (day, handle, query, tags)
        ){keyed}""",
        """CREATE TABLE analytics_object_totals (
            day {day} NOT NULL,
            handle TEXT NOT NULL,
            hit TEXT NOT NULL,
            tags {json} NOT NULL,
            count {bigint} NOT NULL DEFAULT 0,
            PRIMARY KEY (day, handle, hit, tags)
        ){keyed}""",
        """CREATE TABLE analytics_totals_built (
            kind TEXT NOT NULL,
            day {day} NOT NULL,
            total_rows {bigint} NOT NULL,
            day_rows {bigint} NOT NULL,
            PRIMARY KEY (kind, day)
        ){keyed}""",
        """CREATE TABLE analytics_query_hit_days (
            handle TEXT NOT NULL,
            query TEXT NOT NULL,
            day {day} NOT NULL,
            hit TEXT NOT NULL,
            tags {json} NOT NULL,
            """ + ",\n            ".join(
            f"{c} {{bigint}} NOT NULL DEFAULT 0" for c in (
                "count", "tracked", "clicked", "clicks", "converted", "conversions",
                "carted", "carts", "purchased", "purchases"))
        + """,
            PRIMARY KEY (handle, query, day, hit, tags)
        ){keyed}""",
        "CREATE INDEX analytics_query_hit_days_day ON analytics_query_hit_days (day)",
        # the days added up (``building`` null), or being added up (a build's token)
        "CREATE TABLE analytics_query_hits_built (day {day} PRIMARY KEY, building TEXT)",
    ),
    (  # the log's index that only its readers of old used (the distinct users are
        # counted from their rollups): each search written costs less
        "DROP INDEX IF EXISTS analytics_searches_users",
    ),
)
USER_BLOCK = 32  # days per row of analytics_user_blocks: one bit each in a BIGINT
USERS_AT = 4  # the schema version that brought the distinct users' rollups
EARLY_AT = 5  # the schema version that keeps the events waiting for their searches apart
SPANS_AT = 6  # the schema version that brought the blocks of days (sql.SPANS)
TOTALS_AT = 7  # the schema version that brought the running totals and objects per query
USERS_INDEX_GONE_AT = 8  # the schema version without the log's index by user

VERSION = len(MIGRATIONS)


def statements(dialect: str, since: int) -> list[str]:
    """The statements that take a database from version ``since`` to ``VERSION``."""
    types = TYPES[dialect]
    return [sql.format(**types) for step in MIGRATIONS[since:] for sql in step]


def too_new(found: int) -> str:
    return (f"the analytics database is at schema version {found}, newer than this "
            f"searchport knows ({VERSION}): upgrade searchport or use another database")
