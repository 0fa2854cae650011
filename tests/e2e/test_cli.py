"""The command line: check, index build, serve on the shipped example config."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import (
    SEARCHPORT,
    Server,
    free_port,
    load_rows,
    sample_config,
    start_server,
)
from tests.misbehaving_upstream import misbehaving_upstream
from tests.redis_server import RedisServer


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SEARCHPORT), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        check=False,
    )


def test_check_reports_each_handle(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(sample_config(), encoding="utf-8")
    result = run("check", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok      cities (tantivy)" in result.stdout


def test_check_pings_the_redis_cache(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, password="check-secret-5Tg")
    server.start()
    try:
        (tmp_path / "config.yaml").write_text(sample_config(
            extra_top=f"cache: {{backend: redis, url: '{server.url}'}}"), encoding="utf-8")
        up = run("check", cwd=tmp_path)
    finally:
        server.stop()
    down = run("check", cwd=tmp_path)
    assert up.returncode == 0, up.stdout + up.stderr
    assert f"ok      cache (redis at redis://127.0.0.1:{server.port})" in up.stdout
    assert down.returncode == 1
    assert f"FAILED  cache (redis at redis://127.0.0.1:{server.port})" in down.stdout
    assert "check-secret-5Tg" not in up.stdout + up.stderr + down.stdout + down.stderr


def test_check_names_the_bad_key(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "indexes:\n  cities:\n    engine: tantivy\n    path: x\n    typo: 1\n", encoding="utf-8"
    )
    result = run("check", cwd=tmp_path)
    assert result.returncode == 2
    assert "indexes.cities" in result.stderr and "typo" in result.stderr
    (tmp_path / "config.yaml").write_text("indexes:\n  a:\n    engine: solr\n", encoding="utf-8")
    result = run("check", "--config", str(tmp_path / "config.yaml"), cwd=tmp_path)
    assert result.returncode == 2 and "indexes.a.engine" in result.stderr


def test_missing_variable_stops_startup_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "# apiKey: ${COMMENTED_OUT}\napiKey: ${SEARCHPORT_TEST_UNSET_VAR}\n", encoding="utf-8"
    )
    result = run("serve", cwd=tmp_path)
    assert result.returncode == 2
    assert "SEARCHPORT_TEST_UNSET_VAR" in result.stderr and "apiKey" in result.stderr
    assert "COMMENTED_OUT" not in result.stderr


# ahead of site-packages on PYTHONPATH: psycopg as it is without the postgres extra
NO_PSYCOPG = "raise ImportError('No module named psycopg (simulated)')\n"


@pytest.mark.parametrize(("extra_top", "extra_index", "message"), [
    ("analytics: {backend: postgres, url: 'postgresql://searchport@127.0.0.1:1/logs'}", "",
     "analytics.backend: postgres needs psycopg: pip install 'searchport[postgres]'"),
    ("rateLimit: {perIp: {limit: 10}, store: redis}", "",
     "rateLimit.store: redis needs cache.url (or REDIS_URL)"),
    ("", "  remote: {engine: typesense, host: 'https://127.0.0.1:1', apiKey: k, "
         "indexName: r, caBundle: missing.pem}\n",
     "indexes.remote.caBundle: cannot read the CA bundle "),
], ids=["postgres-extra-missing", "redis-rate-limit-without-url", "unreadable-ca-bundle"])
def test_serve_stops_on_what_check_finds_in_one_line_before_any_worker(
        extra_top: str, extra_index: str, message: str, tmp_path: Path) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "psycopg.py").write_text(NO_PSYCOPG, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(shim)}
    (tmp_path / "config.yaml").write_text(sample_config(extra_top, extra_index),
                                          encoding="utf-8")

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SEARCHPORT), *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120, check=False)

    check = command("check")
    assert check.returncode == 2, check.stdout + check.stderr
    assert f"searchport: config error: {message}" in check.stderr
    serve = command("serve", "--port", str(free_port()))
    assert serve.returncode == 2, serve.stdout + serve.stderr
    (line,) = (serve.stdout + serve.stderr).strip().splitlines()
    assert line.startswith(f"searchport: config error: {message}")


def test_index_build_shows_progress_and_is_idempotent(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(sample_config(), encoding="utf-8")
    first = run("index", "build", "cities", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "indexed" in first.stdout and "docs" in first.stderr
    second = run("index", "build", "cities", cwd=tmp_path)
    assert second.returncode == 0 and "up to date" in second.stdout


def test_example_config_serves_the_demo(copy_example: Path, tmp_path_factory: Any) -> None:
    text = (copy_example / "config.example.yaml").read_text(encoding="utf-8")
    server = start_server(text, copy_example)
    try:
        body = server.client.get("/cities/search", params={"q": "paris"}).json()
        assert body["hits"][0]["name"] == "Paris"
        assert body["hits"][0]["country"] == "France"
        # the facets a person reads; InstantSearch's hierarchy is asked for by name
        assert list(body["facets"]) == ["region", "country", "capital"]
        fields = server.client.get("/cities/fields").json()
        assert fields["facets"] == ["region", "country", "capital"]
        assert body["totalHits"] >= 1
        demo_hierarchy(server)
        demo_rules_and_replicas(server, copy_example)
    finally:
        server.stop()


def demo_hierarchy(server: Server) -> None:
    """InstantSearch's hierarchicalMenu on the demo: the continents, then a continent's
    countries, as "continent > country" (what it asks for on the Algolia route)."""
    top = server.client.post("/1/indexes/cities/query", json={
        "params": "hitsPerPage=0&facets=%5B%22lvl0%22%5D"}).json()
    continents = top["facets"]["lvl0"]
    assert set(continents) == {r["value"] for r in server.client.get(
        "/cities/search", params={"perPage": 1}).json()["facets"]["region"]}
    europe = server.client.post("/1/indexes/cities/query", json={
        "facets": ["lvl0", "lvl1"], "facetFilters": [["lvl0:Europe"]], "hitsPerPage": 0}).json()
    assert europe["nbHits"] == continents["Europe"]
    assert sum(europe["facets"]["lvl1"].values()) == continents["Europe"]
    assert all(level.startswith("Europe > ") for level in europe["facets"]["lvl1"])


def demo_rules_and_replicas(server: Server, folder: Path) -> None:
    """The example's replicas and query rules, each checked against the demo's rows."""
    import gzip
    import json

    import yaml

    config = yaml.safe_load((folder / "config.example.yaml").read_text(encoding="utf-8"))
    with gzip.open(folder / config["indexes"]["cities"]["source"], "rt") as lines:
        rows = [json.loads(line) for line in lines]
    listed = [i["handle"] for i in server.client.get("/indexes").json()["indexes"]]
    assert listed == list(config["indexes"])
    replicas = {h: i for h, i in config["indexes"].items() if i.get("replicaOf") == "cities"}
    settings = server.client.get("/1/indexes/cities/settings").json()
    assert sorted(settings["replicas"]) == sorted(
        f"virtual({h})" if "relevantSort" in i else h for h, i in replicas.items())
    (standard,) = [h for h, i in replicas.items() if "sort" in i]
    (virtual,) = [h for h, i in replicas.items() if "relevantSort" in i]
    # no text: every record, in the replica's order
    key, order = replicas[standard]["sort"][0]["field"], replicas[standard]["sort"][0]["order"]
    ordered = sorted(rows, key=lambda r: r[key], reverse=order == "desc")
    first = server.client.post(f"/1/indexes/{standard}/query",
                               json={"params": {"hitsPerPage": 3}}).json()
    assert [h[key] for h in first["hits"]] == [r[key] for r in ordered[:3]]
    assert first["nbHits"] == len(rows)
    ranking = replicas[virtual]["customRanking"][0]
    relevant = server.client.post(f"/1/indexes/{virtual}/query", json={"params": {
        "hitsPerPage": 3}}).json()
    values = sorted((r[ranking["field"]] for r in rows), reverse=ranking["order"] == "desc")
    assert [h[ranking["field"]] for h in relevant["hits"]] == values[:3]
    # the best maxHits matches (docs/replicas.md: 1,000 unless set) are sorted
    max_hits = replicas[virtual]["relevantSort"].get("maxHits", 1000)
    assert relevant["nbHits"] == len(rows)
    assert relevant["nbSortedHits"] == min(max_hits, len(rows))
    assert relevant["appliedRelevancyStrictness"] == replicas[virtual]["relevantSort"][
        "strictness"]
    # the rules: "capital" is a filter with a banner; the context "europe" another
    capitals = server.client.get("/cities/search", params={"q": "capital", "perPage": 1})
    assert capitals.json()["totalHits"] == sum(1 for r in rows if r["capital"] is True)
    assert capitals.json()["userData"] == [{"title": "Capital cities"}]
    # README's tour: on /cities/search the context keeps European cities and sends its
    # userData; the facet ordering is the Algolia routes' (README says so)
    in_europe = sum(1 for r in rows if r["continent"] == "Europe")
    native = server.client.get("/cities/search", params={"ruleContexts": "europe"}).json()
    assert native["totalHits"] == in_europe
    assert native["userData"] == [{"title": "Cities of Europe"}]
    assert list(native["facets"]) == config["indexes"]["cities"]["defaults"]["facets"]
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(
        encoding="utf-8").split())
    assert (f"`/cities/search?ruleContexts=europe`) keeps the {in_europe:,} European cities and "
            "sends its own `userData`; on the Algolia routes") in readme
    europe = server.client.post("/1/indexes/cities/query", json={"params": {
        "ruleContexts": ["europe"], "hitsPerPage": 0}}).json()
    assert europe["nbHits"] == sum(1 for r in rows if r["continent"] == "Europe")
    assert europe["userData"] == [{"title": "Cities of Europe"}]
    assert europe["appliedRules"] == [{"objectID": "europe-page"}]
    assert europe["renderingContent"]["facetOrdering"]["facets"]["order"] == [
        "country", "capital"]


def test_reload_mode_picks_up_config_changes(tmp_path: Path) -> None:

    server = start_server(sample_config(), tmp_path, args=("--reload",))
    try:
        assert server.client.get("/indexes").status_code == 200
        config = tmp_path / "config.yaml"
        config.write_text("apiKey: changed\n" + sample_config(), encoding="utf-8")
        deadline = time.monotonic() + 60
        status = 200
        while time.monotonic() < deadline and status != 401:
            time.sleep(0.3)
            try:
                status = server.client.get("/indexes").status_code
            except httpx.TransportError:  # the worker is restarting
                status = 0
        assert status == 401
    finally:
        server.stop()


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and mtime: what a read-only command keeps."""
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
    }


def test_check_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(sample_config(), encoding="utf-8")
    before = tree(tmp_path)
    unbuilt = run("check", cwd=tmp_path)
    assert unbuilt.returncode == 0, unbuilt.stdout + unbuilt.stderr
    assert "ok      cities (tantivy): not built yet" in unbuilt.stdout
    assert tree(tmp_path) == before
    assert run("index", "build", cwd=tmp_path).returncode == 0
    built = tree(tmp_path)
    assert len(built) > len(before)
    again = run("check", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"ok      cities (tantivy): {len(load_rows())} documents, up to date" in again.stdout
    assert tree(tmp_path) == built


def test_check_without_config_validates_the_demo_and_writes_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("SEARCHPORT_CONFIG", None)
    result = subprocess.run([str(SEARCHPORT), "check"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "built-in demo" in result.stdout and "ok      cities (tantivy)" in result.stdout
    assert list(tmp_path.iterdir()) == []


def test_check_fails_on_an_index_serve_could_not_use(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(sample_config(), encoding="utf-8")
    assert run("index", "build", cwd=tmp_path).returncode == 0
    (tmp_path / "config.yaml").write_text(
        sample_config().replace("source:", "# source:"), encoding="utf-8")
    for meta in (tmp_path / "index" / "cities").glob("gen-*/meta.json"):
        meta.write_text("{not json", encoding="utf-8")
    result = run("check", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED  cities (tantivy)" in result.stdout


def test_check_against_engines_always_exits_cleanly(tmp_path: Path) -> None:
    """The engine client's runtime thread still closes connections as ``check`` ends; a
    command that let the interpreter shut down under it aborted now and then (SIGABRT,
    ``Fatal Python error``), in one run of five to ten with a few engines."""
    with contextlib.ExitStack() as stack:
        origins = [stack.enter_context(misbehaving_upstream()) for _ in range(4)]
        for upstream in origins:
            upstream.mode = "ok"
        (tmp_path / "config.yaml").write_text("indexes:\n" + "".join(
            f"  h{n}:\n    engine: elasticsearch\n    host: {origins[n % 4].url}\n"
            "    indexName: cities\n" for n in range(12)), encoding="utf-8")
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda _: run("check", cwd=tmp_path), range(24)))
    for result in results:
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.count("ok      h") == 12
        assert "Fatal Python error" not in result.stderr


def test_a_busy_address_is_refused(server: Server, tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(sample_config(), encoding="utf-8")
    port = server.url.rsplit(":", 1)[1]
    result = run("serve", "--port", port, cwd=tmp_path)
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "--share-port" in result.stderr
    assert not (tmp_path / "index").exists()  # refused before building anything
    assert server.client.get("/health").status_code == 200


def test_share_port_lets_a_second_server_listen_with_the_first(
        server: Server, tmp_path: Path) -> None:
    """--share-port is the explicit way to the shared address the refusal guards against:
    both servers listen and the kernel spreads new connections over them."""
    config = sample_config().replace("  cities:", "  towns:")
    (tmp_path / "config.yaml").write_text(config, encoding="utf-8")
    port = server.url.rsplit(":", 1)[1]
    log = tmp_path / "second.log"
    with log.open("w") as out:
        process = subprocess.Popen([str(SEARCHPORT), "serve", "--port", port, "--share-port"],
                                   cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, text=True)
    second = Server(process, server.url, log)
    try:
        deadline = time.monotonic() + 90
        while "listening on" not in second.output():
            assert process.poll() is None, second.output()
            assert time.monotonic() < deadline, second.output()
            time.sleep(0.2)
        seen: set[str] = set()
        for _ in range(60):  # a new connection each time: the kernel picks a listener
            with httpx.Client(base_url=server.url, timeout=30) as fresh:
                seen.update(h["handle"] for h in fresh.get("/indexes").json()["indexes"])
            if seen == {"cities", "towns"}:
                break
        assert seen == {"cities", "towns"}
    finally:
        second.stop()


def test_a_busy_ipv6_address_is_refused_and_shown_in_brackets(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(sample_config(), encoding="utf-8")
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as holder:
        holder.bind(("::1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = run("serve", "--host", "::1", "--port", str(port), cwd=tmp_path)
    assert result.returncode == 1
    assert f"cannot listen on [::1]:{port}: " in result.stderr
    assert "--share-port" in result.stderr and "Traceback" not in result.stderr


def test_an_address_not_of_this_machine_is_refused_with_what_to_pass(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(sample_config(), encoding="utf-8")
    result = run("serve", "--host", "192.0.2.1", "--port", "3999", cwd=tmp_path)
    assert result.returncode == 1
    assert "cannot listen on 192.0.2.1:3999" in result.stderr
    assert "must be an address of this machine" in result.stderr
    assert "--share-port" not in result.stderr  # nothing else is listening there


# What lets root write where the mode bits say no: without them, uid 0 obeys a folder's mode.
DAC_CAPS = "-dac_override,-dac_read_search"


def without_root_override(command: list[str]) -> list[str]:
    """``command`` run so that a folder whose write bits are off is read-only to it: root
    ignores mode bits through two capabilities, so as root the command keeps uid 0 (it reaches
    the checkout wherever it lives) but runs without them (util-linux's ``setpriv``, part of
    every Debian install)."""
    if os.geteuid() != 0:
        return command
    if shutil.which("setpriv") is None:
        if os.environ.get("CI"):
            pytest.fail("setpriv (util-linux) is missing: as root this test needs it",
                        pytrace=False)
        pytest.skip("as root this test needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE")
    return ["setpriv", f"--inh-caps={DAC_CAPS}", f"--bounding-set={DAC_CAPS}", *command]


def test_a_read_only_index_folder_is_a_clear_refusal(tmp_path: Path) -> None:
    """tantivy takes a lock file in the index folder even to search: a read-only folder
    (a prebuilt image, a cache on a read-only volume) cannot be served. serve and check
    say so, naming the folder and the setting; no traceback."""
    root = tmp_path / "ro"
    root.mkdir()
    try:
        (root / "config.yaml").write_text(sample_config(), encoding="utf-8")
        assert run("index", "build", cwd=root).returncode == 0
        for path in [root / "index", *(root / "index").rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        root.chmod(0o555)
        probe = without_root_override(["touch", str(root / "index" / "cities" / "probe")])
        assert subprocess.run(probe, capture_output=True, check=False).returncode != 0, (
            "the folder is still writable to the command: the test would prove nothing")
        for command in (["serve", "--port", str(free_port())], ["check"]):
            result = subprocess.run(without_root_override([str(SEARCHPORT), *command]),
                                    cwd=root, capture_output=True, text=True, timeout=120,
                                    check=False)
            said = result.stdout + result.stderr
            assert result.returncode == 1, said
            assert f"the index folder {root / 'index' / 'cities'} is not writable" in said
            assert "Traceback" not in said
    finally:
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755)
