"""``searchport init``: a starting ``config.yaml``, the commented example configuration with
its demo handle on the demo data shipped in the package, so an installed wheel has one too."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from searchport import demo

# the example's demo source, relative to a checkout; a written config names the package's file
_CHECKOUT_SOURCE = re.compile(r"^(\s+source:\s*)src/demo/cities\.jsonl\.gz(?=\s)", re.MULTILINE)


def starting_config() -> str:
    """The example configuration, its demo handle reading the package's demo data."""
    example = demo.EXAMPLE_CONFIG.read_text(encoding="utf-8")
    source = json.dumps(str(demo.SOURCE))  # a YAML double-quoted string: any path reads back
    text, replaced = _CHECKOUT_SOURCE.subn(lambda m: m.group(1) + source, example)
    if replaced != 1:
        raise RuntimeError(f"{demo.EXAMPLE_CONFIG} no longer names the demo source once")
    return text


def write_starting_config(folder: Path) -> Path:
    """``folder/config.yaml`` with :func:`starting_config`; an existing file is never replaced
    (``FileExistsError``)."""
    target = folder.resolve() / "config.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("x", encoding="utf-8") as out:
        out.write(starting_config())
    return target


def _program() -> str:
    """The command as it was typed (``.venv/bin/searchport``), so the next one can be pasted."""
    typed = sys.argv[0]
    return typed if Path(typed).name == "searchport" else "searchport"


def cmd_init(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    try:
        target = write_starting_config(folder)
    except FileExistsError:
        print(f"searchport: {(folder.resolve() / 'config.yaml')} already exists; init leaves "
              "it as it is (edit it, or init another folder)", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"searchport: cannot write {folder.resolve() / 'config.yaml'}: {exc.strerror}",
              file=sys.stderr)
        return 1
    shown = shlex.quote(str(target))
    program = shlex.quote(_program())
    print(f"wrote {target}: the example configuration, its demo handle 'cities' on the demo "
          "data of this install.\nNext, check it and start the service:\n"
          f"  {program} check --config {shown}\n"
          f"  {program} serve --config {shown}")
    return 0


def add_command(sub: Any) -> None:
    """``init`` under the root parser's subcommands."""
    init = sub.add_parser("init", help="write a starting config.yaml (the commented example, "
                                       "with the demo handle) into a folder")
    init.add_argument("folder", nargs="?", default=".",
                      help="where to write config.yaml (default: the current folder)")
    init.set_defaults(func=cmd_init)
