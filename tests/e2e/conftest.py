"""A real ``searchport serve`` process on a free port, driven over HTTP."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from datetime import time as dt_time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, sync_playwright

from tests import npm_packages
from tests.e2e.ui_support import ARGS, ARTIFACTS, CHROMIUM, HOSTILE, PER_PAGE

HERE = Path(__file__).parent
ROWS_FILE = HERE / "cities_sample.jsonl"
SEARCHPORT = Path(sys.executable).with_name("searchport")

FIELDS_YAML = """
    fields:
      name: { type: text, weight: 3 }
      alternateNames: { type: text, weight: 1 }
      country: { type: keyword, searchable: true }
      countryCode: { type: keyword }
      region: { field: continent, type: keyword }
      timezone: { type: keyword }
      currency: { type: keyword }
      languages: { type: keyword }
      population: { type: integer }
      capital: { type: boolean }
      lvl0: { type: keyword }
      lvl1: { type: keyword }
      location: { type: geo_point }
    defaults:
      facets: [region, country]
"""


def day_clear_of_midnight(margin: float) -> date:
    """Today (UTC), after waiting for tomorrow if fewer than ``margin`` seconds are left:
    a test that counts by day (as the query log does) then sees one day throughout."""
    now = datetime.now(UTC)
    left = (datetime.combine(now.date() + timedelta(days=1), dt_time(), UTC) - now
            ).total_seconds()
    if left < margin:
        time.sleep(left + 1)
    return datetime.now(UTC).date()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def load_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ROWS_FILE.read_text(encoding="utf-8").splitlines()]


class Server:
    def __init__(self, process: subprocess.Popen[str], url: str, log: Path) -> None:
        self.process = process
        self.url = url
        self.log = log
        self.client = httpx.Client(base_url=url, timeout=30)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        self.client.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(
    config_text: str,
    workdir: Path,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    timeout: float = 90.0,
) -> Server:
    config = workdir / "config.yaml"
    config.write_text(config_text, encoding="utf-8")
    port = free_port()
    log = workdir / f"server-{port}.log"
    environment = {k: v for k, v in os.environ.items() if k not in ("API_KEY", "REDIS_URL")}
    environment.update(env or {})
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(SEARCHPORT), "serve", "--config", str(config), "--port", str(port), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=environment,
            text=True,
        )
    server = Server(process, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"searchport exited with {process.returncode}:\n{server.output()}")
        try:
            if server.client.get("/health").status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"searchport did not answer within {timeout} s:\n{server.output()}")


def sample_config(extra_top: str = "", extra_index: str = "") -> str:
    return (
        f"{extra_top}\nindexes:\n  cities:\n    engine: tantivy\n    path: index/cities\n"
        f"    source: {ROWS_FILE}\n{FIELDS_YAML}{extra_index}"
    )


@pytest.fixture(scope="session")
def rows() -> list[dict[str, Any]]:
    return load_rows()


@pytest.fixture(scope="session")
def server_factory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def make(config_text: str, env: dict[str, str] | None = None, **kw: Any) -> Server:
        workdir = tmp_path_factory.mktemp("serve")
        server = start_server(config_text, workdir, env, **kw)
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def server(server_factory: Callable[..., Server]) -> Server:
    """The sample cities behind an open API (no key)."""
    return server_factory(sample_config())


@pytest.fixture(scope="session")
def secured(server_factory: Callable[..., Server]) -> Server:
    """The same data behind two rotating keys."""
    return server_factory(sample_config(extra_top='apiKey: ["key-one", "key-two"]'))


@pytest.fixture(scope="session")
def npm_project() -> Path:
    """``tests/e2e/instantsearch`` with its npm packages installed (``npm ci`` when needed)."""
    return npm_packages.npm_project()


@pytest.fixture
def copy_example(tmp_path: Path) -> Path:
    root = HERE.parents[1]
    shutil.copytree(root / "src" / "demo", tmp_path / "src" / "demo")
    shutil.copy(root / "config.example.yaml", tmp_path / "config.example.yaml")
    return tmp_path


# -- the search page in a browser (tests/e2e/ui_support.py has the rest) -----------------------


@pytest.fixture(scope="session")
def ui_rows() -> list[dict[str, Any]]:
    return [*load_rows(), HOSTILE]


# a query rule whose userData the page shows (as text: the title holds markup)
UI_RULE: dict[str, Any] = {
    "objectID": "london-banner",
    "conditions": [{"pattern": "london", "anchoring": "is"}],
    "consequence": {"userData": {"title": "<b>London</b> calling"}},
}


@pytest.fixture(scope="session")
def ui_server(
    server_factory: Callable[..., Server],
    ui_rows: list[dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Server:
    """The fixture rows and the hostile document, facets like the demo's, small pages."""
    source = tmp_path_factory.mktemp("ui-data") / "cities.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in ui_rows), encoding="utf-8")
    fields = FIELDS_YAML.replace(
        "facets: [region, country]",
        f"facets: [region, country, capital]\n      perPage: {PER_PAGE}",
    )
    config = (
        "indexes:\n  cities:\n    engine: tantivy\n    path: index/cities\n"
        f"    source: {source}\n{fields}    rules: {json.dumps([UI_RULE])}\n"
    )
    return server_factory(config)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Debian's chromium, headless, one profile per test module (desktop-sized by default).

    Per module, not per session: Playwright's sync API keeps an event loop running while it is
    open, and a later test's ``asyncio.run()`` would then fail.
    """
    profile = tmp_path_factory.mktemp("chromium-profile")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=ARGS,
            locale="en-US", viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(15_000)
        yield context
        context.close()


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """A new tab; the test fails if the page threw an error."""
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    tab.close()
    assert errors == []
