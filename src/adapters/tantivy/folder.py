"""The index folder: generations of tantivy indexes and the file naming the live one.

    <path>/searchport-index.json   which generation is live, and what it was built from
    <path>/gen-<stamp>/            one complete tantivy index per build

A build writes a new generation, then swaps the small JSON file with ``os.replace``
(atomic), so a crash at any moment leaves the previous index live and whole.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from searchport.domain.errors import EngineUnavailable

META_FILE = "searchport-index.json"
LOCK_FILE = ".searchport-build.lock"
GENERATION_PREFIX = "gen-"


class SourceStamp(msgspec.Struct, frozen=True, kw_only=True):
    size: int
    mtime_ns: int
    sha256: str


class IndexMeta(msgspec.Struct, frozen=True, kw_only=True):
    fingerprint: str  # of the fields config and index layout
    generation: str
    docs: int
    skipped_rows: int = 0
    skipped_values: int = 0
    duplicate_ids: int = 0
    built_at: float = 0.0
    source: SourceStamp | None = None
    # the top-level keys of the rows indexed: the fields a hit can carry, typed or not
    stored_fields: tuple[str, ...] = ()


class IndexFolder:
    def __init__(self, path: Path) -> None:
        self.path = path

    def read_meta(self) -> IndexMeta | None:
        try:
            return msgspec.json.decode((self.path / META_FILE).read_bytes(), type=IndexMeta)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return None  # missing or foreign: treated as "no index yet"

    def generation_path(self, meta: IndexMeta) -> Path:
        return self.path / meta.generation

    def new_generation(self) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        path = self.path / f"{GENERATION_PREFIX}{stamp}-{secrets.token_hex(4)}"
        path.mkdir(parents=True)
        return path

    def commit(self, meta: IndexMeta) -> None:
        """Make ``meta.generation`` the live index, atomically."""
        temp = self.path / f".{META_FILE}.{secrets.token_hex(4)}"
        with temp.open("wb") as handle:
            handle.write(msgspec.json.encode(meta))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, self.path / META_FILE)

    def remove_generations_except(self, keep: str) -> None:
        """Old and half-built generations; a process still reading one keeps its open
        files (POSIX), so this is safe while a server runs."""
        for child in self.path.iterdir():
            if child.name.startswith(GENERATION_PREFIX) and child.name != keep:
                shutil.rmtree(child, ignore_errors=True)

    def unwritable(self, reason: str) -> str:
        """Why the folder cannot be used, and what to do: tantivy takes a lock file in the
        index folder even to search it, so a read-only folder cannot be served."""
        return (f"the index folder {self.path} is not writable ({reason}); the embedded "
                "engine writes its lock files there even to search, so give it a writable "
                "folder (indexes.<handle>.path, or XDG_CACHE_HOME for the built-in demo)")

    @contextlib.contextmanager
    def build_lock(self, name: str = LOCK_FILE) -> Iterator[None]:
        """One build at a time per folder, across processes (a server and the CLI);
        ``name``: another lock file, for work around a build."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            lock = (self.path / name).open("a+b")
        except OSError as exc:
            raise EngineUnavailable(self.unwritable(exc.strerror or str(exc))) from exc
        with lock as handle:
            try:
                import fcntl
            except ImportError:  # not POSIX: no cross-process lock
                yield
                return
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
