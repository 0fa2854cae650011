"""A real OpenSearch node of the tests' own, on a free loopback port, one per session.

Maven builds the launcher in this folder (``pom.xml``, ``OpenSearchNode.java``) from the
jars OpenSearch publishes on Maven Central: the first build downloads them into Maven's
local repository, later builds reuse them and take a few seconds. The k-NN plugin
(``knn_vector``, the ``knn`` query: hybrid search) comes as the zip a distribution installs;
the build unpacks its jars into ``target/knn/``, on the class path from there (its Lucene
engine is pure Java; Faiss and NMSLIB would need native libraries). The node runs in one JVM
with a heap of at most 512 MiB and keeps its data in a temporary folder; it is stopped by
its process id (SIGTERM, then SIGKILL if it lingers).

Without Java or Maven the tests that need it are skipped on a developer's machine and fail
under ``CI``. ``python -m tests.servers.opensearch --port 9250`` starts the same node by hand.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

import httpx
import pytest

from tests.servers.session import missing as missing
from tests.servers.session import session_node

HERE = Path(__file__).resolve().parent
TARGET = HERE / "target"
CLASSPATH_FILE = TARGET / "classpath.txt"
KNN_JARS = TARGET / "knn"  # the k-NN plugin's jars, unpacked from its zip by the build
MAIN_CLASS = "searchport.testing.OpenSearchNode"
HEAP = "512m"
BUILD_SECONDS = 900.0  # the first build downloads about 60 MB of jars
START_SECONDS = 90.0
STOP_SECONDS = 30.0


class Unavailable(RuntimeError):
    """Java or Maven is missing, so no node can be built here."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tools() -> tuple[str, str]:
    """The ``java`` and ``mvn`` commands, or ``Unavailable`` naming what is missing."""
    java, mvn = shutil.which("java"), shutil.which("mvn")
    missing = [name for name, found in (("java", java), ("mvn", mvn)) if found is None]
    if missing:
        raise Unavailable(f"{' and '.join(missing)} not found: the real OpenSearch node "
                          "needs Java 17+ and Maven")
    assert java is not None and mvn is not None
    return java, mvn


def _sources() -> list[Path]:
    return [HERE / "pom.xml", *sorted((HERE / "src").rglob("*.java"))]


def _built() -> bool:
    if not CLASSPATH_FILE.is_file():
        return False
    classes = list((TARGET / "classes").rglob("*.class"))
    if not classes:
        return False
    newest_source = max(p.stat().st_mtime for p in _sources())
    return min(p.stat().st_mtime for p in [CLASSPATH_FILE, *classes]) >= newest_source


def build(*, quiet: bool = True) -> str:
    """Compile the launcher and resolve its jars (once); the ``java -cp`` class path."""
    _, mvn = tools()
    if not _built():
        command = [mvn, "-B", "-ntp", "-Dstyle.color=never", "-f", str(HERE / "pom.xml"),
                   f"-Dmdep.outputFile={CLASSPATH_FILE}", "dependency:build-classpath",
                   "compile"]
        if quiet:
            command.insert(1, "-q")
        done = subprocess.run(command, capture_output=quiet, text=True,
                              timeout=BUILD_SECONDS, check=False)
        if done.returncode != 0:
            output = (done.stdout or "") + (done.stderr or "")
            raise RuntimeError(f"building the OpenSearch node failed:\n{output[-4000:]}")
    return os.pathsep.join((str(TARGET / "classes"), CLASSPATH_FILE.read_text().strip(),
                            str(KNN_JARS / "*")))


class OpenSearchServer:
    """One OpenSearch node: ``start`` builds if needed and waits until it is ready."""

    def __init__(self, home: Path, port: int | None = None, *, cpus: str | None = None) -> None:
        self.home = home
        self.port = port or free_port()
        self.cpus = cpus  # ``taskset -c`` list the JVM runs on (benchmarks); None: any
        self.process: subprocess.Popen[str] | None = None
        self.log: deque[str] = deque(maxlen=200)
        self.started_in: float | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        java, _ = tools()
        pinned = ["taskset", "-c", self.cpus] if self.cpus else []
        return [*pinned, java, f"-Xms{HEAP}", f"-Xmx{HEAP}", "-XX:+UseSerialGC",
                "-Djava.awt.headless=true", "-Dfile.encoding=UTF-8",
                "-cp", build(), MAIN_CLASS, "--port", str(self.port), "--home", str(self.home),
                "--exit-with-stdin"]

    def start(self, *, echo: bool = False) -> None:
        command = self.command()
        self.home.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        # The node stops when its standard input closes: when this process ends, however.
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        ready = threading.Event()
        threading.Thread(target=self._read, args=(ready, echo), daemon=True).start()
        deadline = began + START_SECONDS
        while time.monotonic() < deadline:
            if ready.wait(0.2) and self._answers():
                self.started_in = time.monotonic() - began
                return
            if self.process.poll() is not None:
                break
        self.stop()
        tail = "\n".join(self.log)
        raise RuntimeError(f"the OpenSearch node was not ready within {START_SECONDS:g} s:\n"
                           f"{tail[-4000:]}")

    def _read(self, ready: threading.Event, echo: bool) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.log.append(line.rstrip())
            if echo:
                print(line, end="", flush=True)
            if line.startswith("ready "):
                ready.set()

    def _answers(self) -> bool:
        try:
            return httpx.get(self.url, timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        """SIGTERM (the node closes itself), SIGKILL if it has not gone in time."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def resident_bytes(self) -> int:
        """The node's resident memory (VmRSS), from ``/proc``."""
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS line")

    def pause(self) -> None:
        """SIGSTOP: the node keeps its sockets open and answers nothing."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)


def session_server(config: pytest.Config) -> OpenSearchServer:
    """The session's one node (``tests/servers/session.py``)."""
    try:
        tools()
    except Unavailable as exc:
        missing(str(exc))
    return session_node(config, "opensearch", OpenSearchServer)
