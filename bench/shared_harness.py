#!/usr/bin/env python3
"""searchport under the load harness (not included in this repository; see bench/README.md),
with its settings unchanged.

Writes the harness's gateway config (one handle `bench`: elasticsearch at the fake upstream,
indexName bench, facets category and period, highlight, perPage 20; no cache, no API key,
access log off), starts the fake upstream when it is not running, starts `searchport serve`
(one worker) under `taskset -c 0`, runs the harness's `run_bench.py` against it, then stops
what it started, by pid. The summary is in `<out>/summary.md` and `<out>/raw.json`.

    .venv/bin/python bench/shared_harness.py                      # this checkout
    .venv/bin/python bench/shared_harness.py --compare HEAD~1     # side by side with a commit
    .venv/bin/python bench/shared_harness.py --rounds 5 --cases search,query

`--compare REV` checks REV out into a temporary git worktree and serves it from there too
(both on core 0, interleaved by run_bench.py, `vs base` computed per round), so one change
is measured against the state before it in the same run; `--ours REV` serves `ours` from a
commit too (instead of the working tree, which may hold other people's unfinished edits).
Extra `run_bench.py` options go after `--`.

The gateways run from a production install, as the first command of README makes it
(`pip install -e .`, no test extras): `bench/.venv-prod`, created on first use (`--venv`
picks another). The test extras pull in pydantic, which dependency-injector and Litestar
then import too: about 0.2 s of startup and 20 MiB of RSS a user never pays.
`--cache memory` serves `ours` with the in-process response cache (`--base-cache` for base).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the load harness (not part of this repository): run_bench.py, upstream/run-upstream.sh (a
# fake Elasticsearch 8 on nginx at 127.0.0.1:9201) and wrk/get.lua; SEARCHPORT_LOAD_HARNESS
# names its folder, by default a "shared/bench" folder beside the checkout (or beside a
# folder holding several worktrees)
SHARED = Path(os.environ.get("SEARCHPORT_LOAD_HARNESS") or next(
    (parent / "shared" / "bench" for parent in ROOT.parents
     if (parent / "shared" / "bench" / "run_bench.py").exists()),
    ROOT.parent / "shared" / "bench"))
UPSTREAM = "http://127.0.0.1:9201"
GATEWAY_CORE = "0"

BENCH_CONFIG = {
    "host": "127.0.0.1",
    "apiKey": "",
    "accessLog": "off",
    "cache": {"backend": "none"},
    "indexes": {
        "bench": {
            "engine": "elasticsearch",
            "host": UPSTREAM,
            "indexName": "bench",
            "defaults": {"perPage": 20, "facets": ["category", "period"], "highlight": True},
        }
    },
}


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def production_python(venv: Path) -> Path:
    """The interpreter of a production install of this checkout (made when missing)."""
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating the production install {venv} (pip install -e .)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(ROOT)], check=True)
    return python


def serve(name: str, source: Path | None, config: Path, port: int, workdir: Path,
          extra: list[str], python: Path) -> subprocess.Popen[bytes]:
    """`searchport serve` pinned to the gateway core; ``source``: another checkout's `src`
    (imported first through PYTHONPATH, ahead of this venv's editable install)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("API_KEY", "REDIS_URL", "SEARCHPORT_CONFIG", "PORT", "PYTHONPATH")}
    if source is not None:
        shim = workdir / f"{name}-path"
        shim.mkdir()
        (shim / "searchport").symlink_to(source)
        env["PYTHONPATH"] = str(shim)
    log = (workdir / f"{name}.log").open("wb")
    command = ["taskset", "-c", GATEWAY_CORE, str(python), "-m", "searchport.entrypoints.cli",
               "serve", "--config", str(config), "--port", str(port), *extra]
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_ready(url: str, server: subprocess.Popen[bytes]) -> float:
    started = time.monotonic()
    while time.monotonic() - started < 60:
        if server.poll() is not None:
            raise SystemExit(f"the gateway exited with {server.returncode}")
        if answers(url + "/bench/search?q=castle"):
            return time.monotonic() - started
        time.sleep(0.05)
    raise SystemExit("the gateway did not answer within 60 s")


def stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=40)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare", metavar="REV", help="also serve this commit, as `base`")
    ap.add_argument("--ours", metavar="REV", help="serve `ours` from this commit")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=15)
    ap.add_argument("--cases", default="search_uniq,search,query,health,search_gzip")
    ap.add_argument("--access-log", choices=["off", "json"], default="off")
    ap.add_argument("--serve-args", default="", help="extra `searchport serve` arguments")
    ap.add_argument("--venv", type=Path, default=ROOT / "bench" / ".venv-prod",
                    help="production install to serve from (made when missing)")
    ap.add_argument("--cache", choices=["none", "memory"], default="none",
                    help="ours: response cache backend")
    ap.add_argument("--base-cache", choices=["none", "memory"], default="none")
    ap.add_argument("--base-serve-args", help="the same for base (default: --serve-args)")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    ap.add_argument("--out", default=f"/tmp/bench-results/searchport-{stamp}")
    ap.add_argument("--rules", type=int, default=0, metavar="N",
                    help="give `ours` N generated query rules (bench/rules.py, without "
                         "promotes and hides, as in the runs recorded); base keeps none")
    ap.add_argument("--analytics", choices=["default", "none"], default="default",
                    help="ours' query log: the default (SQLite, next to the config) or none; "
                         "a base older than the query log has no such setting")
    ap.add_argument("--base-analytics", choices=["default", "none"], default="default",
                    help="the same for base")
    ap.add_argument("rest", nargs="*", help="passed on to run_bench.py (after --)")
    args = ap.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="searchport-bench-"))
    python = production_python(args.venv.resolve())
    configs = {}
    for name, cache in (("ours", args.cache), ("base", args.base_cache)):
        configs[name] = workdir / f"{name}.yaml"
        config = {**BENCH_CONFIG, "accessLog": args.access_log, "cache": {"backend": cache}}
        if (args.analytics if name == "ours" else args.base_analytics) == "none":
            config["analytics"] = {"backend": "none"}
        if name == "ours" and args.rules:
            sys.path.insert(0, str(ROOT / "bench"))
            from rules import generated

            (workdir / "rules.json").write_text(json.dumps(generated(args.rules, False)),
                                                encoding="utf-8")
            config["indexes"] = {"bench": {**BENCH_CONFIG["indexes"]["bench"],  # type: ignore[index]
                                           "rules": "rules.json"}}
        configs[name].write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    started_upstream = not answers(UPSTREAM + "/")
    if started_upstream:
        subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "start"], check=True)
    worktrees: list[Path] = []
    servers: dict[str, subprocess.Popen[bytes]] = {}

    def checkout(name: str, rev: str) -> Path:
        worktree = workdir / name
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(worktree), rev], check=True)
        worktrees.append(worktree)
        return worktree / "src"

    try:
        gateways = {"ours": (checkout("ours", args.ours) if args.ours else None, 8710)}
        if args.compare:
            gateways["base"] = (checkout("base", args.compare), 8711)
        extra = {"ours": args.serve_args.split(),
                 "base": (args.serve_args if args.base_serve_args is None
                          else args.base_serve_args).split()}
        for name, (source, port) in gateways.items():
            servers[name] = serve(name, source, configs[name], port, workdir, extra[name],
                                  python)
        for name, (_, port) in gateways.items():
            took = wait_ready(f"http://127.0.0.1:{port}", servers[name])
            print(f"{name}: pid {servers[name].pid}, first search answered {took:.2f} s "
                  "after start", flush=True)
        command = [sys.executable, str(SHARED / "run_bench.py"),
                   "--rounds", str(args.rounds), "--duration", str(args.duration),
                   "--cases", args.cases, "--out", args.out]
        for name, (_, port) in gateways.items():
            command += ["--gateway", f"{name}=http://127.0.0.1:{port}",
                        "--pid", f"{name}={servers[name].pid}"]
        if args.compare:
            command += ["--baseline", "base"]
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout,
              flush=True)
        result = subprocess.run(command + args.rest)
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout)
        return result.returncode
    finally:
        for server in servers.values():
            stop(server)
        for worktree in worktrees:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(worktree)], check=False)
        if started_upstream:
            subprocess.run([str(SHARED / "upstream" / "run-upstream.sh"), "stop"], check=False)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
