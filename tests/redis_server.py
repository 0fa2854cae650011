"""A real ``redis-server`` of the tests' own, on a free loopback port.

Without the binary the Redis tests are skipped on a developer's machine and fail in CI
(``CI`` set), where ``.ci/run`` installs it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    message = "redis-server is not installed (Debian package redis-server)"
    if os.environ.get("CI"):
        pytest.fail(message + "; CI must install it (.ci/run does)")
    pytest.skip(message)


class RedisServer:
    """One redis-server process; ``stop``/``start`` keep the port, ``pause`` freezes it."""

    def __init__(self, workdir: Path, port: int | None = None, password: str | None = None
                 ) -> None:
        self.binary = redis_binary()
        self.workdir = workdir
        self.port = port or free_port()
        self.password = password  # requirepass: the URL then carries it
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.workdir), "--loglevel", "warning",
             *(["--requirepass", self.password] if self.password else [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith((b"+PONG", b"-NOAUTH")):  # it answers
                        return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("redis-server did not answer PING within 10 s")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a paused server must be able to die
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def pause(self) -> None:
        """The port still accepts connections (the kernel does that), nothing answers."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def client(self) -> redis.Redis:
        """A plain synchronous client, for checks made beside searchport's own."""
        return redis.Redis.from_url(self.url, socket_timeout=5)
