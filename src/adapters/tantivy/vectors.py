"""The vectors of a handle's records, beside its tantivy index (``semantic.fields``).

Each index generation folder holds, when its handle searches by meaning:

- ``vectors.npy``: one unit vector (float32) per source row, in the order the rows were
  indexed (the row's ``SEQ_FIELD``); a row that was not indexed has a zero vector;
- ``vector-digests.npy``: per row, a digest of the model and of the text embedded, so that
  a rebuild embeds only the records whose text changed and copies the others' vectors;
- ``vectors.json`` (written last): the model, the fields, and each row's document id.

Search is exact: every vector's dot product with the query's (the cosine, as both are unit
vectors), which takes a few milliseconds up to a few hundred thousand records.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import msgspec

from searchport.adapters.tantivy.documents import UnusableRow, document_id, field_value
from searchport.adapters.tantivy.source import SourceRow
from searchport.domain.config import IndexConfig

VECTORS, DIGESTS, META = "vectors.npy", "vector-digests.npy", "vectors.json"
EMBED_BATCH = 256
Embed = Callable[[list[str]], Any]  # texts -> an (n, dimensions) float32 array
Progress = Callable[[int, int | None], None]


class VectorsMeta(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    fields: tuple[str, ...]
    dimensions: int
    ids: tuple[str | None, ...]  # each row's document id (None: the row was not indexed)


def meaning_fields(config: IndexConfig) -> tuple[str, ...]:
    """The source fields whose text is embedded (an alias read as its real field)."""
    assert config.semantic is not None
    names = []
    for name in config.semantic.fields:
        field = config.fields.get(name)
        names.append(field.field if field is not None and field.field else name)
    return tuple(names)


def record_text(row: dict[str, Any], fields: Iterable[str]) -> str:
    """What a record means, as text: its fields' values, in the configured order."""
    parts: list[str] = []
    for name in fields:
        value = field_value(row, name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str | int | float) and not isinstance(item, bool):
                text = str(item).strip()
                if text:
                    parts.append(text)
    return ". ".join(parts)


def read_meta(generation: Path) -> VectorsMeta | None:
    try:
        return msgspec.json.decode((generation / META).read_bytes(), type=VectorsMeta)
    except (OSError, msgspec.DecodeError):
        return None


def is_current(generation: Path, model: str, fields: tuple[str, ...]) -> bool:
    meta = read_meta(generation)
    return meta is not None and meta.model == model and meta.fields == fields


class Reusable:
    """The vectors of a generation built before, by the digest of what they embed."""

    def __init__(self, generation: Path | None) -> None:
        import numpy as np

        self.rows: dict[bytes, int] = {}
        self.vectors: Any = None
        if generation is None or read_meta(generation) is None:
            return
        try:
            digests = np.load(generation / DIGESTS)
            self.vectors = np.load(generation / VECTORS)
        except (OSError, ValueError):
            return
        self.rows = {bytes(digest): row for row, digest in enumerate(digests)}


def build_vectors(generation: Path, config: IndexConfig, rows: Iterable[SourceRow],
                  model: str, open_model: Callable[[], AbstractContextManager[Embed]], *,
                  reuse: Reusable | None = None, progress: Progress | None = None) -> int:
    """Write the vectors of ``rows`` (the source, in indexing order) into ``generation``;
    ``open_model()`` gives the embedder, opened only when some text has no vector to
    reuse. Returns how many distinct texts were embedded."""
    import numpy as np

    fields = meaning_fields(config)
    ids, texts = _record_texts(config, rows, fields)
    digests = _digests(model, texts)
    reuse = reuse or Reusable(None)
    # each text not embedded before, once (records with the same text share its vector)
    firsts: dict[bytes, int] = {}
    for i in range(len(texts)):
        if ids[i] is not None and bytes(digests[i]) not in reuse.rows:
            firsts.setdefault(bytes(digests[i]), i)
    todo = list(firsts.values())
    vectors = _reused(reuse, ids, digests)
    if progress:
        progress(0, len(todo))
    with open_model() if todo else nullcontext(None) as embed:
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start:start + EMBED_BATCH]
            assert embed is not None
            found = embed([texts[i] for i in batch])
            if vectors is None:
                vectors = np.zeros((len(texts), found.shape[1]), dtype=np.float32)
            vectors[batch] = found
            if progress:
                progress(start + len(batch), len(todo))
    for i in range(len(texts)):  # the records whose text another record had
        first = firsts.get(bytes(digests[i])) if ids[i] is not None else None
        if first is not None and first != i and vectors is not None:
            vectors[i] = vectors[first]
    if vectors is None:  # nothing to embed, nothing to reuse: no record has text
        vectors = np.zeros((len(texts), 1), dtype=np.float32)
    _write(generation / VECTORS, lambda f: np.save(f, vectors))
    _write(generation / DIGESTS, lambda f: np.save(f, digests))
    meta = VectorsMeta(model=model, fields=fields, dimensions=int(vectors.shape[1]),
                       ids=tuple(ids))
    _write(generation / META, lambda f: f.write(msgspec.json.encode(meta)))
    return len(todo)


def _record_texts(config: IndexConfig, rows: Iterable[SourceRow], fields: tuple[str, ...]
                  ) -> tuple[list[str | None], list[str]]:
    """Each row's id (None: not indexed) and the text of its meaning ("" without an id)."""
    ids: list[str | None] = []
    texts: list[str] = []
    for source in rows:
        row = source.row
        try:
            ids.append(None if row is None else document_id(row, config.id_field))
        except UnusableRow:
            ids.append(None)
        texts.append("" if row is None or ids[-1] is None else record_text(row, fields))
    return ids, texts


def _digests(model: str, texts: list[str]) -> Any:
    """What each text is embedded as, by ``model``: 16 bytes a row."""
    import numpy as np

    digests = np.zeros((len(texts), 16), dtype=np.uint8)
    for i, text in enumerate(texts):
        digest = hashlib.blake2b(f"{model}\0{text}".encode(), digest_size=16).digest()
        digests[i] = np.frombuffer(digest, dtype=np.uint8)
    return digests


def _reused(reuse: Reusable, ids: list[str | None], digests: Any) -> Any:
    """The vectors of the rows whose text the build before embedded (zeros elsewhere);
    None when there is nothing to reuse."""
    import numpy as np

    if reuse.vectors is None:
        return None
    vectors = np.zeros((len(ids), reuse.vectors.shape[1]), dtype=np.float32)
    for i in range(len(ids)):
        found = reuse.rows.get(bytes(digests[i])) if ids[i] is not None else None
        if found is not None:
            vectors[i] = reuse.vectors[found]
    return vectors


def _write(path: Path, write: Callable[[Any], object]) -> None:
    """Written whole or not at all: a reader never sees half a file."""
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as file:
        write(file)
    os.replace(partial, path)


class RecordVectors:
    """One generation's vectors, opened for search."""

    def __init__(self, generation: Path) -> None:
        import numpy as np

        meta = read_meta(generation)
        if meta is None:
            raise FileNotFoundError(f"no vectors in {generation}")
        self.meta = meta
        self._np = np
        self.matrix = np.load(generation / VECTORS, mmap_mode="r")
        # a later row with the same id replaced an earlier one (as the index did)
        self.seq_of: dict[str, int] = {doc: seq for seq, doc in enumerate(meta.ids)
                                       if doc is not None}
        self.live = np.zeros(len(meta.ids), dtype=bool)
        self.live[list(self.seq_of.values())] = True

    def similarities(self, vector: Iterable[float]) -> Any:
        """Every row's cosine with ``vector`` (rows not indexed: -inf)."""
        np = self._np
        query = np.asarray(tuple(vector), dtype=np.float32)
        if query.shape[0] != self.matrix.shape[1]:
            raise ValueError(f"a vector of {query.shape[0]} dimensions for vectors of "
                             f"{self.matrix.shape[1]}")
        scores = self.matrix @ query
        scores[~self.live] = -np.inf
        return scores

    def nearest(self, scores: Any, k: int, allowed: Any = None) -> list[tuple[int, float]]:
        """The ``k`` rows of highest ``scores`` (among ``allowed``, a boolean mask), best
        first: ``(seq, score)``; ties by seq."""
        np = self._np
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
        k = min(k, int(np.isfinite(scores).sum()))
        if k <= 0:
            return []
        # every row tied with the k-th best is a candidate, so that ties go by seq
        kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
        candidates = np.flatnonzero(scores >= kth)
        order = sorted(candidates.tolist(), key=lambda seq: (-float(scores[seq]), seq))[:k]
        return [(seq, float(scores[seq])) for seq in order]
