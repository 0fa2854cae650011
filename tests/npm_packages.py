"""The npm packages of the browser test project ``tests/e2e/instantsearch`` (the stock
``algoliasearch`` client and InstantSearch.js), installed by the test run itself.

``npm ci`` runs when ``node_modules`` is missing or was installed from another
``package-lock.json`` (a stamp in ``node_modules`` keeps the lock file's digest), under a file
lock so that test runs started side by side install once. Without node or npm the tests that
need them are skipped, except in CI (env ``CI`` set), where that is a failure.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

PROJECT = Path(__file__).parent / "e2e" / "instantsearch"
MODULES = PROJECT / "node_modules"
STAMP = MODULES / ".installed-from"  # the sha256 of the package-lock.json installed
LOCK = PROJECT / ".npm-ci.lock"
NPM_CI = ("ci", "--no-audit", "--no-fund", "--loglevel=error")


def _digest() -> str:
    return hashlib.sha256((PROJECT / "package-lock.json").read_bytes()).hexdigest()


def _installed(digest: str) -> bool:
    return STAMP.is_file() and STAMP.read_text(encoding="ascii").strip() == digest


def _missing_tools() -> str | None:
    absent = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if not absent:
        return None
    return (f"{' and '.join(absent)} not installed: the tests of the npm packages of "
            f"tests/e2e/instantsearch need them (apt-get install nodejs npm)")


def npm_project() -> Path:
    """``tests/e2e/instantsearch`` with its ``node_modules`` as its lock file says."""
    missing = _missing_tools()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(missing, pytrace=False)
        pytest.skip(missing)
    digest = _digest()
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not _installed(digest):
            done = subprocess.run(["npm", *NPM_CI], cwd=PROJECT, capture_output=True,
                                  text=True, timeout=900, check=False)
            if done.returncode != 0:
                pytest.fail(f"npm ci in {PROJECT} failed:\n{done.stdout}{done.stderr}",
                            pytrace=False)
            STAMP.write_text(digest + "\n", encoding="ascii")
    return PROJECT
