"""The ``searchport`` command: serve, check, index build."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from searchport import __version__
from searchport.adapters.config_loader import load_config
from searchport.domain.config import Config, ConfigError
from searchport.domain.errors import SearchportError


def _config_path(flag: str | None) -> Path:
    return Path(flag or os.environ.get("SEARCHPORT_CONFIG") or "config.yaml").resolve()


def _load(flag: str | None) -> tuple[Config, Path]:
    path = _config_path(flag)
    try:
        return load_config(path), path
    except ConfigError as exc:
        print(f"searchport: config error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


class ProgressBar:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.started = time.monotonic()
        self.drawn = 0.0

    def __call__(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self.drawn < 0.1 and done != total:
            return
        self.drawn = now
        rate = done / max(now - self.started, 1e-6)
        if total:
            filled = int(30 * done / total)
            bar = "#" * filled + "-" * (30 - filled)
            line = f"{self.label} [{bar}] {done}/{total} docs ({rate:,.0f}/s)"
        else:
            line = f"{self.label} {done} docs ({rate:,.0f}/s)"
        print(f"\r{line}", end="", file=sys.stderr, flush=True)

    def finish(self) -> None:
        print(file=sys.stderr, flush=True)


def _build(config: Config, path: Path, handle: str, force: bool) -> int:
    from searchport.adapters.tantivy import build_index

    bar = ProgressBar(f"building {handle}")
    report = build_index(handle, config.indexes[handle], path.parent, progress=bar, force=force)
    bar.finish()
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
    return 0


def cmd_index_build(args: argparse.Namespace) -> int:
    config, path = _load(args.config)
    handles = [args.handle] if args.handle else [
        h for h, i in config.indexes.items() if i.engine == "tantivy"
    ]
    for handle in handles:
        index = config.indexes.get(handle)
        if index is None or index.engine != "tantivy":
            print(f"searchport: {handle!r} is not a tantivy handle in {path}", file=sys.stderr)
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
    from searchport.adapters.http_clients import HttpClients
    from searchport.adapters.resources import EngineResources
    from searchport.entrypoints.container import make_engine

    failures = 0
    resources = EngineResources(base_dir=base_dir, http=HttpClients())
    try:
        for handle, index in config.indexes.items():
            try:
                engine = make_engine(handle, index, resources)
                await engine.start()
                try:
                    await engine.ping()
                finally:
                    await engine.close()
                print(f"ok      {handle} ({index.engine})")
            except (SearchportError, ConfigError) as exc:
                failures += 1
                message = exc.message if isinstance(exc, SearchportError) else str(exc)
                print(f"FAILED  {handle} ({index.engine}): {message}")
    finally:
        await resources.http.aclose()
    if config.cache.backend == "redis":
        failures += not await _check_cache(config)
    return 1 if failures else 0


async def _check_cache(config: Config) -> bool:
    """Whether the configured Redis answers (its address shown without credentials)."""
    from searchport.adapters.redis_link import redacted
    from searchport.entrypoints.container import build_cache

    cache = build_cache(config)
    try:
        status = await cache.probe()
    finally:
        await cache.close()
    where = redacted(config.cache.url or "")
    if status == "connected":
        print(f"ok      cache (redis at {where})")
        return True
    print(f"FAILED  cache (redis at {where}): not reachable; searches would run uncached")
    return False


def cmd_check(args: argparse.Namespace) -> int:
    config, path = _load(args.config)
    print(f"config  {path}: valid, {len(config.indexes)} index handle(s)")
    return asyncio.run(_check(config, path.parent))


def cmd_serve(args: argparse.Namespace) -> int:
    from granian.constants import Interfaces, Loops
    from granian.server import Server

    config, path = _load(args.config)
    for handle, index in config.indexes.items():  # build embedded indexes once, before workers
        if index.engine == "tantivy":
            try:
                _build(config, path, handle, force=False)
            except SearchportError as exc:
                print(f"searchport: {handle}: {exc.message}", file=sys.stderr)
                return 1
    host = args.host or config.host
    port = config.port if args.port is None else args.port
    shown = f"[{host}]" if ":" in host else host
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
        reload_paths=[Path(__file__).resolve().parents[1], path] if args.reload else None,
        log_access=False,  # searchport writes its own access log (see observability.py)
        workers_kill_timeout=config.shutdown_timeout,
    )
    server.serve()
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="searchport", description="A read-only search gateway.")
    root.add_argument("--version", action="version", version=f"searchport {__version__}")
    sub = root.add_subparsers(dest="command", required=True)
    config_help = "config file (default: $SEARCHPORT_CONFIG, then ./config.yaml)"

    serve = sub.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--config", help=config_help)
    serve.add_argument("--host", help="address to bind (default: config host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: config port, 3000)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    serve.add_argument("--reload", action="store_true", help="development: reload on changes")
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
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
