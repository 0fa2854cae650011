"""``OpenAIEmbedder``: an OpenAI-compatible embeddings API (``POST {url}/embeddings``, as
OpenAI publishes it; most embedding servers and gateways answer the same shape) behind the
embedder port, through the engine network every server engine uses (``EngineApi``: the
pooled libcurl client, retries, the circuit breaker, one deadline).

The endpoint is reached with the handle's TLS and proxy settings (``verifyTls``,
``caBundle``, ``proxy``), ``semantic.url`` as its address and ``semantic.timeout`` as
its deadline; ``semantic.apiKey`` goes in ``Authorization: Bearer``.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from searchport.adapters.network.api import EngineApi, EngineError, folded
from searchport.adapters.network.pools import EnginePools
from searchport.adapters.resources import EngineResources
from searchport.domain.config import IndexConfig
from searchport.domain.errors import EngineUnavailable
from searchport.domain.semantic import Vector

logger = logging.getLogger("searchport.semantic")
ENGINE = "embeddings"  # how the network's messages name the endpoint
BUILD_TIMEOUT = 120.0  # seconds for one batch of an index build's records


class _Embedding(msgspec.Struct):
    index: int
    embedding: list[float]


class _Answer(msgspec.Struct):
    data: list[_Embedding]


_decode_answer = msgspec.json.Decoder(_Answer).decode


def read_error(status: int, answer: Any) -> EngineError:
    """OpenAI's error body: ``{"error": {"message", "type", "param", "code"}}``."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict):
        return EngineError()
    code = error.get("code") or error.get("type")
    return EngineError(reason=folded(str(error.get("message") or "")),
                       code=str(code) if code else None)


def endpoint_config(index: IndexConfig, timeout: float | None = None) -> IndexConfig:
    """The settings the network reaches the embeddings API with: the handle's TLS and proxy,
    the embedder's address and deadline (``timeout``, else ``semantic.timeout``)."""
    assert index.semantic is not None and index.semantic.url  # checked by the config loader
    return msgspec.structs.replace(index, host=index.semantic.url,
                                   timeout=timeout or index.semantic.timeout)


@contextmanager
def batch_embedder(handle: str, index: IndexConfig, base_dir: Path) -> Iterator[
        Callable[[list[str]], Any]]:
    """The embedder for an index build, called batch after batch from one thread (the
    build's, where no event loop runs): an event loop and engine clients of its own, closed
    when the build is done; each batch may take ``BUILD_TIMEOUT`` seconds."""
    import numpy as np

    loop = asyncio.new_event_loop()
    pools = EnginePools()
    resources = EngineResources(base_dir, pools)
    config = msgspec.structs.replace(index, timeout=BUILD_TIMEOUT)
    embedder = OpenAIEmbedder(handle, config, resources, timeout=BUILD_TIMEOUT)

    def embed(texts: list[str]) -> Any:
        return np.asarray(loop.run_until_complete(embedder.embed(texts)), dtype=np.float32)

    try:
        yield embed
    finally:
        loop.run_until_complete(pools.aclose())
        loop.close()


class OpenAIEmbedder:
    def __init__(self, handle: str, index: IndexConfig, resources: EngineResources, *,
                 timeout: float | None = None) -> None:
        assert index.semantic is not None and index.semantic.model
        self._model = index.semantic.model
        key = index.semantic.api_key
        self._api = EngineApi(handle=handle, engine=ENGINE, missing="model",
                              config=endpoint_config(index, timeout), resources=resources,
                              headers={"Authorization": f"Bearer {key}"} if key else {},
                              read_error=read_error, logger=logger)

    @property
    def model(self) -> str:
        return model_name(self._model)

    async def start(self) -> None:
        return None

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        body = {"model": self._model, "input": list(texts), "encoding_format": "float"}
        with self._api.deadline():
            answer = await self._api.success("POST", "/embeddings", body)
        try:
            data = _decode_answer(answer.content).data
        except msgspec.DecodeError:
            logger.warning("%s: the embeddings API answered a body that is not an embeddings "
                           "list", self._api.handle)
            raise self._api.unreadable() from None
        vectors: list[Vector | None] = [None] * len(texts)
        for item in data:
            if 0 <= item.index < len(texts):
                vectors[item.index] = _unit(item.embedding)
        if any(vector is None for vector in vectors) or len(data) != len(texts):
            raise EngineUnavailable(f"The embeddings API answered {len(data)} vectors for "
                                    f"{len(texts)} texts")
        return [vector for vector in vectors if vector is not None]

    async def close(self) -> None:
        return None  # the network's clients are closed with the process's pools


def model_name(model: str) -> str:
    """The name of the vectors' space of an API's model (stored with the vectors)."""
    return f"openai:{model}"


def _unit(values: list[float]) -> Vector:
    """Unit length, so that a dot product is the cosine (OpenAI's are already; not every
    compatible server's)."""
    norm = math.sqrt(math.fsum(v * v for v in values))
    if not norm:
        return tuple(values)
    return tuple(v / norm for v in values)
