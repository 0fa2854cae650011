"""Smoke test of an installed searchport, as a new user meets it: no config at all, then
``searchport init`` and the config it writes.

By default it drives the ``searchport`` of the environment running the tests. CI also runs
it against the built wheel installed in a fresh virtual environment (``SEARCHPORT_BIN``
names that install's command), from a folder outside the checkout, so the wheel itself is
proven to serve: its modules, its search page, its demo data.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx
import yaml

from tests.e2e.conftest import SEARCHPORT, Server, free_port

COMMAND = Path(os.environ.get("SEARCHPORT_BIN") or SEARCHPORT)
ROOT = Path(__file__).resolve().parents[2]


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("API_KEY", "REDIS_URL", "SEARCHPORT_CONFIG", "PYTHONPATH", "PORT")}
    env.update(extra)
    return env


def wait_for_health(server: Server, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while True:
        assert server.process.poll() is None, server.output()
        assert time.monotonic() < deadline, server.output()
        try:
            if server.client.get("/health").status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)


def test_installed_searchport_serves_the_builtin_demo_with_no_config(tmp_path: Path) -> None:
    version = subprocess.run([str(COMMAND), "--version"], capture_output=True, text=True,
                             timeout=60, check=True)
    assert version.stdout.startswith("searchport ")
    port = free_port()
    cache = tmp_path / "cache"
    env = environment(XDG_CACHE_HOME=str(cache), PORT=str(port))
    workdir = tmp_path / "empty"
    workdir.mkdir()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen([str(COMMAND), "serve"], cwd=workdir, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, text=True)
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_for_health(server)
        client = server.client
        body = client.get("/cities/search", params={"q": "paris"}).json()
        assert body["hits"][0]["name"] == "Paris" and body["totalHits"] >= 1
        page = client.get("/ui")
        assert page.status_code == 200 and "<script" in page.text
        assert client.get("/ui/assets/app.js").status_code == 200
        assert client.get("/openapi").status_code == 200
        spec = client.get("/openapi/json").json()
        assert "/{handle}/search" in spec["paths"]
        algolia = client.post("/1/indexes/cities/query", json={"params": "query=tokyo"})
        assert algolia.status_code == 200, algolia.text
        assert algolia.json()["hits"][0]["name"] == "Tokyo"
        folder = cache / "searchport" / "demo"
        assert f"Its config and indexes live in {folder}" in server.output()
        assert (folder / "indexes" / "cities" / "searchport-index.json").is_file()
        # places: by meaning when the semantic extra is installed, else by words, said so
        meaning = "by words and by meaning" in server.output()
        assert meaning or "searched by words only" in server.output()
        indexes = {i["handle"]: i for i in client.get("/indexes").json()["indexes"]}
        assert indexes["places"]["capabilities"]["semantic"] is meaning
        asked = {"q": "where the Thai government sits", "fields": "name"}
        if meaning:
            asked["semantic"] = "0.5"
        found = client.get("/places/search", params=asked)
        assert found.status_code == 200, found.text
        if meaning:
            assert found.json()["hits"][0]["name"] == "Bangkok"
        assert list(workdir.iterdir()) == []  # nothing written where it was started
    finally:
        server.stop()


def test_init_writes_a_config_that_checks_and_serves_the_demo(tmp_path: Path) -> None:
    """``init FOLDER`` writes the commented example whose demo handle reads the demo data of
    this install (not of a checkout), refuses to write it twice, and says what to run next;
    ``check`` and ``serve`` take that config as it is."""
    folder = tmp_path / "site"
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    env = environment()
    init = subprocess.run([str(COMMAND), "init", str(folder)], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert init.returncode == 0, init.stderr
    config = folder / "config.yaml"
    text = config.read_text(encoding="utf-8")
    example = (ROOT / "config.example.yaml").read_text(encoding="utf-8").splitlines()
    differ = [n for n, (a, b) in enumerate(zip(example, text.splitlines(), strict=True))
              if a != b]
    assert len(differ) == 1 and "source:" in example[differ[0]]  # the example, but its source
    shipped = subprocess.run(  # where this install keeps its demo data
        [str(COMMAND.with_name("python")), "-c", "import searchport.demo as d; print(d.SOURCE)"],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=60, check=True,
    ).stdout.strip()
    source = yaml.safe_load(text)["indexes"]["cities"]["source"]  # the demo handle's data
    assert Path(source).is_absolute() and Path(source).is_file()
    assert Path(source) == Path(shipped)  # a checkout's relative path would not be found
    assert f"check --config {config}" in init.stdout
    assert f"serve --config {config}" in init.stdout
    again = subprocess.run([str(COMMAND), "init", str(folder)], cwd=workdir, env=env,
                           capture_output=True, text=True, timeout=60, check=False)
    assert again.returncode == 1 and "already exists" in again.stderr
    assert config.read_text(encoding="utf-8") == text

    check = subprocess.run([str(COMMAND), "check", "--config", str(config)], cwd=workdir,
                           env=env, capture_output=True, text=True, timeout=120, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "ok      cities (tantivy)" in check.stdout

    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(COMMAND), "serve", "--config", str(config), "--port", str(port)],
            cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_for_health(server)
        body = server.client.get("/cities/search", params={"q": "tokyo"}).json()
        assert body["hits"][0]["name"] == "Tokyo" and body["totalHits"] >= 1
        assert (folder / ".searchport" / "indexes" / "cities").is_dir()  # next to the config
        assert list(workdir.iterdir()) == []
        readme_suggests_lisbon(server, yaml.safe_load(text))
    finally:
        server.stop()


def readme_suggests_lisbon(server: Server, config: dict[str, object]) -> None:
    """README's Query Suggestions example on the config ``init`` writes: after two searches
    of "lisbon", the suggestions handle finds it within README's "every ten seconds"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "rebuilt every ten seconds" in readme
    handles = config["indexes"]
    assert isinstance(handles, dict)
    assert handles["cities_query_suggestions"]["refresh"] == 10
    for _ in range(2):
        assert server.client.get("/cities/search", params={"q": "lisbon"}).status_code == 200
    deadline = time.monotonic() + 10 + 3  # a rebuild, and the query log's flush before it
    while True:
        found = server.client.get("/cities_query_suggestions/search", params={"q": "lis"})
        if [hit["query"] for hit in found.json()["hits"]] == ["lisbon"]:
            return
        assert time.monotonic() < deadline, found.text
        time.sleep(0.5)
