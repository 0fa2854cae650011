"""No configured secret ever leaves searchport: after a run through every error path of a
real ``searchport serve`` process (bad tokens, bad input, engines refusing, failing, hanging,
unreachable, a Redis that is down, scoped and secured keys good and bad, ``searchport
check``), none of the secrets, nor the header values built from them, nor a secured key or
its HMAC, appears in any response (status line, headers, body), in the server's log or in
``check``'s output."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from algoliasearch.search.client import SearchClientSync

from tests.e2e.conftest import SEARCHPORT, start_server
from tests.misbehaving_upstream import MisbehavingUpstream, misbehaving_upstream, refused_port
from tests.redis_server import free_port

SERVICE_KEY = "svc-key-7Hq2Lx9Pz"
ES_API_KEY = "es-apikey-Vb3Nm8Kd1"
ES_USER, ES_PASSWORD = "search-user", "es-pass-Wq5Rt2Yu6"
MEILI_KEY = "meili-key-Zx4Cv7Bn0"
TYPESENSE_KEY = "ts-key-Gh6Jk9Lm3"
REDIS_PASSWORD = "redis-pass-Qa1Sd4Fg7"
NAMED_KEY = "named-key-Rt5Yu8Io2"  # a scoped key of the config
SECRETS = [SERVICE_KEY, ES_API_KEY, ES_PASSWORD, MEILI_KEY, TYPESENSE_KEY, REDIS_PASSWORD,
           NAMED_KEY]
ALGOLIA = SearchClientSync("app", "unused")
# secured keys minted from the service key and the named one, good and bad
SECURED = {name: ALGOLIA.generate_secured_api_key(parent, limits) for name, parent, limits in (
    ("good", SERVICE_KEY, {"filters": "country:FR", "validUntil": 4102444800}),
    ("child", NAMED_KEY, {"restrictIndices": ["keyed"], "userToken": "u-1"}),
    ("expired", SERVICE_KEY, {"validUntil": 1}),
    ("elsewhere", SERVICE_KEY, {"restrictSources": "10.9.0.0/16"}),
    ("odd", SERVICE_KEY, {"hitsPerPage": 5}),
)}
DERIVED = [  # what goes on the wire: a leak of these is a leak of the secret
    base64.b64encode(f"{ES_USER}:{ES_PASSWORD}".encode()).decode(),
    *SECURED.values(),
    *(base64.b64decode(k)[:64].decode() for k in SECURED.values()),  # their HMACs
]
MODES = ["401", "403", "500", "503", "html", "truncated", "reset_mid_body", "drop", "hang",
         "status", "ok"]


@pytest.fixture
def upstream() -> Iterator[MisbehavingUpstream]:
    with misbehaving_upstream() as server:
        yield server


def config(upstream: MisbehavingUpstream) -> str:
    dead = f"http://127.0.0.1:{refused_port()}"
    server_engines = {
        "keyed": ("elasticsearch", upstream.url, f"apiKey: {ES_API_KEY}"),
        "basic": ("opensearch", upstream.url,
                  f"username: {ES_USER}\n    password: {ES_PASSWORD}"),
        "meili": ("meilisearch", upstream.url, f"apiKey: {MEILI_KEY}"),
        "ts": ("typesense", dead, f"apiKey: {TYPESENSE_KEY}"),
        "gone": ("elasticsearch", dead, f"apiKey: {ES_API_KEY}"),
    }
    indexes = "".join(
        f"  {handle}:\n    engine: {engine}\n    host: {host}\n    indexName: cities\n"
        f"    timeout: 1\n    {auth}\n"
        for handle, (engine, host, auth) in server_engines.items()
    )
    return (
        f"apiKey: {SERVICE_KEY}\n"
        f"keys: {{tenant: {{key: {NAMED_KEY}, handles: [keyed, ts], "
        "filters: {keyed: {country: FR}}, rawQuery: true}}\n"
        f"cache: {{backend: redis, url: 'redis://:{REDIS_PASSWORD}@127.0.0.1:{free_port()}/0'}}\n"
        "resilience: {retries: 0, circuitBreaker: {failures: 1000}}\n"
        f"indexes:\n{indexes}"
    )


def transcript(response: httpx.Response) -> str:
    head = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
    return f"{response.status_code} {response.reason_phrase}\n{head}\n{response.text}"


def exercise(base: str, upstream: MisbehavingUpstream) -> list[str]:
    """Every error path, with the status seen; returns the transcripts."""
    good = {"Authorization": f"Bearer {SERVICE_KEY}"}
    seen: list[str] = []
    statuses: set[int] = set()
    with httpx.Client(base_url=base, timeout=10) as client:

        def call(method: str, path: str, headers: dict[str, str] | None = None,
                 **kw: object) -> None:
            response = client.request(method, path, headers=headers or good, **kw)  # type: ignore[arg-type]
            statuses.add(response.status_code)
            seen.append(transcript(response))

        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": SERVICE_KEY}):
            call("GET", "/keyed/search", headers=headers or {"X-None": "1"})
        for path in ("/health", "/indexes", "/metrics", "/openapi/json", "/nope/search",
                     "/keyed/search?filters=%7Bbad", "/keyed/search?page=x"):
            call("GET", path)
        for mode in MODES:
            upstream.mode = mode
            for handle in ("keyed", "basic", "meili"):
                call("GET", f"/{handle}/search", params={"q": "x", "facets": "country"})
                call("GET", f"/{handle}/documents/1")
                call("GET", f"/{handle}/mapping")
                call("POST", f"/{handle}/query", content=json.dumps({"query": {}}),
                     headers={**good, "Content-Type": "application/json"})
        for handle in ("ts", "gone"):
            call("GET", f"/{handle}/search")
            call("GET", f"/{handle}/facets/country")
        upstream.mode = "ok"
        for key in (NAMED_KEY, *SECURED.values()):
            for headers in ({"Authorization": f"Bearer {key}"},
                            {"X-Algolia-API-Key": key, "X-Algolia-Application-Id": "a"}):
                call("GET", "/keyed/search", headers=headers, params={"q": "x"})
                call("GET", "/basic/search", headers=headers)
                call("GET", "/keyed/documents/1", headers=headers)
                call("POST", "/keyed/query", content=json.dumps({"query": {}}),
                     headers={**headers, "Content-Type": "application/json"})
                call("POST", "/1/indexes/*/queries", headers=headers,
                     content=json.dumps({"requests": [{"indexName": "keyed"},
                                                      {"indexName": "basic"}]}))
                call("GET", "/indexes", headers=headers)
                call("GET", "/metrics", headers=headers)
        call("POST", "/cache/clear")
        call("GET", "/health")
        call("GET", "/metrics")
    # the run went through the paths it claims to
    assert {200, 400, 401, 403, 404, 502, 504} <= statuses, statuses
    return seen


def test_no_secret_in_any_answer_log_or_check_output(
    upstream: MisbehavingUpstream, tmp_path: Path
) -> None:
    text = config(upstream)
    server = start_server(text, tmp_path)
    try:
        answers = exercise(server.url, upstream)
    finally:
        server.stop()
    check = subprocess.run([str(SEARCHPORT), "check", "--config", str(tmp_path / "config.yaml")],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert check.returncode == 1  # the engines are not real: check says so
    outputs = {"answers": "\n".join(answers), "server log": server.output(),
               "check": check.stdout + check.stderr}
    assert "FAILED" in outputs["check"]
    for where, output in outputs.items():
        for secret in SECRETS + DERIVED:
            assert secret not in output, f"{secret!r} leaked in the {where}"
    # and no engine address in an answer, but for /metrics, the operator's view by host
    address = upstream.url.removeprefix("http://")
    leaks = [a for a in answers if address in a and "searchport_requests_total" not in a]
    assert leaks == []
