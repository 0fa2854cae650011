"""Embedders: what turns text into vectors of meaning for a handle's ``semantic`` section
(docs/semantic.md). ``builtin``: a small model from the ``semantic`` extra, in process;
``openai``: an OpenAI-compatible embeddings API over the engine network.

Importing this package loads no model and no numerical library: ``create`` does, for the
handles that ask for it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchport.domain.config import IndexConfig

if TYPE_CHECKING:
    from searchport.adapters.resources import EngineResources
    from searchport.adapters.semantic.builtin import BuiltinEmbedder
    from searchport.adapters.semantic.openai import OpenAIEmbedder


Embed = Callable[[list[str]], Any]  # texts -> an (n, dimensions) float32 array


def document_model(handle: str, index: IndexConfig, base_dir: Path
                   ) -> tuple[str, Callable[[], AbstractContextManager[Embed]]]:
    """What an index build embeds its records with: the name of the vectors' space, and
    the embedder, opened only when some record needs it (the builtin model on every core;
    an OpenAI-compatible API through an engine client of the build's own)."""
    semantic = index.semantic
    assert semantic is not None
    if semantic.embedder == "openai":
        from searchport.adapters.semantic.openai import batch_embedder, model_name

        assert semantic.model
        return model_name(semantic.model), lambda: batch_embedder(handle, index, base_dir)
    from searchport.adapters.semantic.minilm import MODEL, MiniLM

    return MODEL, lambda: contextlib.nullcontext(MiniLM(threads=os.cpu_count() or 1).embed)


def create(handle: str, index: IndexConfig, resources: EngineResources
           ) -> BuiltinEmbedder | OpenAIEmbedder | None:
    """The handle's embedder (None: it does not search by meaning, or its engine embeds
    the query itself)."""
    semantic = index.semantic
    if semantic is None or semantic.embedder == "engine":
        return None
    if semantic.embedder == "openai":
        from searchport.adapters.semantic.openai import OpenAIEmbedder

        return OpenAIEmbedder(handle, index, resources)
    from searchport.adapters.semantic.builtin import BuiltinEmbedder

    return BuiltinEmbedder(handle)
