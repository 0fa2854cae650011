"""Keys against a real ``searchport serve``: a key printed by ``searchport keys secure`` and
one minted by the stock Python client both read only what they say, natively and through
Algolia's routes; the CLI refuses what it cannot mint."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from algoliasearch.search.client import SearchClientSync

from tests.e2e.conftest import SEARCHPORT, Server, sample_config

PARENT = "front-parent-Kj8Hg"
CONFIG = sample_config(extra_top=f"apiKey: admin-Zx1\nkeys:\n  front: {{key: {PARENT}}}\n")


@pytest.fixture(scope="module")
def served(server_factory: Callable[..., Server]) -> Iterator[Server]:
    yield server_factory(CONFIG)


def keys_secure(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    config = server.log.parent / "config.yaml"
    return subprocess.run([str(SEARCHPORT), "keys", "secure", "--config", str(config), *args],
                          capture_output=True, text=True, timeout=120, check=False)


def countries(server: Server, key: str, **params: Any) -> list[str]:
    response = server.client.get("/cities/search", params={"perPage": 100, **params},
                                 headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.text
    return [hit["country"] for hit in response.json()["hits"]]


def test_a_key_from_the_cli_reads_only_its_filters(served: Server,
                                                   rows: list[dict[str, Any]]) -> None:
    minted = keys_secure(served, "--parent", "front", "--filters",
                         'country:France OR country:"United Kingdom"', "--valid-for", "1h",
                         "--handles", "cit*")
    assert minted.returncode == 0, minted.stderr
    key = minted.stdout.strip()
    assert "\n" not in key and PARENT not in minted.stdout + minted.stderr
    assert "expires" in minted.stderr
    expected = sorted(r["country"] for r in rows
                      if r["country"] in ("France", "United Kingdom"))
    assert sorted(countries(served, key)) == expected
    widened = countries(served, key, filters='{"country": ["France", "China"]}')
    assert sorted(widened) == sorted(c for c in expected if c == "France")
    algolia = served.client.post("/1/indexes/cities/query", json={
        "filters": "NOT country:France", "hitsPerPage": 100},
        headers={"X-Algolia-API-Key": key, "X-Algolia-Application-Id": "app"})
    assert sorted(h["country"] for h in algolia.json()["hits"]) == sorted(
        c for c in expected if c != "France")


def test_a_key_of_the_python_client_is_accepted(served: Server,
                                                rows: list[dict[str, Any]]) -> None:
    key = SearchClientSync("app", "unused").generate_secured_api_key(
        PARENT, {"filters": "population > 1000000", "restrictIndices": ["cities"]})
    found = countries(served, key)
    assert len(found) == sum(1 for r in rows if r.get("population", 0) > 1_000_000)
    assert served.client.get("/indexes", headers={"Authorization": f"Bearer {key}"}
                             ).json()["indexes"][0]["capabilities"]["rawQuery"] is False


@pytest.mark.parametrize(("args", "message"), [
    (("--parent", "nobody"), "no key named 'nobody'"),
    (("--parent", "front", "--filters", "country:("), "--filters: "),
    (("--parent", "front", "--valid-for", "soon"), "--valid-for: 'soon' is not a duration"),
    (("--parent", "front", "--handles", "towns"), "--handles: 'towns' is not a configured"),
    (("--parent", "front", "--sources", "10.0.0/8x"), "--sources: "),
])
def test_the_cli_refuses_what_it_cannot_mint(served: Server, args: tuple[str, ...],
                                             message: str) -> None:
    refused = keys_secure(served, *args)
    assert refused.returncode == 2 and refused.stdout == ""
    assert message in refused.stderr


def test_the_cli_needs_a_config(tmp_path: Path) -> None:
    refused = subprocess.run([str(SEARCHPORT), "keys", "secure", "--parent", "front"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             check=False, env={"PATH": "/usr/bin:/bin"})
    assert refused.returncode == 2 and "needs a config" in refused.stderr
