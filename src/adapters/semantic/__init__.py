"""Embedders: what turns text into vectors of meaning for a handle's ``semantic`` section
(docs/semantic.md). ``builtin``: a small model from the ``semantic`` extra, in process;
``openai``: an OpenAI-compatible embeddings API over the engine network.

Importing this package loads no model and no numerical library: ``create`` does, for the
handles that ask for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchport.domain.config import IndexConfig

if TYPE_CHECKING:
    from searchport.adapters.resources import EngineResources
    from searchport.adapters.semantic.builtin import BuiltinEmbedder
    from searchport.adapters.semantic.openai import OpenAIEmbedder


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
