"""The ``searchport`` command: init, serve, check, index build, keys secure."""

from __future__ import annotations

import argparse
import asyncio
import errno
import importlib.util
import os
import socket
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from searchport import __version__
from searchport.adapters.config_loader import load_config, parse_config
from searchport.adapters.heap import bound_arenas
from searchport.domain.config import Config, ConfigError, IndexConfig
from searchport.domain.errors import EngineUnavailable, SearchportError
from searchport.entrypoints.cli.init_config import add_command as add_init_command
from searchport.entrypoints.cli.keys import add_commands as add_key_commands
from searchport.entrypoints.cli.keys import secure

if TYPE_CHECKING:
    from searchport.entrypoints.container import Container


def demo_home(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user folder of the built-in demo (its config and index): the XDG cache."""
    env = os.environ if environ is None else environ
    base = Path(env.get("XDG_CACHE_HOME") or "").expanduser()
    if not base.is_absolute():  # unset, empty or relative: ignored, as the XDG spec says
        base = Path.home() / ".cache"
    return base / "searchport" / "demo"


def _explicit_config(flag: str | None) -> Path | None:
    """The config named by --config or $SEARCHPORT_CONFIG, else ./config.yaml when it exists;
    None means no config at all (the built-in demo)."""
    named = flag or os.environ.get("SEARCHPORT_CONFIG")
    if named:
        return Path(named).resolve()
    local = Path("config.yaml").resolve()
    return local if local.exists() else None


def _semantic_installed() -> bool:
    """Whether the ``semantic`` extra (the builtin embedder's imports) is installed."""
    from searchport.adapters.semantic.settings import REQUIRED

    return all(importlib.util.find_spec(name) is not None for name in REQUIRED)


def _demo_text() -> str:
    from searchport import demo

    return demo.config_text(semantic=_semantic_installed())


def _demo_note(folder: Path) -> str:
    if _semantic_installed():
        places = ("places (1,035 of them, described) is searched by words and by meaning: "
                  "/places/search?q=...&semantic=0.5")
    else:
        places = ("places (1,035 of them, described) is searched by words only: the "
                  "semantic extra is not installed (pip install 'searchport[semantic]' "
                  "to search by meaning)")
    return (
        f"searchport: no config.yaml in {Path.cwd()} and no --config: using the built-in "
        f"demo (34,006 world cities; {places}). Its config and indexes live in {folder}; "
        "delete that folder to remove them."
    )


def _assemble(config: Config, base_dir: Path) -> None:
    """Build from the config what each worker builds before it serves, starting nothing: the
    engines, the rules, the cache, the rate limit and analytics stores. ``ConfigError`` when
    one cannot be built (a missing extra, an unreadable CA bundle...): ``check`` reports it,
    ``serve`` stops on it before any worker starts."""
    from searchport.entrypoints.container import create_container

    create_container(config, base_dir)


def _assemble_apart(path: Path) -> None:
    """``_assemble`` before any worker starts, in a child process where the system forks:
    the parent, which lives as long as the server, then never holds the rules nor the
    modules of the service (the memory ten thousand rules take stays with a process once
    used); each worker builds its own. ``ConfigError`` with the child's message."""
    if not hasattr(os, "fork"):
        _assemble(load_config(path), path.parent)
        return
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: check, say why not, and leave without running the parent's code
        os.close(read)
        code = 2
        try:
            _assemble(load_config(path), path.parent)
            code = 0
        except Exception as exc:  # every failure is the parent's to report
            os.write(write, str(exc).encode("utf-8", "replace")[:60_000])
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise ConfigError(message or "the config could not be checked")


def _load(flag: str | None) -> tuple[Config, Path]:
    """The config to run with; without one, the built-in demo's, written to ``demo_home``."""
    path = _explicit_config(flag)
    if path is None:
        folder = demo_home()
        path = folder / "config.yaml"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            text = _demo_text()
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"searchport: cannot prepare the built-in demo in {folder}: {exc.strerror}; "
                  "pass --config", file=sys.stderr)
            raise SystemExit(2) from None
        print(_demo_note(folder), file=sys.stderr)
    try:
        config = load_config(path, rules=False)  # what this process needs: no rules
        _assemble_apart(path)
        return config, path
    except ConfigError as exc:
        print(f"searchport: config error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


class ProgressBar:
    """A one-line progress bar on stderr, redrawn at most ten times a second; when stderr
    is not a terminal (a log file, a service manager's journal) a plain line every five
    seconds instead, so the log is not one long line of redraws."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.started = time.monotonic()
        self.drawn = 0.0
        self.tty = sys.stderr.isatty()
        self.every = 0.1 if self.tty else 5.0

    def __call__(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self.drawn < self.every and done != total:
            return
        self.drawn = now
        rate = done / max(now - self.started, 1e-6)
        if total:
            filled = int(30 * done / total)
            bar = "#" * filled + "-" * (30 - filled)
            line = f"{self.label} [{bar}] {done}/{total} docs ({rate:,.0f}/s)"
        else:
            line = f"{self.label} {done} docs ({rate:,.0f}/s)"
        if self.tty:
            print(f"\r{line}", end="", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def finish(self) -> None:
        if self.tty:
            print(file=sys.stderr, flush=True)


def _build(config: Config, path: Path, handle: str, force: bool) -> int:
    from searchport.adapters.tantivy import build_index

    bar = ProgressBar(f"building {handle}")
    vectors = ProgressBar(f"embedding {handle}")  # records whose vectors are computed
    bars = [bar]

    def embedding(done: int, total: int | None) -> None:
        if bars[-1] is bar:  # the index is built: the vectors' bar goes on a line of its own
            bar.finish()
            bars.append(vectors)
        vectors(done, total)

    report = build_index(handle, config.indexes[handle], path.parent, progress=bar, force=force,
                         embedding=embedding)
    bars[-1].finish()
    if report.rebuilt:
        notes = [
            f"{count} {what}"
            for count, what in (
                (report.skipped_rows, "unreadable rows skipped"),
                (report.skipped_values, "ill-typed values left out"),
                (report.duplicate_ids, "duplicate ids replaced"),
            )
            if count
        ]
        extra = f" ({', '.join(notes)})" if notes else ""
        print(f"{handle}: indexed {report.docs} documents in {report.seconds:.1f} s{extra}")
    else:
        print(f"{handle}: index is up to date ({report.docs} documents)")
    if report.embedded:
        print(f"{handle}: computed the vectors of {report.embedded} records")
    return 0


def cmd_index_build(args: argparse.Namespace) -> int:
    config, path = _load(args.config)
    handles = [args.handle] if args.handle else [
        h for h, i in config.indexes.items() if i.engine == "tantivy" and i.replica_of is None
    ]
    for handle in handles:
        index = config.indexes.get(handle)
        if index is None or index.engine != "tantivy":
            print(f"searchport: {handle!r} is not a tantivy handle in {path}", file=sys.stderr)
            return 2
        if index.replica_of is not None:
            print(f"searchport: {handle!r} is a replica of {index.replica_of!r}, which holds "
                  f"the index", file=sys.stderr)
            return 2
        try:
            _build(config, path, handle, args.force)
        except SearchportError as exc:
            print(f"searchport: {handle}: {exc.message}", file=sys.stderr)
            return 1
    return 0


async def _check(config: Config, base_dir: Path) -> int:
    # imported here, as in _check_cache: `serve`'s parent process only reads the config, and
    # each of its forked workers imports what it runs (a smaller parent: less RSS in all)
    from searchport.entrypoints.container import Container

    container = Container(config=config, base_dir=base_dir)
    failures = 0
    try:
        for handle, index in config.indexes.items():
            try:
                print(f"ok      {handle}{await _check_handle(container, handle, index)}")
            except (SearchportError, ConfigError) as exc:
                failures += 1
                message = exc.message if isinstance(exc, SearchportError) else str(exc)
                print(f"FAILED  {handle} ({index.engine}): {message}")
    finally:
        await container.engine_pools().aclose()
    if config.cache.backend == "redis":
        failures += not await _check_cache(container)
    return 1 if failures else 0


async def _check_handle(container: Container, handle: str, index: IndexConfig) -> str:
    """What ``check`` says of one handle that is fine, after its name."""
    if index.replica_of is not None:
        return f": a replica of {index.replica_of}"
    from searchport.adapters.semantic.settings import install_problem

    missing = install_problem(index)
    if missing is not None:  # a handle searching by meaning without the extra
        raise ConfigError(missing)
    if index.engine == "querySuggestions":  # built by serve, from the log
        return (f" ({index.engine}): the popular searches of {index.source}, built by "
                "`serve` from the query log")
    if index.engine == "tantivy":  # checked in place: check never builds
        found = await _check_tantivy(handle, index, container.base_dir())
        meaning = "; searched by words and by meaning" if index.semantic is not None else ""
        return f" ({index.engine}): {found}{meaning}"
    engine = container.engine(handle, index)
    await engine.start()
    try:
        await engine.ping()
    finally:
        await engine.close()
    return f" ({index.engine})"


async def _check_tantivy(handle: str, index: IndexConfig, base_dir: Path) -> str:
    from searchport.adapters.tantivy import check_index

    try:
        return await asyncio.to_thread(check_index, handle, index, base_dir)
    except (OSError, ValueError) as exc:  # an unreadable or damaged index folder
        raise EngineUnavailable(f"the index of {handle} cannot be read ({exc})") from exc


def address_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, in a sentence that says what to do, else None.

    The ASGI server binds with SO_REUSEPORT, which lets a second server share a busy port
    silently; a plain bind first (SO_REUSEADDR only, as every server sets) refuses that."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return _bind_failure(exc)
    return None


def _bind_failure(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EADDRINUSE:
        return (f"{reason} (is another searchport or server running there?). Stop it, pick "
                "another --port, or pass --share-port to let processes share the address.")
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{reason}: --host must be an address of this machine (127.0.0.1, 0.0.0.0, ::1)."
    if exc.errno == errno.EACCES:
        return f"{reason}: ports below 1024 need privileges; pick another --port."
    return f"{reason}."


async def _check_cache(container: Container) -> bool:
    """Whether the configured Redis answers (its address shown without credentials)."""
    from searchport.adapters.redis_link import redacted

    cache = container.cache_backend()
    try:
        status = await cache.probe()
    finally:
        await cache.close()
    where = redacted(container.config().cache.url or "")
    if status == "connected":
        print(f"ok      cache (redis at {where})")
        return True
    print(f"FAILED  cache (redis at {where}): not reachable; searches would run uncached")
    return False


def cmd_check(args: argparse.Namespace) -> int:
    """Validate the config and ping every engine; writes nothing (no index build, not even
    the built-in demo's config file)."""
    path = _explicit_config(args.config)
    try:
        if path is None:
            base_dir = demo_home()
            config = parse_config(_demo_text(), os.environ)
            where = (f"built-in demo (no config.yaml in {Path.cwd()}; `serve` keeps it "
                     f"in {base_dir})")
        else:
            base_dir = path.parent
            config = load_config(path)
            where = str(path)
        _assemble(config, base_dir)
    except ConfigError as exc:
        print(f"searchport: config error: {exc}", file=sys.stderr)
        return 2
    print(f"config  {where}: valid, {len(config.indexes)} index handle(s)")
    if path is None and not _semantic_installed():
        print("note    places: searched by words only, the semantic extra is not installed "
              "(pip install 'searchport[semantic]' to search it by meaning too)")
    return asyncio.run(_check(config, base_dir))


SERVE_ARENAS = 2  # glibc arenas of the server and its forked workers (adapters/heap.py)


def cmd_serve(args: argparse.Namespace) -> int:
    from granian.constants import Interfaces, Loops
    from granian.server import Server

    # before any thread (index builds, granian's runtime, the workers' searches): each
    # thread searching at once would otherwise keep an arena of freed memory of its own
    bound_arenas(SERVE_ARENAS)
    config, path = _load(args.config)
    host = args.host or config.host
    port = config.port if args.port is None else args.port
    busy = None if args.share_port else address_in_use(host, port)
    shown = f"[{host}]" if ":" in host else host
    if busy is not None:
        print(f"searchport: cannot listen on {shown}:{port}: {busy}", file=sys.stderr)
        return 1
    for handle, index in config.indexes.items():  # build embedded indexes once, before workers
        if index.engine == "tantivy" and index.replica_of is None:
            try:
                _build(config, path, handle, force=False)
            except SearchportError as exc:
                print(f"searchport: {handle}: {exc.message}", file=sys.stderr)
                return 1
    os.environ["SEARCHPORT_CONFIG"] = str(path)
    os.environ["SEARCHPORT_LISTEN_URL"] = f"http://{shown}:{port}"
    if args.reload and config.access_log != "off":
        os.environ["SEARCHPORT_ACCESS_LOG"] = "text"
    server = Server(
        "searchport.entrypoints.asgi:create",
        address=host,
        port=port,
        interface=Interfaces.ASGI,
        workers=args.workers,
        loop=Loops(args.loop),
        factory=True,
        reload=args.reload,
        reload_paths=[Path(__file__).resolve().parents[2], path] if args.reload else None,
        log_access=False,  # searchport writes its own access log (see http/observability.py)
        workers_kill_timeout=config.shutdown_timeout,
    )
    server.serve()
    return 0


def cmd_keys_secure(args: argparse.Namespace) -> int:
    path = _explicit_config(args.config)
    if path is None:
        print("searchport: keys secure needs a config with named keys (--config)",
              file=sys.stderr)
        return 2
    try:
        config = load_config(path)
    except ConfigError as exc:
        print(f"searchport: config error: {exc}", file=sys.stderr)
        return 2
    return secure(args, config)


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="searchport", description="A read-only search gateway.")
    root.add_argument("--version", action="version", version=f"searchport {__version__}")
    sub = root.add_subparsers(dest="command", required=True)
    config_help = ("config file (default: $SEARCHPORT_CONFIG, then ./config.yaml, else the "
                   "built-in demo)")

    serve = sub.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--config", help=config_help)
    serve.add_argument("--host", help="address to bind (default: config host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: config port, 3000)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    serve.add_argument("--reload", action="store_true", help="development: reload on changes")
    serve.add_argument("--share-port", action="store_true",
                       help="listen even when another process holds the address (SO_REUSEPORT: "
                            "the kernel spreads connections over them); refused by default")
    serve.add_argument("--loop", choices=["auto", "asyncio", "uvloop"], default="auto",
                       help="event loop (default auto: uvloop when installed, else asyncio)")
    serve.set_defaults(func=cmd_serve)

    check = sub.add_parser("check", help="validate the config and ping every engine")
    check.add_argument("--config", help=config_help)
    check.set_defaults(func=cmd_check)

    index = sub.add_parser("index", help="manage embedded (tantivy) indexes")
    index_sub = index.add_subparsers(dest="index_command", required=True)
    build = index_sub.add_parser("build", help="build a tantivy index from its source file")
    build.add_argument("handle", nargs="?", help="the handle (default: every tantivy handle)")
    build.add_argument("--config", help=config_help)
    build.add_argument("--force", action="store_true", help="rebuild even when up to date")
    build.set_defaults(func=cmd_index_build)

    add_init_command(sub)
    add_key_commands(sub, config_help, cmd_keys_secure)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130


def console() -> NoReturn:
    """The ``searchport`` command: ``main``, then the process's exit with its code."""
    sys.exit(main())

