"""``BuiltinEmbedder``: the builtin model (``minilm.py``) behind the embedder port.

The model is loaded when the handle's engine starts (``start``), once per process for
every handle that uses it, and each call runs in a thread of its own, one at a time, so
that the event loop never waits on the model and a burst of new queries does not take the
search threads' cores.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from searchport.adapters.semantic.minilm import MODEL, MiniLM
from searchport.domain.errors import EngineUnavailable
from searchport.domain.semantic import Vector

_LOADED: dict[int, MiniLM] = {}  # process id -> the model (a forked worker loads its own)


def _shared_model() -> MiniLM:
    model = _LOADED.get(os.getpid())
    if model is None:
        model = _LOADED[os.getpid()] = MiniLM()
    return model


class BuiltinEmbedder:
    def __init__(self, handle: str) -> None:
        self._handle = handle
        self._model: MiniLM | None = None
        self._thread: ThreadPoolExecutor | None = None

    @property
    def model(self) -> str:
        return MODEL

    async def start(self) -> None:
        if self._model is None:
            self._model = await asyncio.to_thread(_shared_model)

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        model = self._model
        if model is None:
            raise EngineUnavailable(f"the builtin embedder of {self._handle} is not loaded")
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="searchport-embed")
        vectors = await asyncio.get_running_loop().run_in_executor(
            self._thread, model.embed, list(texts))
        return [tuple(row) for row in vectors.tolist()]

    async def close(self) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=False, cancel_futures=True)
            self._thread = None
