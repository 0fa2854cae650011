"""Load ``config.yaml``: YAML, then ``${VAR}`` substitution on scalar values, then typed
conversion and the cross-key checks, each failure naming its key path."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import yaml

from searchport.adapters.network.address import EngineAddress, proxy_address
from searchport.adapters.semantic.settings import check_semantic
from searchport.domain.access import handle_pattern
from searchport.domain.config import (
    CacheConfig,
    Config,
    ConfigError,
    DefaultsConfig,
    FieldConfig,
    IndexCacheConfig,
    IndexConfig,
    RankingKey,
    RelevantSortConfig,
    SortKey,
)
from searchport.domain.engines import BY_NAME, Engine
from searchport.domain.errors import InvalidRequest
from searchport.domain.fields import METADATA_KEYS, FieldMap, alias_conflicts
from searchport.domain.params import parse_filters
from searchport.domain.rules.format import ExportedRule, Rule, decode_rule, without_bookkeeping
from searchport.domain.suggestions import layout as suggestion_layout
from searchport.domain.suggestions.layout import suggestions_config
from searchport.domain.suggestions.selection import exclusion

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_HANDLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
RESERVED_HANDLES = frozenset({"health", "indexes", "openapi", "cache", "metrics", "ui", "1"})


def substitute(value: Any, environ: Mapping[str, str], path: str = "") -> Any:
    """Replace ``${VAR}`` and ``${VAR:-default}`` inside string scalars, recursively."""
    if isinstance(value, dict):
        return {
            k: substitute(v, environ, f"{path}.{k}" if path else str(k)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [substitute(v, environ, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = environ.get(name)
        if found:  # shell semantics: an empty variable falls back to the default
            return found
        if default is not None:
            return default
        if found is not None:
            return found
        raise ConfigError(f"Environment variable {name} is not set (used at {path or 'top level'})")

    return _VAR.sub(replace, value)


def _convert(data: Any, kind: type[Any], where: str) -> Any:
    try:
        return msgspec.convert(data, kind, strict=False)
    except msgspec.ValidationError as exc:
        message = str(exc)
        detail, _, at = message.partition(" - at `$")
        path = f"{where}{at.rstrip('`')}".lstrip(".")  # top-level paths have no leading dot
        raise ConfigError(f"{path}: {detail}" if path else detail) from None


def _index(handle: str, raw: Any, base_dir: Path | None, with_rules: bool = True
           ) -> IndexConfig:
    where = f"indexes.{handle}"
    rules: list[Rule] = []
    _suggestion_keys(where, raw)
    if isinstance(raw, dict) and isinstance(raw.get("fields"), dict):
        for name, field in raw["fields"].items():
            _convert(field, FieldConfig, f"{where}.fields.{name}")
    if isinstance(raw, dict) and raw.get("rules") is not None:
        raw = dict(raw)
        value = raw.pop("rules")
        if with_rules:
            rules = read_rules(value, f"{where}.rules", base_dir)
    index: IndexConfig = _convert(raw, IndexConfig, where)
    if BY_NAME[index.engine].from_log:
        index = suggestions_config(handle, index)
    return msgspec.structs.replace(index, rules=rules) if rules else index


def _suggestion_keys(where: str, raw: Any) -> None:
    """A querySuggestions handle takes its options and how it is served, nothing of an
    engine's own; its options are for no other engine."""
    if not isinstance(raw, dict):
        return
    engine = BY_NAME.get(str(raw.get("engine")))
    if engine is None:
        return  # the conversion names the engine key
    for key in raw:
        if engine.from_log and key not in suggestion_layout.OPTIONS | suggestion_layout.SERVING:
            raise ConfigError(f"{where}.{key}: not a setting of engine {engine.name} (it "
                              f"takes {', '.join(sorted(suggestion_layout.OPTIONS))})")
        if not engine.from_log and key in suggestion_layout.OPTIONS - {"source"}:
            raise ConfigError(f"{where}.{key}: only for engine querySuggestions")


def check_suggestions(config: Config) -> None:
    """Each querySuggestions handle names a handle to suggest from, whose searches are
    logged, patterns that compile, and facets of that handle."""
    for handle, index in config.indexes.items():
        if not BY_NAME[index.engine].from_log:
            continue
        where = f"indexes.{handle}"
        if config.analytics.backend == "none":
            raise ConfigError(f"{where}.engine: querySuggestions is built from the query log, "
                              f"which analytics.backend none turns off: use sqlite or postgres")
        source = config.indexes.get(index.source or "")
        if not index.source:
            raise ConfigError(f"{where}.source: required for engine querySuggestions (the "
                              f"handle whose popular searches it suggests)")
        if source is None:
            raise ConfigError(f"{where}.source: {index.source!r} is not a configured handle")
        if BY_NAME[source.engine].from_log:
            raise ConfigError(f"{where}.source: {index.source!r} is itself a querySuggestions "
                              f"handle; name the handle people search")
        for i, pattern in enumerate(index.exclude):
            if not pattern.strip():
                raise ConfigError(f"{where}.exclude[{i}]: an empty pattern would exclude "
                                  f"every query")
            try:
                exclusion([pattern])
            except re.error as exc:
                raise ConfigError(f"{where}.exclude[{i}]: not a regular expression ({exc})"
                                  ) from None
        seen: set[str] = set()
        for i, facet in enumerate(index.facets):
            at = f"{where}.facets[{i}].attribute"
            if facet.attribute in seen:
                raise ConfigError(f"{at}: {facet.attribute!r} is named twice")
            seen.add(facet.attribute)
            if source.fields and facet.attribute not in source.fields:
                raise ConfigError(f"{at}: {facet.attribute!r} is not a field of "
                                  f"{index.source} (its fields: {', '.join(source.fields)})")
REPLICA_KEYS = ("replicaOf", "sort", "relevantSort", "customRanking", "defaults", "cache")
SORTABLE_TYPES = frozenset({"keyword", "integer", "float", "boolean", "date"})


def _is_replica(raw: Any) -> bool:
    return isinstance(raw, dict) and raw.get("replicaOf") is not None


def replica(handle: str, raw: dict[str, Any], primaries: Mapping[str, IndexConfig],
            handles: frozenset[str] = frozenset()) -> IndexConfig:
    """A replica's settings: its primary's, with its own order (docs/replicas.md)."""
    where = f"indexes.{handle}"
    name = raw["replicaOf"]
    primary = primaries.get(name) if isinstance(name, str) else None
    if primary is None:
        known = isinstance(name, str) and name in handles
        raise ConfigError(f"{where}.replicaOf: {name!r} is " + (
            "a replica itself; name its primary" if known else "not a configured handle"))
    extra = [key for key in raw if key not in REPLICA_KEYS]
    if extra:
        raise ConfigError(
            f"{where}.{extra[0]}: a replica shares the engine, index, fields and rules of "
            f"indexes.{name}; it sets only {', '.join(REPLICA_KEYS)}")
    if raw.get("sort") and raw.get("relevantSort") is not None:
        raise ConfigError(f"{where}.relevantSort: a replica has sort (a standard replica) "
                          "or relevantSort (a virtual replica), not both")
    index = msgspec.structs.replace(primary, replica_of=name)
    if raw.get("defaults") is not None:
        index = msgspec.structs.replace(index, defaults=_convert(
            raw["defaults"], DefaultsConfig, f"{where}.defaults"))
    if raw.get("cache") is not None:
        index = msgspec.structs.replace(index, cache=_convert(
            raw["cache"], IndexCacheConfig, f"{where}.cache"))
    if raw.get("relevantSort") is not None:
        ranking = _convert(raw.get("customRanking") or [], list[RankingKey],
                           f"{where}.customRanking")
        if not ranking:
            raise ConfigError(f"{where}.customRanking: a virtual replica (relevantSort) "
                              "orders its relevant hits by customRanking; give at least "
                              "one key")
        return msgspec.structs.replace(index, custom_ranking=ranking, relevant_sort=_convert(
            raw["relevantSort"], RelevantSortConfig, f"{where}.relevantSort"))
    if raw.get("customRanking"):
        raise ConfigError(f"{where}.customRanking: a standard replica orders by sort alone "
                          "(add keys to sort to break ties); customRanking is for "
                          "relevantSort")
    keys: list[SortKey] = _convert(raw.get("sort") or [], list[SortKey], f"{where}.sort")
    if not keys:
        raise ConfigError(f"{where}.sort: a replica needs sort (a standard replica: "
                          "[{field, order}]) or relevantSort with customRanking (a virtual "
                          "replica)")
    seen: set[str] = set()
    for i, key in enumerate(keys):
        at = f"{where}.sort[{i}].field"
        if key.field in seen:
            raise ConfigError(f"{at}: {key.field!r} is named twice")
        seen.add(key.field)
        field = index.fields.get(key.field)
        kind = None if field is None else field.type
        if kind is not None and kind not in SORTABLE_TYPES:
            raise ConfigError(f"{at}: {key.field!r} is a {kind} field; sort by a keyword, "
                              "number, boolean or date field")
        if kind is None and index.engine == "tantivy":
            raise ConfigError(f"{at}: give {key.field!r} a type in indexes.{name}.fields "
                              "(keyword, integer, float, boolean or date) to sort by it")
    return msgspec.structs.replace(index, sort=keys)


MAX_RULES_FILE_BYTES = 256 * 1024 * 1024


def read_rules(value: Any, where: str, base_dir: Path | None) -> list[Rule]:
    """``rules``: a list of rule objects, or the path of a JSON file holding Algolia's
    export (an array of rule objects, or one object per line as the Algolia CLI writes)."""
    if isinstance(value, str):
        path = (base_dir or Path.cwd()) / value
        try:
            with path.open("rb") as file:
                data = file.read(MAX_RULES_FILE_BYTES + 1)
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read the rules file {path}: "
                              f"{exc.strerror}") from None
        if len(data) > MAX_RULES_FILE_BYTES:
            raise ConfigError(f"{where}: the rules file {path} is over 256 MiB")
        try:
            return [rule.plain() for rule in _json_rules(data, ExportedRule)]
        except msgspec.ValidationError:
            pass  # the slow path below names the first invalid rule
        except msgspec.DecodeError as exc:
            raise ConfigError(f"{where}: the rules file {path} is not JSON ({exc})") from None
        value = _json_rules(data, Any)
        where = f"{where} ({path.name})"
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of rules or the path of a JSON file")
    value = [without_bookkeeping(item) for item in value]
    try:
        return msgspec.convert(value, list[Rule])  # the fast path: every rule is valid
    except msgspec.ValidationError:
        pass
    for i, item in enumerate(value):  # find the first invalid rule, to name it
        try:
            decode_rule(item)
        except msgspec.ValidationError as exc:
            detail, _, at = str(exc).partition(" - at `$")
            oid = item.get("objectID") if isinstance(item, dict) else None
            named = f" (rule {oid!r})" if isinstance(oid, str) else ""
            raise ConfigError(f"{where}[{i}]{at.rstrip('`')}: {detail}{named}") from None
    raise AssertionError("unreachable: the list failed to convert as a whole")


def _json_rules(data: bytes, kind: Any) -> Any:
    """The rules of a JSON file, an array or one object per line, decoded as ``kind``
    (straight into structs: no tree of dicts to build and free, whose holes would stay in
    the process's memory beside the rules)."""
    text = data.lstrip()
    if text.startswith(b"[") or not text:
        return msgspec.json.decode(data, type=list[kind])
    decoder = msgspec.json.Decoder(kind)
    return [decoder.decode(line) for line in data.splitlines() if line.strip()]


def check_index(handle: str, index: IndexConfig) -> None:
    where = f"indexes.{handle}"
    if not _HANDLE.match(handle) or handle in RESERVED_HANDLES:
        raise ConfigError(
            f"{where}: a handle must be letters, digits, '_', '.' or '-' (not one of "
            f"{', '.join(sorted(RESERVED_HANDLES))})"
        )
    engine = BY_NAME[index.engine]
    if engine.server:
        _check_server(where, index, engine)
    elif not index.path:
        raise ConfigError(f"{where}.path: required for engine {index.engine} (the index folder)")
    _check_fields(where, index, engine)
    check_semantic(where, index)
    if index.replica_of is None and (index.sort or index.relevant_sort is not None):
        key = "sort" if index.sort else "relevantSort"
        raise ConfigError(f"{where}.{key}: only a replica orders its hits this way; add "
                          f"replicaOf: <its primary handle> (docs/replicas.md)")
    _check_ranking(where, index)


def _check_server(where: str, index: IndexConfig, engine: Engine) -> None:
    """An engine server's address, index names and credentials."""
    if not index.host:
        raise ConfigError(f"{where}.host: required for engine {index.engine}")
    if not index.index_name:
        raise ConfigError(f"{where}.indexName: required for engine {index.engine}")
    if isinstance(index.index_name, list) and len(index.index_name) > 1 and (
        not engine.index_lists
    ):
        raise ConfigError(f"{where}.indexName: engine {index.engine} takes one index name")
    if isinstance(index.index_name, list) and not all(index.index_name):
        raise ConfigError(f"{where}.indexName: an index name cannot be empty")
    try:
        EngineAddress(index.host)
        if index.proxy is not None:
            proxy_address(index.proxy)
    except ConfigError as exc:
        raise ConfigError(f"{where}.{exc}") from None
    if index.engine == "opensearch" and index.api_key:
        raise ConfigError(
            f"{where}.apiKey: OpenSearch authenticates with username and password"
        )
    if index.engine == "elasticsearch" and index.api_key and index.username:
        raise ConfigError(
            f"{where}.apiKey: set either apiKey or username/password, not both"
        )


def _check_fields(where: str, index: IndexConfig, engine: Engine) -> None:
    """Field names that are not hit metadata, nested paths the engine reads, aliases
    that do not clash."""
    for name, field in index.fields.items():
        if name in METADATA_KEYS:
            raise ConfigError(
                f"{where}.fields.{name}: {name} is hit metadata and cannot name a field"
            )
        if field.nested_path and not engine.nested:
            raise ConfigError(
                f"{where}.fields.{name}.nestedPath: not supported by engine {index.engine}"
            )
    problems = alias_conflicts(index.fields)
    if problems:
        raise ConfigError(f"{where}: {problems[0]}")


RANKABLE_TYPES = frozenset({"integer", "float", "date"})


def _check_ranking(where: str, index: IndexConfig) -> None:
    """``customRanking`` names numeric or date fields, each once; the embedded engine needs
    them configured with their type (it orders by the values it indexed)."""
    seen: set[str] = set()
    for i, key in enumerate(index.custom_ranking):
        at = f"{where}.customRanking[{i}].field"
        field = index.fields.get(key.field)
        if key.field in seen:
            raise ConfigError(f"{at}: {key.field!r} is named twice")
        seen.add(key.field)
        if field is None and index.engine == "tantivy":
            raise ConfigError(
                f"{at}: {key.field!r} is not in fields; add it with type integer, float or "
                f"date to rank by it"
            )
        if field is not None and field.type is not None and field.type not in RANKABLE_TYPES:
            raise ConfigError(
                f"{at}: {key.field!r} is a {field.type} field; custom ranking takes integer, "
                f"float or date fields"
            )
        if field is not None and field.type is None and index.engine == "tantivy":
            raise ConfigError(f"{at}: give {key.field!r} a type (integer, float or date)")
    if index.engine == "typesense" and index.replica_of is None and len(
            index.custom_ranking) > 2:
        raise ConfigError(
            f"{where}.customRanking: Typesense sorts by at most 3 keys, relevance and two "
            f"custom ranking keys; keep two"
        )
    typos = index.typo_tolerance
    if typos.two_typos_from < typos.one_typo_from:
        raise ConfigError(
            f"{where}.typoTolerance.twoTyposFrom: must be at least oneTypoFrom "
            f"({typos.one_typo_from})"
        )


def parse_config(text: str, environ: Mapping[str, str], base_dir: Path | None = None, *,
                 rules: bool = True) -> Config:
    """``base_dir``: where relative paths in the config start (its folder); ``rules``
    false: the handles' rules are neither read nor checked (every handle has none)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"The config is not valid YAML{where}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("The config must be a YAML mapping of keys to values")
    data = substitute(data, environ)
    indexes = data.get("indexes") or {}
    if not isinstance(indexes, dict):
        raise ConfigError("indexes: expected a mapping of handle to index settings")
    primaries = {str(h): _index(str(h), raw, base_dir, rules) for h, raw in indexes.items()
                 if not _is_replica(raw)}
    parsed = {str(h): primaries[str(h)] if str(h) in primaries else
              replica(str(h), raw, primaries, frozenset(map(str, indexes)))
              for h, raw in indexes.items()}
    config: Config = _convert({**data, "indexes": {}}, Config, "")
    for handle, index in parsed.items():
        check_index(handle, index)
    api_key = config.api_key if config.api_key not in (None, "", []) else environ.get("API_KEY")
    config = msgspec.structs.replace(
        config, indexes=parsed, api_key=api_key or None, cache=_cache(config, data, environ)
    )
    check_keys(config)
    check_analytics(config)
    check_suggestions(config)
    return config


def check_analytics(config: Config) -> None:
    """Each backend takes its own keys; a PostgreSQL URL is one (never echoed: it may hold
    a password)."""
    settings = config.analytics
    if settings.backend == "postgres":
        if not settings.url:
            raise ConfigError("analytics.url: required for backend postgres (for instance "
                              "url: ${ANALYTICS_DATABASE_URL})")
        if not settings.url.startswith(("postgresql://", "postgres://")):
            raise ConfigError("analytics.url: must be a postgresql:// URL")
    elif settings.url:
        raise ConfigError(f"analytics.url: only for backend postgres (backend is "
                          f"{settings.backend})")
    if settings.path and settings.backend != "sqlite":
        raise ConfigError(f"analytics.path: only for backend sqlite (backend is "
                          f"{settings.backend})")


def check_keys(config: Config) -> None:
    """Named keys: distinct secrets, known handles, forced filters valid on every handle
    they apply to (a filter that cannot hold would silently hide everything)."""
    seen = set(config.api_keys)
    for name, key in config.keys.items():
        where = f"keys.{name}"
        if key.key in seen:
            raise ConfigError(f"{where}.key: the same secret as another key; each key needs "
                              "its own")
        seen.add(key.key)
        for handle in key.handles:
            if "*" not in handle and handle not in config.indexes:
                raise ConfigError(f"{where}.handles: {handle!r} is not a configured handle")
        for pattern, value in key.filters.items():
            matcher = handle_pattern((pattern,))
            handles = [h for h in config.indexes if matcher.fullmatch(h)]
            if not handles:
                raise ConfigError(f"{where}.filters: {pattern!r} matches no configured handle")
            for handle in handles:
                try:
                    parse_filters(value, FieldMap(config.indexes[handle].fields))
                except InvalidRequest as exc:
                    raise ConfigError(f"{where}.filters.{pattern}: {exc.message}") from None


def _cache(config: Config, data: dict[str, Any], environ: Mapping[str, str]) -> CacheConfig:
    """``REDIS_URL`` gives ``cache.url`` when the file has none; a URL (either) turns Redis on
    when the file names no ``cache.backend`` (as a bare ``REDIS_URL`` does in the reference)."""
    url = config.cache.url or environ.get("REDIS_URL")
    if not url:
        if config.cache.backend == "redis":
            raise ConfigError("cache.url: required for backend redis (or set REDIS_URL)")
        return config.cache
    section = data.get("cache")
    named = isinstance(section, dict) and section.get("backend") not in (None, "")
    cache = msgspec.structs.replace(
        config.cache, url=url, backend=config.cache.backend if named else "redis"
    )
    if cache.backend == "redis":
        from searchport.adapters.redis_link import check_url  # redis-py only when used

        try:
            check_url(url)
        except ValueError as exc:  # before the server starts, so check and serve both say it
            raise ConfigError(f"cache.url: {exc}") from None
    return cache


def load_config(path: Path, environ: Mapping[str, str] | None = None, *,
                rules: bool = True) -> Config:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"No config file at {path}: copy config.example.yaml to config.yaml "
            "or pass --config"
        ) from None
    except OSError as exc:
        raise ConfigError(f"Cannot read the config file {path}: {exc.strerror}") from None
    return parse_config(text, os.environ if environ is None else environ, path.parent,
                        rules=rules)
