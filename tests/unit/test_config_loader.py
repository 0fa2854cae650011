"""config.yaml: environment substitution on parsed values, typed conversion, key paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchport.adapters.config_loader import load_config, parse_config
from searchport.domain.config import Config, ConfigError
from searchport.domain.engines import ENGINE_NAMES, ENGINES

ROOT = Path(__file__).resolve().parents[2]

TANTIVY = """
indexes:
  books:
    engine: tantivy
    path: idx/books
"""


def config_error(text: str, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, environ or {})
    return str(caught.value)


def index_yaml(body: str, handle: str = "books") -> str:
    lines = "\n".join(f"    {line}" for line in body.strip().splitlines())
    return f"indexes:\n  {handle}:\n{lines}\n"


# -- the shipped example -------------------------------------------------------------------


def test_the_example_config_loads_with_an_empty_environment() -> None:
    config = load_config(ROOT / "config.example.yaml", {})
    assert isinstance(config, Config)
    handle, index = next(iter(config.indexes.items()))
    assert handle == "cities"
    assert index.engine == "tantivy"
    assert index.path
    assert config.port == 3000
    assert config.api_keys == ()


def test_the_example_config_takes_its_key_and_port_from_the_environment() -> None:
    config = load_config(ROOT / "config.example.yaml", {"API_KEY": "s3cret", "PORT": "8080"})
    assert config.api_keys == ("s3cret",)
    assert config.port == 8080


def test_a_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config"):
        load_config(tmp_path / "config.yaml", {})


def test_load_config_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("port: ${P}\n" + TANTIVY, encoding="utf-8")
    assert load_config(path, {"P": "4000"}).port == 4000


def test_empty_config_gives_the_defaults() -> None:
    config = parse_config("", {})
    assert (config.port, config.indexes, config.api_keys) == (3000, {}, ())


# -- substitution --------------------------------------------------------------------------


def test_substitution_of_set_variables_and_defaults() -> None:
    text = index_yaml("""
engine: elasticsearch
host: ${ES_HOST}
indexName: ${ES_INDEX:-books}
apiKey: ${ES_KEY:-none}
""")
    config = parse_config(text, {"ES_HOST": "http://es:9200", "ES_KEY": "k1"})
    books = config.indexes["books"]
    assert (books.host, books.index_name, books.api_key) == ("http://es:9200", "books", "k1")


def test_substitution_inside_a_longer_value() -> None:
    text = index_yaml("engine: elasticsearch\nhost: http://${H}:${P:-9200}/x\nindexName: i")
    assert parse_config(text, {"H": "es"}).indexes["books"].host == "http://es:9200/x"


def test_a_commented_out_variable_does_not_stop_startup() -> None:
    text = "# apiKey: ${UNSET_IN_A_COMMENT}\nport: 3001  # ${ALSO_UNSET}\n" + TANTIVY
    assert parse_config(text, {}).port == 3001


@pytest.mark.parametrize("value", ["abc#def", "a: b", "x:-y", "#start", "p@ss w#rd:1"])
def test_values_from_the_environment_stay_whole(value: str) -> None:
    config = parse_config("apiKey: ${API_SECRET}\n", {"API_SECRET": value})
    assert config.api_keys == (value,)


@pytest.mark.parametrize("value", ["000123", "12345", "1e3", "true"])
def test_an_env_value_for_a_string_key_stays_a_string(value: str) -> None:
    text = index_yaml("engine: elasticsearch\nhost: h\nindexName: ${IDX}\napiKey: ${KEY}")
    books = parse_config(text, {"IDX": value, "KEY": value}).indexes["books"]
    assert books.index_name == value and books.api_key == value


def test_an_empty_variable_falls_back_to_the_default() -> None:
    config = parse_config("port: ${PORT:-3100}\n", {"PORT": ""})
    assert config.port == 3100


def test_an_empty_variable_without_a_default_is_empty() -> None:
    assert parse_config("host: x${EMPTY}y\n", {"EMPTY": ""}).host == "xy"


def test_a_missing_variable_names_the_variable_and_the_key_path() -> None:
    message = config_error(index_yaml("engine: elasticsearch\nhost: h\nindexName: i\n"
                                      "apiKey: ${ES_API_KEY}"))
    assert "ES_API_KEY" in message
    assert "indexes.books.apiKey" in message


def test_a_missing_variable_in_a_list_names_its_position() -> None:
    message = config_error("apiKey: [one, '${SECOND_KEY}']\n")
    assert "SECOND_KEY" in message and "apiKey[1]" in message


# -- types, unknown keys and engines, with key paths ---------------------------------------


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("port: abc\n", "port"),
        ("port: 70000\n", "port"),
        ("apiKey: 12345\n", "apiKey"),
        ("cache: {backend: memcached}\n", "cache.backend"),
        ("limits: {maxBodyBytes: 10}\n", "limits.maxBodyBytes"),
        ("corsOrigins: 5\n", "corsOrigins"),
        (index_yaml("engine: solr"), "indexes.books.engine"),
        (index_yaml("engine: 3"), "indexes.books.engine"),
        (index_yaml("path: x"), "indexes.books: Object missing required field `engine`"),
        (index_yaml("engine: tantivy\npath: x\ntimeout: 0"), "indexes.books.timeout"),
        (index_yaml("engine: tantivy\npath: x\nrawQuery: maybe"), "indexes.books.rawQuery"),
        (index_yaml("engine: tantivy\npath: x\nmaxResultWindow: 0"),
         "indexes.books.maxResultWindow"),
        (index_yaml("engine: tantivy\npath: x\ndefaults: {perPage: 0}"),
         "indexes.books.defaults.perPage"),
        (index_yaml("engine: tantivy\npath: x\ndefaults: {facets: region}"),
         "indexes.books.defaults.facets"),
        (index_yaml("engine: tantivy\npath: x\nfields: {title: {weight: -1}}"),
         "indexes.books.fields.title.weight"),
        (index_yaml("engine: tantivy\npath: x\nfields: {title: {type: string}}"),
         "indexes.books.fields.title.type"),
        (index_yaml("engine: tantivy\npath: x\nfields: {a.b: {weight: x}}"),
         "indexes.books.fields.a.b.weight"),
    ],
)
def test_wrong_types_name_the_key_path(text: str, path: str) -> None:
    assert config_error(text).startswith(path)


@pytest.mark.parametrize(
    ("text", "where", "key"),
    [
        ("prot: 3000\n", "", "prot"),
        ("cache: {backend: none, ttl: 3}\n", "cache", "ttl"),
        (index_yaml("engine: tantivy\npath: x\nindex: books"), "indexes.books", "index"),
        (index_yaml("engine: tantivy\npath: x\nfields: {title: {wieght: 3}}"),
         "indexes.books.fields.title", "wieght"),
        (index_yaml("engine: tantivy\npath: x\ndefaults: {per_page: 3}"),
         "indexes.books.defaults", "per_page"),
    ],
)
def test_unknown_keys_name_the_key_and_its_place(text: str, where: str, key: str) -> None:
    message = config_error(text)
    assert key in message
    assert message.startswith(where)


@pytest.mark.parametrize("engine", [e.name for e in ENGINES if not e.from_log])
def test_every_engine_name_is_accepted(engine: str) -> None:
    text = index_yaml(f"engine: {engine}\nhost: http://h\nindexName: i\npath: p")
    assert parse_config(text, {}).indexes["books"].engine == engine


def test_engine_names_are_the_documented_ones() -> None:
    assert set(ENGINE_NAMES) == {"elasticsearch", "opensearch", "meilisearch", "typesense",
                                 "tantivy", "querySuggestions"}


# -- API key -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "environ", "keys"),
    [
        ("", {}, ()),
        ("", {"API_KEY": "from-env"}, ("from-env",)),
        ("apiKey: ''\n", {"API_KEY": "from-env"}, ("from-env",)),
        ("apiKey: []\n", {"API_KEY": "from-env"}, ("from-env",)),
        ("apiKey:\n", {"API_KEY": "from-env"}, ("from-env",)),
        ("apiKey: from-file\n", {"API_KEY": "from-env"}, ("from-file",)),
        ("apiKey: [k1, k2]\n", {"API_KEY": "from-env"}, ("k1", "k2")),
        ("apiKey: [k1, k2]\n", {}, ("k1", "k2")),
        ("apiKey: ${API_KEY:-}\n", {}, ()),
        ("apiKey: ${API_KEY:-}\n", {"API_KEY": "sub"}, ("sub",)),
        ("apiKey: ${MY_KEY:-}\n", {"API_KEY": "from-env"}, ("from-env",)),
        ("", {"API_KEY": ""}, ()),
    ],
)
def test_api_key_sources(text: str, environ: dict[str, str], keys: tuple[str, ...]) -> None:
    assert parse_config(text, environ).api_keys == keys


# -- cross-key checks ----------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["elasticsearch", "opensearch", "meilisearch", "typesense"])
def test_server_engines_need_host_and_index_name(engine: str) -> None:
    assert "indexes.books.host" in config_error(index_yaml(f"engine: {engine}\nindexName: i"))
    assert "indexes.books.indexName" in config_error(index_yaml(f"engine: {engine}\nhost: h"))
    assert "indexes.books.indexName" in config_error(
        index_yaml(f"engine: {engine}\nhost: h\nindexName: []")
    )


def test_tantivy_needs_a_path() -> None:
    assert "indexes.books.path" in config_error(index_yaml("engine: tantivy"))


@pytest.mark.parametrize("engine", ["elasticsearch", "opensearch"])
def test_index_name_lists_on_elasticsearch_family(engine: str) -> None:
    config = parse_config(index_yaml(f"engine: {engine}\nhost: h\nindexName: [a, b]"), {})
    assert config.indexes["books"].index_name == ["a", "b"]


@pytest.mark.parametrize("engine", ["meilisearch", "typesense"])
def test_index_name_lists_elsewhere_are_refused(engine: str) -> None:
    message = config_error(index_yaml(f"engine: {engine}\nhost: h\nindexName: [a, b]"))
    assert "indexes.books.indexName" in message


@pytest.mark.parametrize("engine", ["meilisearch", "typesense", "tantivy"])
def test_nested_path_only_on_elasticsearch_family(engine: str) -> None:
    body = f"engine: {engine}\nhost: h\nindexName: i\npath: p\n" \
           "fields: {color: {field: variants.color, nestedPath: variants}}"
    assert "indexes.books.fields.color.nestedPath" in config_error(index_yaml(body))


def test_nested_path_on_elasticsearch() -> None:
    body = "engine: elasticsearch\nhost: h\nindexName: i\n" \
           "fields: {color: {field: variants.color, nestedPath: variants}}"
    field = parse_config(index_yaml(body), {}).indexes["books"].fields["color"]
    assert field.nested_path == "variants"


def test_alias_conflicts_stop_startup() -> None:
    body = "engine: tantivy\npath: p\n" \
           "fields: {region: {field: continent}, area: {field: continent}}"
    message = config_error(index_yaml(body))
    assert message.startswith("indexes.books")
    assert "continent" in message


@pytest.mark.parametrize(
    "handle", ["health", "indexes", "openapi", "cache", "1", "'a b'", "'a/b'", "'-x'", "'x' * 65"]
)
def test_reserved_or_invalid_handles(handle: str) -> None:
    if handle == "'x' * 65":
        handle = "x" * 65
    message = config_error(f"indexes:\n  {handle}:\n    engine: tantivy\n    path: p\n")
    assert message.startswith("indexes.")


@pytest.mark.parametrize("handle", ["books", "Books_2", "v1.cities", "a-b", "9lives", "x" * 64])
def test_valid_handles(handle: str) -> None:
    text = f"indexes:\n  {handle}:\n    engine: tantivy\n    path: p\n"
    assert list(parse_config(text, {}).indexes) == [handle]


@pytest.mark.parametrize(
    "text", ["a: [\n", "- just\n- a list\n", "indexes: [books]\n", "indexes:\n  books:\n"]
)
def test_malformed_documents_are_config_errors(text: str) -> None:
    assert config_error(text)


def test_handles_keep_config_order() -> None:
    text = "indexes:\n" + "".join(
        f"  {h}:\n    engine: tantivy\n    path: {h}\n" for h in ["zeta", "alpha", "mid"]
    )
    assert list(parse_config(text, {}).indexes) == ["zeta", "alpha", "mid"]


@pytest.mark.parametrize("name", ["objectID", "_index", "_score", "_highlights"])
def test_a_field_cannot_be_named_like_hit_metadata(name: str) -> None:
    text = (
        "indexes:\n  h:\n    engine: tantivy\n    path: x\n    fields:\n"
        f"      {name}: {{field: sku}}\n"
    )
    with pytest.raises(ConfigError, match=f"indexes.h.fields.{name}"):
        parse_config(text, {})


# -- relevance: customRanking, typoTolerance, prefixSearch -------------------------------


RANKED = """
engine: {engine}
path: idx/books
host: http://127.0.0.1:9200
indexName: books
fields:
  title: {{ type: text }}
  year: {{ type: integer }}
  born: {{ field: author_born, type: date }}
  genre: {{ type: keyword }}
  rating: {{}}
customRanking: {ranking}
"""


def test_custom_ranking_keys_are_read_with_a_default_direction() -> None:
    text = index_yaml(RANKED.format(engine="tantivy",
                                    ranking='[{field: year}, {field: born, order: asc}]'))
    index = parse_config(text, {}).indexes["books"]
    assert [(k.field, k.order) for k in index.custom_ranking] == [("year", "desc"),
                                                                    ("born", "asc")]
    assert index.prefix_search is True and index.typo_tolerance.enabled is True
    assert (index.typo_tolerance.one_typo_from, index.typo_tolerance.two_typos_from) == (5, 9)


@pytest.mark.parametrize(("engine", "ranking", "message"), [
    ("tantivy", "[{field: genre}]", "customRanking[0].field: 'genre' is a keyword field; "
                                    "custom ranking takes integer, float or date fields"),
    ("elasticsearch", "[{field: title}]", "customRanking[0].field: 'title' is a text field"),
    ("tantivy", "[{field: year}, {field: pages}]", "customRanking[1].field: 'pages' is not "
                                                   "in fields; add it with type integer"),
    ("tantivy", "[{field: rating}]", "customRanking[0].field: give 'rating' a type"),
    ("typesense", "[{field: year}, {field: year, order: asc}]", "'year' is named twice"),
    ("tantivy", "[{field: year, order: up}]", "customRanking[0].order"),
    ("tantivy", "[year]", "customRanking[0]"),
])
def test_custom_ranking_mistakes_name_the_key(engine: str, ranking: str, message: str) -> None:
    assert message in config_error(index_yaml(RANKED.format(engine=engine, ranking=ranking)))


def test_server_engines_may_rank_by_fields_not_configured() -> None:
    text = index_yaml(RANKED.format(engine="typesense", ranking="[{field: sales}]"))
    assert parse_config(text, {}).indexes["books"].custom_ranking[0].field == "sales"


@pytest.mark.parametrize(("typos", "message"), [
    ("{oneTypoFrom: 6, twoTyposFrom: 4}", "typoTolerance.twoTyposFrom: must be at least "
                                          "oneTypoFrom (6)"),
    ("{oneTypoFrom: 0}", "typoTolerance.oneTypoFrom"),
    ("{enabled: maybe}", "typoTolerance.enabled"),
])
def test_typo_tolerance_mistakes_name_the_key(typos: str, message: str) -> None:
    text = index_yaml(f"engine: tantivy\npath: idx\ntypoTolerance: {typos}")
    assert message in config_error(text)


# -- analytics -----------------------------------------------------------------------------


def test_analytics_defaults_to_an_sqlite_file() -> None:
    settings = parse_config("", {}).analytics
    assert (settings.backend, settings.path, settings.url, settings.retention_days) == (
        "sqlite", None, None, 90)


def test_analytics_postgres_takes_its_url_from_the_environment() -> None:
    url = "postgresql://searchport:s3cret@db.internal:5432/analytics"
    config = parse_config("analytics:\n  backend: postgres\n  url: ${ANALYTICS_DATABASE_URL}\n"
                          "  retentionDays: 30\n", {"ANALYTICS_DATABASE_URL": url})
    assert (config.analytics.backend, config.analytics.url,
            config.analytics.retention_days) == ("postgres", url, 30)


@pytest.mark.parametrize(("text", "message"), [
    ("analytics:\n  backend: postgres\n", "analytics.url: required for backend postgres"),
    ("analytics:\n  backend: postgres\n  url: mysql://u:s3cret@h/db\n",
     "analytics.url: must be a postgresql:// URL"),
    ("analytics:\n  url: postgresql://u:s3cret@h/db\n",
     "analytics.url: only for backend postgres (backend is sqlite)"),
    ("analytics:\n  backend: none\n  path: a.sqlite3\n",
     "analytics.path: only for backend sqlite (backend is none)"),
    ("analytics:\n  backend: mongo\n", "analytics.backend"),
    ("analytics:\n  retentionDays: 0\n", "analytics.retentionDays"),
])
def test_analytics_config_errors(text: str, message: str) -> None:
    error = config_error(text)
    assert error.startswith(message) and "s3cret" not in error
