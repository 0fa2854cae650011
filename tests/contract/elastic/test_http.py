"""The connection level: URLs, authentication headers, content types, the configuration
checks at startup, the ping of ``searchport check`` and the product check."""

from __future__ import annotations

import asyncio
import base64
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from searchport.adapters.config_loader import parse_config
from searchport.adapters.elastic import (
    ElasticCompatEngine,
    create_elasticsearch,
    create_opensearch,
)
from searchport.adapters.network.pools import EnginePools
from searchport.adapters.resources import EngineResources
from searchport.domain.config import ConfigError, IndexConfig
from searchport.domain.errors import EngineTimeout, EngineUnavailable
from tests.contract.elastic import es_answers as es
from tests.contract.elastic.conftest import (
    EngineDouble,
    EsApp,
    Recorder,
    Reply,
    build_container,
    city_yaml,
)
from tests.contract.scripted import LoopbackEngine, OffSpec, engine_served


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def one_search(app: EsApp, double: EngineDouble) -> None:
    double.search((200, es.empty_search()))
    response = app.get("/cities/search", params={"q": "x"})
    assert response.status_code == 200, response.text


# ---------------------------------------------------------------- urls and headers


def test_requests_and_their_headers(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble(engine)
    app = es_app(city_yaml(engine), double)
    one_search(app, double)
    mapping, search = app.sent
    assert (mapping.method, mapping.url) == ("GET", "http://es.test:9200/cities/_mapping")
    assert (search.method, search.url) == ("POST", "http://es.test:9200/cities/_search")
    for sent in app.sent:
        assert sent.headers["accept"] == "application/json"
        assert "authorization" not in sent.headers  # nothing configured, nothing sent
    assert "content-type" not in mapping.headers and mapping.content == b""
    assert search.headers["content-type"] == "application/json"
    assert int(search.headers["content-length"]) == len(search.content)


@pytest.mark.parametrize("host", ["http://es.test:9200/es", "http://es.test:9200/es/"])
def test_a_host_with_a_path_prefix(
    engine: str, es_app: Callable[..., EsApp], host: str
) -> None:
    double = EngineDouble(engine, prefix="/es")
    app = es_app(city_yaml(engine, host=host), double)
    one_search(app, double)
    assert [s.url for s in app.sent] == [
        "http://es.test:9200/es/cities/_mapping", "http://es.test:9200/es/cities/_search"
    ]


def test_a_host_without_a_scheme_is_http(engine: str, es_app: Callable[..., EsApp]) -> None:
    double = EngineDouble(engine)
    app = es_app(city_yaml(engine, host="search.internal:9201"), double)
    one_search(app, double)
    assert app.sent[-1].url == "http://search.internal:9201/cities/_search"


def test_index_names_are_quoted_in_paths(engine: str, es_app: Callable[..., EsApp]) -> None:
    double = EngineDouble(engine, index="logs-%3Cd%3E,st%C3%A4dte")
    app = es_app(city_yaml(engine, index_name=["logs-<d>", "städte"]), double)
    double.on("POST", "/logs-%3Cd%3E,st%C3%A4dte/_search", (200, es.empty_search()))
    assert app.get("/cities/search").status_code == 200
    assert app.sent[-1].decoded_path == "/logs-<d>,städte/_search"


ENCODED_KEY = "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw=="  # id:api_key


def test_elasticsearch_api_key(es_app: Callable[..., EsApp]) -> None:
    double = EngineDouble("elasticsearch")
    app = es_app(city_yaml("elasticsearch", settings=f"apiKey: {ENCODED_KEY}"), double)
    one_search(app, double)
    assert [s.headers["authorization"] for s in app.sent] == [f"ApiKey {ENCODED_KEY}"] * 2


def test_api_key_from_the_environment(es_app: Callable[..., EsApp]) -> None:
    double = EngineDouble("elasticsearch")
    app = es_app(city_yaml("elasticsearch", settings="apiKey: ${ES_API_KEY}"), double,
                 environ={"ES_API_KEY": "a2V5OnNlY3JldA=="})
    one_search(app, double)
    assert app.sent[-1].headers["authorization"] == "ApiKey a2V5OnNlY3JldA=="


@pytest.mark.parametrize(("settings", "user", "password"), [
    ("username: elastic\npassword: chang:e me", "elastic", "chang:e me"),
    ("username: reader", "reader", ""),
])
def test_basic_authentication_from_username_and_password(
    engine: str, es_app: Callable[..., EsApp], settings: str, user: str, password: str
) -> None:
    double = EngineDouble(engine)
    app = es_app(city_yaml(engine, settings=settings), double)
    one_search(app, double)
    assert [s.headers["authorization"] for s in app.sent] == [basic(user, password)] * 2


@pytest.mark.parametrize(("host", "user", "password"), [
    ("https://admin:hunter2@es.test:9200", "admin", "hunter2"),
    # RFC 3986: reserved characters of a user or password are percent-encoded in a URL
    ("https://ad%40min:p%40ss%3Aw%2Fd@es.test:9200", "ad@min", "p@ss:w/d"),
    ("https://admin@es.test:9200", "admin", ""),
])
def test_basic_authentication_from_the_host_url(
    engine: str, es_app: Callable[..., EsApp], host: str, user: str, password: str
) -> None:
    double = EngineDouble(engine)
    app = es_app(city_yaml(engine, host=host), double)
    one_search(app, double)
    for sent in app.sent:
        assert sent.headers["authorization"] == basic(user, password)
        assert sent.url.startswith("https://es.test:9200/")  # credentials out of the URL
        assert "@" not in sent.url


def test_username_wins_over_credentials_in_the_url(
    engine: str, es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble(engine)
    app = es_app(city_yaml(engine, host="https://old:stale@es.test",
                           settings="username: new\npassword: fresh"), double)
    one_search(app, double)
    assert app.sent[-1].headers["authorization"] == basic("new", "fresh")
    assert app.sent[-1].url == "https://es.test/cities/_search"


def test_api_key_wins_over_credentials_in_the_url(es_app: Callable[..., EsApp]) -> None:
    double = EngineDouble("elasticsearch")
    app = es_app(city_yaml("elasticsearch", host="https://old:stale@es.test",
                           settings="apiKey: a2V5"), double)
    one_search(app, double)
    assert app.sent[-1].headers["authorization"] == "ApiKey a2V5"
    assert app.sent[-1].url == "https://es.test/cities/_search"


def test_two_handles_on_one_host_keep_their_own_credentials(
    es_app: Callable[..., EsApp]
) -> None:
    double = EngineDouble("elasticsearch", index="towns")
    double.on("GET", "/cities/_mapping", (200, es.city_mapping()))
    double.on("POST", "/cities/_search", (200, es.empty_search()))
    double.on("POST", "/towns/_search", (200, es.empty_search()))
    yaml = (city_yaml("elasticsearch", settings="apiKey: Zmlyc3Q=")
            + city_yaml("elasticsearch", handle="towns", index_name="towns",
                        settings="username: u\npassword: p").removeprefix("indexes:\n"))
    app = es_app(yaml, double)
    assert app.get("/cities/search").status_code == 200
    assert app.get("/towns/search").status_code == 200
    auth = {(s.path, s.headers["authorization"]) for s in app.sent}
    assert auth == {
        ("/cities/_mapping", "ApiKey Zmlyc3Q="), ("/cities/_search", "ApiKey Zmlyc3Q="),
        ("/towns/_mapping", basic("u", "p")), ("/towns/_search", basic("u", "p")),
    }


# ---------------------------------------------------------------- configuration errors


@pytest.mark.parametrize(("engine_name", "settings", "where"), [
    ("opensearch", "apiKey: a2V5", "indexes.cities.apiKey"),
    ("opensearch", "apiKey: a2V5\nusername: u", "indexes.cities.apiKey"),
    ("elasticsearch", "apiKey: a2V5\nusername: elastic", "indexes.cities.apiKey"),
])
def test_authentication_settings_that_cannot_work_stop_startup(
    engine_name: str, settings: str, where: str
) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(where)}: "):
        parse_config(city_yaml(engine_name, settings=settings), {})


@pytest.mark.parametrize("host", [
    "http://es.test:99999", "ftp://es.test", "http://", "http://[::1", "http://es.test:port",
])
def test_a_bad_host_stops_startup(engine: str, host: str) -> None:
    with pytest.raises(ConfigError, match=r"^indexes\.cities\.host: "):
        parse_config(city_yaml(engine, host=host), {})
    # the adapter makes the same check when handed a config that skipped the loader
    config = msgspec.convert({"engine": engine, "host": host, "indexName": "cities"},
                             IndexConfig)
    resources = EngineResources(base_dir=Path("."), pools=EnginePools())
    factory = create_elasticsearch if engine == "elasticsearch" else create_opensearch
    with pytest.raises(ConfigError, match=r"^indexes\.cities\.host: "):
        factory("cities", config, resources)


@pytest.mark.parametrize("content", [None, "not a certificate\n"])
def test_a_bad_ca_bundle_stops_startup(engine: str, tmp_path: Path, content: str | None) -> None:
    if content is not None:
        (tmp_path / "ca.pem").write_text(content)
    yaml = city_yaml(engine, host="https://es.test:9200", settings="caBundle: ca.pem")
    with pytest.raises(ConfigError, match=r"^indexes\.cities\.caBundle: ") as caught:
        build_container(yaml, EngineDouble(engine), base_dir=tmp_path)
    assert str(tmp_path / "ca.pem") in str(caught.value)


def test_a_ca_bundle_path_is_relative_to_the_config(engine: str, tmp_path: Path) -> None:
    certifi = pytest.importorskip("certifi")
    (tmp_path / "ca.pem").write_bytes(Path(certifi.where()).read_bytes())
    yaml = city_yaml(engine, host="https://es.test:9200", settings="caBundle: ca.pem")
    build_container(yaml, EngineDouble(engine), base_dir=tmp_path)  # no error


# ---------------------------------------------------------------- ping


def engine_over(engine: str, handler: Recorder, **settings: Any
                ) -> tuple[ElasticCompatEngine, EnginePools, LoopbackEngine]:
    """The adapter alone (as ``searchport check`` builds it), over ``handler``."""
    config = msgspec.convert({"engine": engine, "host": "http://es.test:9200",
                              "indexName": "cities", **settings}, IndexConfig)
    served = LoopbackEngine(handler)
    pools = EnginePools(network=served.network)
    factory = create_elasticsearch if engine == "elasticsearch" else create_opensearch
    adapter = factory("cities", config, EngineResources(base_dir=Path("."), pools=pools))
    return adapter, pools, served


def ping(engine: str, reply: Reply, **settings: Any) -> Recorder:
    double = EngineDouble(engine)
    double.search(reply)
    recorder = Recorder(double)
    adapter, pools, served = engine_over(engine, recorder, **settings)

    async def run() -> None:
        try:
            await adapter.ping()
        finally:
            await adapter.close()
            await pools.aclose()

    with engine_served(served):
        asyncio.run(run())
    return recorder


def test_ping_is_an_empty_search_of_the_index(engine: str) -> None:
    recorder = ping(engine, (200, es.empty_search()), username="u", password="p")
    [sent] = recorder.sent
    assert (sent.method, sent.url) == ("POST", "http://es.test:9200/cities/_search")
    assert sent.body == {"size": 0, "track_total_hits": False, "query": {"match_none": {}}}
    assert sent.headers["authorization"] == basic("u", "p")


@pytest.mark.parametrize(("reply", "error"), [
    (OffSpec((401, {"error": "x"})), EngineUnavailable),  # a proxy's 401, not the engine's
    ((404, es.index_not_found()), EngineUnavailable),
    ((503, es.unavailable_503()), EngineUnavailable),
    (httpx.ConnectError("Connection refused"), EngineUnavailable),
    (httpx.ReadTimeout("timed out"), EngineTimeout),
])
def test_ping_failures(engine: str, reply: Reply, error: type[Exception]) -> None:
    with pytest.raises(error):
        ping(engine, reply)


# ---------------------------------------------------------------- product check


def product_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "searchport.elastic" and r.levelno == logging.WARNING]


@pytest.mark.parametrize(("engine", "header", "warned"), [
    ("elasticsearch", True, None),
    ("elasticsearch", False, "X-Elastic-Product"),
    ("opensearch", False, None),
    ("opensearch", True, "engine: elasticsearch"),
])
def test_the_product_check_warns_once(
    es_app: Callable[..., EsApp], caplog: pytest.LogCaptureFixture,
    engine: str, header: bool, warned: str | None,
) -> None:
    caplog.set_level(logging.WARNING, logger="searchport.elastic")
    double = EngineDouble(engine, product_header=header)
    app = es_app(city_yaml(engine), double)
    for _ in range(3):
        one_search(app, double)
    warnings = product_warnings(caplog)
    if warned is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warned in warnings[0]
        assert warnings[0].startswith("cities: ")


# ---------------------------------------------------------------- timeout


@pytest.mark.parametrize(("settings", "seconds"), [("", 5.0), ("timeout: 2.5", 2.5)])
def test_every_request_carries_the_index_timeout(
    engine: str, es_app: Callable[..., EsApp], settings: str, seconds: float
) -> None:
    """docs/operations.md: ``timeout`` per index, in seconds, default 5, bounds each call as
    a whole: the startup's mapping read is given all of it, a search what is left of it once
    the search began (the loopback engine records what the client is handed)."""
    double = EngineDouble(engine)
    app = es_app(city_yaml(engine, settings=settings), double)
    one_search(app, double)
    mapping, search = app.served.timeouts
    assert mapping == seconds
    assert seconds - 1.0 < search <= seconds

    double.search(httpx.ReadTimeout("The read operation timed out"))
    response = app.get("/cities/search", params={"q": "x"})
    assert response.status_code == 504
    assert response.json() == {
        "error": f"The {engine} engine did not answer within {seconds:g} s"
    }
