"""Building a handle's index from its source file, when missing or stale."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec
import tantivy

from searchport.adapters.heap import give_back_freed_memory
from searchport.adapters.tantivy import values
from searchport.adapters.tantivy.documents import DocumentFactory, UnusableRow, field_value
from searchport.adapters.tantivy.folder import IndexFolder, IndexMeta, SourceStamp
from searchport.adapters.tantivy.ranking import rank_weights
from searchport.adapters.tantivy.schema import ID_FIELD, IndexLayout, register_analyzers
from searchport.adapters.tantivy.source import SourceRow, count_rows, file_digest, read_rows
from searchport.domain.config import IndexConfig
from searchport.domain.errors import EngineUnavailable

Progress = Callable[[int, int | None], None]

_PROGRESS_EVERY = 1000
# One writer thread keeps a typical source in one segment: exact facet counts, fast merges.
_WRITER_HEAP = 128_000_000
_WRITER_THREADS = 1


class IndexBuildReport(msgspec.Struct, frozen=True, kw_only=True):
    handle: str
    path: str
    docs: int
    seconds: float
    rebuilt: bool  # False: the index was already up to date
    skipped_rows: int = 0  # unreadable lines, non-objects, rows without an id
    skipped_values: int = 0  # values of the wrong type for their field, left out
    duplicate_ids: int = 0  # later rows replaced earlier ones with the same id
    embedded: int = 0  # records whose vectors were computed (the others' were reused)


def resolve_path(base_dir: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base_dir / path


def index_folder(handle: str, config: IndexConfig, base_dir: Path) -> IndexFolder:
    if not config.path:
        raise EngineUnavailable(f"indexes.{handle}.path is required by the tantivy engine")
    return IndexFolder(resolve_path(base_dir, config.path))


def build_index(
    handle: str,
    config: IndexConfig,
    base_dir: Path,
    progress: Progress | None = None,
    force: bool = False,
    embedding: Progress | None = None,
) -> IndexBuildReport:
    """Build the index unless it is up to date with its source and fields config, and the
    vectors of its records when it searches by meaning (``embedding``: their progress)."""
    layout = IndexLayout(config)
    folder = index_folder(handle, config, base_dir)
    source = resolve_path(base_dir, config.source) if config.source else None
    with folder.build_lock():
        meta = folder.read_meta()
        if not force and meta is not None and _is_fresh(folder, meta, layout, source):
            generation = folder.generation_path(meta)
            embedded = _meaning(handle, config, base_dir, generation, source, generation,
                                embedding)
            return IndexBuildReport(handle=handle, path=str(folder.path), docs=meta.docs,
                                    seconds=0.0, rebuilt=False, embedded=embedded)
        if source is None:
            raise EngineUnavailable(
                f"the index of {handle} is missing or outdated and indexes.{handle}.source "
                f"is not set"
            )
        if not source.is_file():
            raise EngineUnavailable(f"the source file of {handle} was not found: {source}")
        previous = None if meta is None else folder.generation_path(meta)
        try:
            return _build(handle, folder, layout, source, progress, lambda generation: _meaning(
                handle, config, base_dir, generation, source, previous, embedding))
        except (OSError, ValueError) as exc:
            raise EngineUnavailable(f"building the index of {handle} failed: {exc}") from exc


def _is_fresh(folder: IndexFolder, meta: IndexMeta, layout: IndexLayout,
              source: Path | None) -> bool:
    fresh, restamp = _freshness(folder, meta, layout, source)
    if restamp is not None:
        # Touched but unchanged: remember the new mtime so the next start skips hashing.
        folder.commit(msgspec.structs.replace(meta, source=restamp))
    return fresh


def _freshness(folder: IndexFolder, meta: IndexMeta, layout: IndexLayout,
               source: Path | None) -> tuple[bool, SourceStamp | None]:
    """Whether the built generation still matches its fields config and source (read-only),
    and the source's new stamp when only its mtime changed."""
    generation = folder.generation_path(meta)
    if meta.fingerprint != layout.fingerprint() or not generation.is_dir():
        return False, None
    try:
        if not tantivy.Index.is_compatible(str(generation)):
            return False, None
    except ValueError:
        return False, None
    if source is None or not source.is_file() or meta.source is None:
        return True, None  # nothing to compare with: keep serving what was built
    stat = source.stat()
    if (stat.st_size, stat.st_mtime_ns) == (meta.source.size, meta.source.mtime_ns):
        return True, None
    digest = file_digest(source)
    if digest != meta.source.sha256:
        return False, None
    return True, SourceStamp(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=digest)


def index_state(handle: str, config: IndexConfig, base_dir: Path) -> tuple[str, Path | None]:
    """What ``searchport check`` reports of a handle's index, without writing anything: no
    build, no lock file, no new stamp. Returns a sentence and the live generation's folder
    when it is up to date (None otherwise). Raises ``EngineUnavailable`` for what would stop
    ``serve``: an index it cannot build for want of a readable source."""
    folder = index_folder(handle, config, base_dir)
    source = resolve_path(base_dir, config.source) if config.source else None
    meta = folder.read_meta()
    # serve writes there (a build, its lock, tantivy's own lock even to search): the folder,
    # or the nearest existing folder above it, must be writable
    existing = next(p for p in (folder.path, *folder.path.parents) if p.exists())
    if not os.access(existing, os.W_OK):
        where = "" if existing == folder.path else f"{existing} "
        raise EngineUnavailable(folder.unwritable(f"{where}read-only for this user"))
    if source is not None and not source.is_file():
        if meta is None:
            raise EngineUnavailable(f"the source file of {handle} was not found: {source}")
        source = None  # serve keeps the built index when its source is gone
    if meta is None:
        if source is None:
            raise EngineUnavailable(
                f"the index of {handle} is not built and indexes.{handle}.source is not set"
            )
        return f"not built yet: `serve` or `searchport index build` builds it from {source}", None
    fresh, _ = _freshness(folder, meta, IndexLayout(config), source)
    if not fresh and source is None:
        raise EngineUnavailable(
            f"the index of {handle} is outdated and its source file is not available"
        )
    if not fresh:
        return f"{meta.docs} documents, outdated: `serve` rebuilds it from {source}", None
    return f"{meta.docs} documents, up to date", folder.generation_path(meta)


def _meaning(handle: str, config: IndexConfig, base_dir: Path, generation: Path,
             source: Path | None, previous: Path | None, progress: Progress | None) -> int:
    """The vectors of the records in ``generation``, unless they are there for the model
    and fields configured (``previous``: a generation whose vectors may be reused).
    Returns how many records were embedded."""
    if config.semantic is None:
        return 0
    from searchport.adapters.semantic import document_model
    from searchport.adapters.semantic.settings import install_problem
    from searchport.adapters.tantivy import vectors

    problem = install_problem(config)
    if problem is not None:
        raise EngineUnavailable(problem)
    model, open_model = document_model(handle, config, base_dir)
    if vectors.is_current(generation, model, vectors.meaning_fields(config)):
        return 0
    if source is None or not source.is_file():
        raise EngineUnavailable(f"the vectors of {handle} cannot be computed: its source "
                                f"file is not available")
    return vectors.build_vectors(generation, config, read_rows(source), model, open_model,
                                 reuse=vectors.Reusable(previous), progress=progress)


def _build(handle: str, folder: IndexFolder, layout: IndexLayout, source: Path,
           progress: Progress | None, finish: Callable[[Path], int]) -> IndexBuildReport:
    started = time.perf_counter()
    stat = source.stat()
    stamp = SourceStamp(size=stat.st_size, mtime_ns=stat.st_mtime_ns,
                        sha256=file_digest(source))
    total = count_rows(source)
    generation = folder.new_generation()
    writer: tantivy.IndexWriter | None = None
    try:
        index = tantivy.Index(layout.build_schema(), path=str(generation), reuse=False)
        register_analyzers(index)
        writer = index.writer(heap_size=_WRITER_HEAP, num_threads=_WRITER_THREADS)
        factory = DocumentFactory(layout, keyword_ranks(layout, read_rows(source)),
                                  rank_weights(layout, read_rows(source)))
        seen: set[str] = set()
        stored: set[str] = set()
        rows = skipped_rows = skipped_values = duplicates = 0
        if progress:
            progress(0, total)
        for seq, row in enumerate(read_rows(source)):
            rows = seq + 1
            if progress and rows % _PROGRESS_EVERY == 0:
                progress(rows, total)
            try:
                made = factory.make(row, seq)
            except UnusableRow:
                skipped_rows += 1
                continue
            if made.doc_id in seen:
                writer.delete_documents_by_term(ID_FIELD, made.doc_id)
                duplicates += 1
            seen.add(made.doc_id)
            stored.update(row.row or ())
            writer.add_document(made.document)
            skipped_values += made.bad_values
        writer.commit()
        writer.wait_merging_threads()
        if progress:
            progress(rows, total if total is not None else rows)
    except BaseException:
        _discard(writer)
        shutil.rmtree(generation, ignore_errors=True)
        raise
    writer = None  # its buffers freed, then given back: a small index may be rebuilt often
    del index
    give_back_freed_memory()
    try:
        embedded = finish(generation)  # before the generation goes live
    except BaseException:
        shutil.rmtree(generation, ignore_errors=True)
        raise
    meta = IndexMeta(fingerprint=layout.fingerprint(), generation=generation.name,
                     docs=len(seen), skipped_rows=skipped_rows, skipped_values=skipped_values,
                     duplicate_ids=duplicates, built_at=time.time(), source=stamp,
                     stored_fields=tuple(sorted(stored)))
    folder.commit(meta)
    folder.remove_generations_except(generation.name)
    return IndexBuildReport(
        handle=handle, path=str(folder.path), docs=len(seen),
        seconds=round(time.perf_counter() - started, 3), rebuilt=True,
        skipped_rows=skipped_rows, skipped_values=skipped_values, duplicate_ids=duplicates,
        embedded=embedded,
    )


def keyword_ranks(layout: IndexLayout, rows: Iterable[SourceRow]) -> dict[str, dict[str, int]]:
    """Every keyword field's distinct values, ranked in sorted order (a first pass over the
    source): tantivy sorts by a number much faster than by a string."""
    names = layout.of_type("keyword")
    seen: dict[str, set[str]] = {name: set() for name in names}
    for source in rows:
        if source.row is None:
            continue
        for name in names:
            value = field_value(source.row, name)
            for item in value if isinstance(value, list) else [value]:
                if item is not None:
                    with contextlib.suppress(values.BadValue):
                        seen[name].add(values.as_keyword(item))
    return {name: {v: rank for rank, v in enumerate(sorted(found))}
            for name, found in seen.items()}


def _discard(writer: tantivy.IndexWriter | None) -> None:
    """Stop a failed build's writer threads before its folder is removed under them."""
    if writer is None:
        return
    try:
        writer.rollback()
        writer.wait_merging_threads()
    except Exception:  # already committed or consumed: nothing left running
        pass
