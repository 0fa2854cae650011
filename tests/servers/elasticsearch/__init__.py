"""A real Elasticsearch node of the tests' own, on a free loopback port, one per session.

Maven unpacks the minimal distribution Elastic publishes on Maven Central
(``org.elasticsearch.distribution.integ-test-zip:elasticsearch``, see ``pom.xml``) into
``target/``: the first time downloads it (about 95 MB) into Maven's local repository, later
runs reuse it. That distribution has the server, the HTTP transport and x-pack's core and
security (switched off here), but none of the other modules: no ``analysis-common``
(``edge_ngram``, ``shingle``, synonyms), no ``mapper-extras``, no painless, no ``rest-root``
(``GET /`` answers 405). Standard analysis, aggregations (``geotile_grid`` included),
highlighting, ``search_after`` and the term/phrase suggesters are in the server itself.

Elasticsearch refuses to run as root (``can not run elasticsearch as root``), so as root the
node runs as ``nobody`` (``SEARCHPORT_ELASTICSEARCH_USER`` names another), by ``setpriv``;
its folders are made that user's. 9.x needs Java 21+: the JDK is ``ES_JAVA_HOME`` if set,
else the ``java`` on the path if new enough, else the newest under ``/usr/lib/jvm``. The heap
is 512 MiB. ``bin/elasticsearch`` is a small launcher JVM that starts the server JVM as its
child: the node is stopped by the launcher's process id (SIGTERM, which closes the server;
SIGKILL by process id to what is left of its process group), and the launcher gets SIGTERM
when the process that started it dies (``setpriv --pdeathsig``), so a killed test session
leaves nothing. (The kernel sends it when the *thread* that started the node ends: start it
from one that lives as long as the node, such as the main thread.)

Without Java or Maven the tests that need it are skipped on a developer's machine and fail
under ``CI`` (``missing``). ``python -m tests.servers.elasticsearch --port 9260`` starts the
same node by hand.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import re
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
VERSION = os.environ.get("SEARCHPORT_ELASTICSEARCH_VERSION", "").strip() or "9.1.0"
DISTRIBUTION = TARGET / f"elasticsearch-{VERSION}"
UNPACKED = TARGET / f"elasticsearch-{VERSION}.unpacked"  # written once the unpack finished
HEAP = "512m"
RUN_AS = os.environ.get("SEARCHPORT_ELASTICSEARCH_USER", "").strip() or "nobody"
BUILD_SECONDS = 900.0  # the first build downloads about 95 MB
START_SECONDS = 90.0
STOP_SECONDS = 30.0
JVM_FOLDER = Path("/usr/lib/jvm")


class Unavailable(RuntimeError):
    """Java, Maven or another tool is missing, so no node can start here."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def required_java() -> int:
    """Elasticsearch 9 runs on Java 21+, 8 on Java 17+."""
    return 21 if int(VERSION.split(".")[0]) >= 9 else 17


def java_major(home: Path) -> int | None:
    java = home / "bin" / "java"
    if not os.access(java, os.X_OK):
        return None
    try:
        done = subprocess.run([str(java), "-version"], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr)
    if found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


@functools.cache
def java_home() -> Path:
    """A JDK new enough for this version: ``ES_JAVA_HOME``, else the ``java`` on the path,
    else the newest under ``/usr/lib/jvm`` (looked for once per process)."""
    need = required_java()
    named = os.environ.get("ES_JAVA_HOME", "").strip()
    if named:
        major = java_major(Path(named))
        if major is None or major < need:
            raise Unavailable(f"ES_JAVA_HOME={named} is not a Java {need}+ JDK, which "
                              f"Elasticsearch {VERSION} needs")
        return Path(named)
    candidates: list[Path] = []
    on_path = shutil.which("java")
    if on_path is not None:
        candidates.append(Path(on_path).resolve().parent.parent)
    if JVM_FOLDER.is_dir():
        candidates.extend(sorted(p for p in JVM_FOLDER.iterdir()
                                 if p.is_dir() and not p.is_symlink()))
    best: tuple[int, Path] | None = None
    for home in candidates:
        major = java_major(home)
        if major is None or major < need:
            continue
        if home == candidates[0] and on_path is not None:
            return home  # the path's own java when it is new enough
        if best is None or major > best[0]:
            best = (major, home)
    if best is None:
        raise Unavailable(f"no Java {need}+ found (ES_JAVA_HOME, the path, {JVM_FOLDER}): "
                          f"the real Elasticsearch {VERSION} node needs it")
    return best[1]


def tools() -> tuple[Path, str]:
    """The JDK's home and the ``mvn`` command, or ``Unavailable`` naming what is missing."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Unavailable("mvn not found: the real Elasticsearch node is unpacked by Maven")
    home = java_home()
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        raise Unavailable("setpriv not found (util-linux): as root the Elasticsearch node "
                          "must run as another user")
    return home, mvn


def build(*, quiet: bool = True) -> Path:
    """Unpack the distribution (once); its folder."""
    _, mvn = tools()
    if not UNPACKED.is_file():
        shutil.rmtree(DISTRIBUTION, ignore_errors=True)
        shutil.rmtree(TARGET / "markers", ignore_errors=True)
        command = [mvn, "-B", "-ntp", "-Dstyle.color=never", "-f", str(HERE / "pom.xml"),
                   f"-Delasticsearch.version={VERSION}", "dependency:unpack"]
        if quiet:
            command.insert(1, "-q")
        done = subprocess.run(command, capture_output=quiet, text=True,
                              timeout=BUILD_SECONDS, check=False)
        if done.returncode != 0 or not (DISTRIBUTION / "bin" / "elasticsearch").is_file():
            output = (done.stdout or "") + (done.stderr or "")
            raise RuntimeError(f"unpacking Elasticsearch {VERSION} failed:\n{output[-4000:]}")
        UNPACKED.write_text(f"{VERSION}\n")
    return DISTRIBUTION


def _user() -> pwd.struct_passwd | None:
    """Whom the node runs as: ``None`` for this process's own user (not root)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(RUN_AS)
    except KeyError:
        raise Unavailable(f"user {RUN_AS!r} not found: as root the Elasticsearch node runs "
                          "as another user (SEARCHPORT_ELASTICSEARCH_USER)") from None


def _as_user(user: pwd.struct_passwd | None, *, pdeathsig: bool = False) -> list[str]:
    prefix: list[str] = []
    setpriv = shutil.which("setpriv")
    if user is not None:
        assert setpriv is not None
        prefix = [setpriv, f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                  "--clear-groups"]
    elif setpriv is not None and pdeathsig:
        prefix = [setpriv]
    if pdeathsig and prefix:
        prefix += ["--pdeathsig", "TERM"]
    return prefix


def _can(user: pwd.struct_passwd | None, test: str, path: Path) -> bool:
    if user is None:
        return True
    done = subprocess.run([*_as_user(user), "test", test, str(path)], check=False)
    return done.returncode == 0


class ElasticsearchServer:
    """One Elasticsearch node: ``start`` unpacks if needed and waits until it is yellow."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.workdir = Path(workdir)
        self.port = port or free_port()
        self.process: subprocess.Popen[str] | None = None
        self.log: deque[str] = deque(maxlen=200)
        self.started_in: float | None = None
        self.version = VERSION
        self._exit_code: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def node_dir(self) -> Path:
        return self.workdir / "node"

    def _prepare(self, user: pwd.struct_passwd | None) -> Path:
        """The node's own folders (config, data, logs, tmp), the user's; the distribution's
        folder, copied into the work folder when that user cannot read the checkout's."""
        distribution = build()
        self.workdir.mkdir(parents=True, exist_ok=True)
        node = self.node_dir
        shutil.rmtree(node, ignore_errors=True)
        shutil.copytree(distribution / "config", node / "config")
        for name in ("data", "logs", "tmp"):
            (node / name).mkdir(parents=True)
        security = (distribution / "modules" / "x-pack-security").is_dir()
        settings = {
            "cluster.name": "searchport-test",
            "node.name": "searchport-test-node",
            "path.data": str(node / "data"),
            "path.logs": str(node / "logs"),
            "network.host": "127.0.0.1",
            "http.port": str(self.port),
            "transport.port": "0",
            "discovery.type": "single-node",
            # A test node on a disk that may be nearly full still takes writes.
            "cluster.routing.allocation.disk.threshold_enabled": "false",
            # A small heap: the parent breaker counts what is reserved, not the JVM's guess.
            "indices.breaker.total.use_real_memory": "false",
        }
        if security:
            settings["xpack.security.enabled"] = "false"
        (node / "config" / "elasticsearch.yml").write_text(
            "".join(f"{key}: {value}\n" for key, value in settings.items()))
        (node / "config" / "jvm.options.d" / "searchport.options").write_text(
            f"-Xms{HEAP}\n-Xmx{HEAP}\n"
            # no touching every page of the heap at start: a smaller resident size
            "-XX:-AlwaysPreTouch\n")
        if user is not None:
            os.chmod(self.workdir, os.stat(self.workdir).st_mode | 0o011)  # traversable
            for path in [node, *node.rglob("*")]:
                os.lchown(path, user.pw_uid, user.pw_gid)
            if not _can(user, "-w", node / "data"):
                raise RuntimeError(f"user {user.pw_name} cannot reach {node}: choose a work "
                                   "folder whose parents others may enter (e.g. under /tmp)")
            if not _can(user, "-x", distribution / "bin" / "elasticsearch"):
                copy = self.workdir / "distribution"
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(distribution, copy, symlinks=True)
                distribution = copy
        return distribution

    def command(self) -> tuple[list[str], dict[str, str]]:
        home, _ = tools()
        user = _user()
        distribution = self._prepare(user)
        node = self.node_dir
        environ = {key: value for key, value in os.environ.items()
                   if not key.startswith(("ES_", "CLI_JAVA", "JAVA_"))}
        environ.update({
            "ES_JAVA_HOME": str(home),
            "ES_PATH_CONF": str(node / "config"),
            "ES_TMPDIR": str(node / "tmp"),
            # the launcher's own temporary files (its JVM-flags probe) go there too
            "CLI_JAVA_OPTS": f"-Djava.io.tmpdir={node / 'tmp'}",
            "HOME": str(node),
        })
        command = [*_as_user(user, pdeathsig=True), str(distribution / "bin" / "elasticsearch")]
        return command, environ

    def start(self, *, echo: bool = False) -> None:
        command, environ = self.command()
        began = time.monotonic()
        # Its own session: a Ctrl-C in a terminal reaches the caller, which stops the node.
        # The launcher is sent SIGTERM when this thread's process dies (--pdeathsig).
        self.process = subprocess.Popen(command, env=environ, cwd=self.node_dir,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        threading.Thread(target=self._read, args=(echo,), daemon=True).start()
        deadline = began + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if self._yellow():
                self.started_in = time.monotonic() - began
                return
            time.sleep(0.2)
        self.stop()
        tail = "\n".join(self.log)
        raise RuntimeError(f"the Elasticsearch {VERSION} node was not ready within "
                           f"{START_SECONDS:g} s (exit code {self._exit_code}):\n"
                           f"{tail[-4000:]}")

    def _read(self, echo: bool) -> None:
        process = self.process
        assert process is not None and process.stdout is not None
        for line in process.stdout:
            if line.startswith("WARNING: Use of the three-letter time zone ID"):
                continue  # Java 25 says so once per zone at every start
            self.log.append(line.rstrip())
            if echo:
                print(line, end="", flush=True)

    def _yellow(self) -> bool:
        try:
            answer = httpx.get(f"{self.url}/_cluster/health",
                               params={"wait_for_status": "yellow", "timeout": "1s"},
                               timeout=3)
        except httpx.HTTPError:
            return False
        return answer.status_code == 200 and answer.json().get("status") in ("yellow", "green")

    def stop(self) -> None:
        """SIGTERM to the launcher (it closes the server JVM and waits for it), SIGKILL if
        it has not gone in time; then SIGKILL to whatever of its process group is left."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self._exit_code = process.returncode
        left = _group(process.pid)  # the server JVM, had the launcher died on its own
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = _group(process.pid)
        self.process = None

    def _signal(self, signum: int) -> None:
        assert self.process is not None
        for pid in _group(self.process.pid):
            os.kill(pid, signum)

    def pause(self) -> None:
        """SIGSTOP to both JVMs: the node keeps its sockets open and answers nothing."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def resident_bytes(self) -> int:
        """The launcher's and the server's resident memory together."""
        assert self.process is not None
        total = 0
        for pid in _group(self.process.pid):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
            total += int(found.group(1)) * 1024 if found else 0
        return total


def _group(pgid: int) -> list[int]:
    """The live processes of a process group (zombies left out)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # after the command: the state, the parent, the process group
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return found


def session_server(config: pytest.Config) -> ElasticsearchServer:
    """The session's one node (``tests/servers/session.py``)."""
    try:
        tools()
        _user()
    except Unavailable as exc:
        missing(str(exc))
    return session_node(config, "elasticsearch", ElasticsearchServer)
