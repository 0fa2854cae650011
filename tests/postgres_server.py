"""A real PostgreSQL server of the tests' own: ``initdb`` into a temporary folder, then
``postgres`` on a free loopback port (its unix socket in the same folder).

PostgreSQL refuses to run as root: as root, the folder is given to the ``postgres`` system
user (Debian's packages create it) and the server runs as that user (``setpriv``). Without
the binaries the PostgreSQL tests are skipped on a developer's machine and fail in CI
(``CI`` set).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.redis_server import free_port

DEBIAN_BINARIES = Path("/usr/lib/postgresql")


def postgres_bindir() -> Path:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(DEBIAN_BINARIES.glob("*/bin/initdb"),
                      key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit()
                      else 0)
    if versions:
        return versions[-1].parent
    message = "PostgreSQL's server binaries are not installed (Debian package postgresql)"
    if os.environ.get("CI"):
        pytest.fail(message + "; CI must install them")
    pytest.skip(message)


def _run_as() -> list[str]:
    """The command prefix that runs the server as a user PostgreSQL accepts."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        message = "running as root, and there is no postgres user to run PostgreSQL as"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    # setpriv runs the command in its own process (no fork): signals reach the postmaster
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]


class PostgresServer:
    """One PostgreSQL server; ``stop``/``start`` keep its port and data, ``pause`` freezes
    it (connections are accepted by the kernel, nothing answers)."""

    def __init__(self) -> None:
        self.bindir = postgres_bindir()
        self.prefix = _run_as()
        self.folder = Path(tempfile.mkdtemp(prefix="searchport-pg-"))
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        if self.prefix:
            entry = pwd.getpwnam("postgres")
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        subprocess.run(
            [*self.prefix, str(self.bindir / "initdb"), "-D", str(self.folder / "data"),
             "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [*self.prefix, str(self.bindir / "postgres"), "-D", str(self.folder / "data"),
             "-p", str(self.port), "-c", "listen_addresses=127.0.0.1",
             "-c", f"unix_socket_directories={self.folder}", "-c", "fsync=off",
             "-c", "full_page_writes=off", "-c", "synchronous_commit=off"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited with {self.process.returncode}")
            try:
                with psycopg.connect(self.url(), connect_timeout=1):
                    return
            except psycopg.OperationalError:
                time.sleep(0.05)
        raise RuntimeError("PostgreSQL did not accept connections within 30 s")

    def create_database(self) -> str:
        """A new empty database; its URL."""
        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def pause(self) -> None:
        assert self.process is not None
        self._signal_all(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self._signal_all(signal.SIGCONT)

    def _signal_all(self, sig: signal.Signals) -> None:
        """The postmaster and its children (one backend per connection)."""
        assert self.process is not None
        children = subprocess.run(["pgrep", "-P", str(self.process.pid)],
                                  capture_output=True, text=True).stdout.split()
        for pid in [self.process.pid, *map(int, children)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self._signal_all(signal.SIGCONT)
            self.process.send_signal(signal.SIGINT)  # a fast shutdown
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
