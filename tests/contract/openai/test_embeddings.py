"""The ``openai`` embedder over the production engine network against a scripted server
on loopback that answers as OpenAI's embeddings API is published (``tests/specs/
openai.json``): every request and every scripted answer is held against it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from searchport.adapters.network.pools import EnginePools
from searchport.adapters.resources import EngineResources
from searchport.adapters.semantic.openai import OpenAIEmbedder
from searchport.domain.config import IndexConfig, SemanticConfig
from searchport.domain.errors import EngineTimeout, EngineUnavailable
from searchport.domain.semantic import MeaningUnavailable, QueryMeanings
from searchport.ports.embedder import EmbedderPort
from tests.contract.scripted import LoopbackEngine, OffSpec, Recorder, ScriptedEngine

URL = "https://embeddings.test/v1"


class OpenAIServer(ScriptedEngine):
    engine = "openai"


def answer(vectors: list[list[float]], model: str = "text-embedding-3-small") -> dict[str, object]:
    return {"object": "list", "model": model,
            "data": [{"object": "embedding", "index": i, "embedding": v}
                     for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": 3, "total_tokens": 3}}


def error(message: str, kind: str, code: str | None) -> dict[str, object]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@pytest.fixture
def server() -> Iterator[tuple[OpenAIServer, Recorder, LoopbackEngine]]:
    scripted = OpenAIServer()
    recorder = Recorder(scripted)
    loopback = LoopbackEngine(recorder).start()
    try:
        yield scripted, recorder, loopback
    finally:
        loopback.stop()
    assert not scripted.unexpected


def embed(loopback: LoopbackEngine, texts: list[str], *, timeout: float = 1.0,
          key: str | None = "sk-test") -> list[tuple[float, ...]]:
    async def run() -> list[tuple[float, ...]]:
        pools = EnginePools(network=loopback.network)
        config = IndexConfig(engine="tantivy", path="x", semantic=SemanticConfig(
            embedder="openai", url=URL, model="text-embedding-3-small", api_key=key,
            timeout=timeout))
        embedder: EmbedderPort = OpenAIEmbedder("docs", config,
                                                EngineResources(Path("."), pools))
        try:
            await embedder.start()
            return await embedder.embed(texts)
        finally:
            await embedder.close()
            await pools.aclose()

    return asyncio.run(run())


def test_texts_become_unit_vectors_in_order(server: tuple[OpenAIServer, Recorder,
                                                          LoopbackEngine]) -> None:
    scripted, recorder, loopback = server
    body = answer([[3.0, 4.0], [0.0, 2.0]])
    body["data"].reverse()  # type: ignore[attr-defined]  # each says its index
    scripted.on("POST", "/v1/embeddings", (200, body))
    vectors = embed(loopback, ["first text", "second"])
    loopback.settle()
    assert vectors == [(0.6, 0.8), (0.0, 1.0)]
    (sent,) = recorder.sent
    assert sent.body == {"model": "text-embedding-3-small", "input": ["first text", "second"],
                         "encoding_format": "float"}
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.headers["content-type"] == "application/json"


def test_without_a_key_no_authorization_is_sent(server: tuple[OpenAIServer, Recorder,
                                                              LoopbackEngine]) -> None:
    scripted, recorder, loopback = server
    scripted.on("POST", "/v1/embeddings", (200, answer([[1.0, 0.0]])))
    embed(loopback, ["x"], key=None)
    loopback.settle()
    assert "authorization" not in recorder.sent[0].headers


@pytest.mark.parametrize(("status", "body", "error_type", "words"), [
    (401, error("Incorrect API key provided", "invalid_request_error", "invalid_api_key"),
     EngineUnavailable, "credentials"),
    (429, error("Rate limit reached", "requests", "rate_limit_exceeded"),
     EngineUnavailable, "overloaded"),
    (500, error("The server had an error", "server_error", None), EngineUnavailable,
     "failed"),
])
def test_a_failure_status_is_a_domain_error(
        server: tuple[OpenAIServer, Recorder, LoopbackEngine], status: int,
        body: dict[str, object], error_type: type[Exception], words: str) -> None:
    scripted, _, loopback = server
    scripted.on("POST", "/v1/embeddings", (status, body))
    with pytest.raises(error_type, match=words) as raised:
        embed(loopback, ["x"])
    assert URL not in str(raised.value) and "sk-test" not in str(raised.value)


def test_an_answer_of_another_shape_is_unreadable(
        server: tuple[OpenAIServer, Recorder, LoopbackEngine]) -> None:
    scripted, _, loopback = server
    scripted.on("POST", "/v1/embeddings", OffSpec((200, {"vectors": [[1, 2]]})))
    with pytest.raises(EngineUnavailable, match="cannot read"):
        embed(loopback, ["x"])


def test_missing_vectors_are_refused(server: tuple[OpenAIServer, Recorder,
                                                   LoopbackEngine]) -> None:
    scripted, _, loopback = server
    scripted.on("POST", "/v1/embeddings", (200, answer([[1.0, 0.0]])))
    with pytest.raises(EngineUnavailable, match="1 vectors for 2 texts"):
        embed(loopback, ["x", "y"])


def test_a_server_that_never_answers_times_out(server: tuple[OpenAIServer, Recorder,
                                                             LoopbackEngine]) -> None:
    scripted, _, loopback = server
    scripted.on("POST", "/v1/embeddings", httpx.ReadTimeout("never"))
    with pytest.raises(EngineTimeout):
        embed(loopback, ["x"], timeout=0.2)


def test_a_failing_endpoint_degrades_the_query_not_the_search(
        server: tuple[OpenAIServer, Recorder, LoopbackEngine]) -> None:
    scripted, _, loopback = server
    scripted.on("POST", "/v1/embeddings", (503, error("overloaded", "server_error", None)))

    async def run() -> None:
        pools = EnginePools(network=loopback.network)
        config = IndexConfig(engine="tantivy", path="x", semantic=SemanticConfig(
            embedder="openai", url=URL, model="m", timeout=1.0))
        meanings = QueryMeanings(OpenAIEmbedder("docs", config, EngineResources(Path("."), pools)),
                                 timeout=1.0)
        try:
            with pytest.raises(MeaningUnavailable):
                await meanings.vector("x")
        finally:
            await pools.aclose()

    asyncio.run(run())


def test_the_vendored_specification_is_openais() -> None:
    spec = json.loads((Path(__file__).parents[2] / "specs" / "openai.json").read_text("utf-8"))
    assert spec["source"]["repository"] == "https://github.com/openai/openai-openapi"
    assert set(spec["endpoints"]) == {"embeddings.request", "embeddings.response",
                                      "error.response"}


def letters(text: str) -> list[float]:
    """A scripted model: a text's counts of the letters a to e (plus one, never zero)."""
    return [float(text.lower().count(letter)) + 0.5 for letter in "abcde"]


def embeddings_of(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    return OpenAIServer().response(200, answer([letters(t) for t in body["input"]],
                                               body["model"]))


def test_an_embedded_index_builds_its_vectors_through_the_api(
        tmp_path: Path, server: tuple[OpenAIServer, Recorder, LoopbackEngine]) -> None:
    """The embedded engine with ``embedder: openai``: the records' vectors from the API at
    build time (in batches, through an engine client of the build's own), the query's from
    the same API, a hybrid search over both."""
    from searchport.adapters.config_loader import parse_config
    from searchport.adapters.tantivy import TantivyEngine, build_index
    from searchport.adapters.tantivy import vectors as stored
    from searchport.domain.query import SearchQuery
    from tests.semantic_model import require_model

    require_model()  # numpy keeps the vectors
    scripted, recorder, loopback = server
    scripted.on("POST", "/v1/embeddings", embeddings_of)
    rows = [{"id": str(i), "title": f"{title} {i}"} for i, title in enumerate(
        ["abba", "cede", "dead bee", "eddie", "a cab"] * 60)]
    rows.append({"id": "again", "title": "dead bee 2"})  # the text of row 2: embedded once
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    config = parse_config(json.dumps({"analytics": {"backend": "none"}, "indexes": {"docs": {
        "engine": "tantivy", "path": "idx", "source": "rows.jsonl",
        "fields": {"title": {"type": "text", "weight": 1}},
        "semantic": {"embedder": "openai", "url": f"{loopback.http_origin}/v1",
                     "model": "text-embedding-3-small", "apiKey": "${KEY}",
                     "fields": ["title"]}}}}), {"KEY": "sk-build"}).indexes["docs"]
    report = build_index("docs", config, tmp_path)
    loopback.settle()
    assert report.embedded == len(rows) - 1
    batches = [len(sent.body["input"]) for sent in recorder.sent]
    assert batches == [256, len(rows) - 1 - 256]
    assert all(s.headers["authorization"] == "Bearer sk-build" for s in recorder.sent)
    generation = next((tmp_path / "idx").glob("gen-*"))
    meta = stored.read_meta(generation)
    assert meta is not None and meta.model == "openai:text-embedding-3-small"

    async def search() -> list[str]:
        pools = EnginePools(network=loopback.network)
        engine = TantivyEngine("docs", config, tmp_path)
        embedder = OpenAIEmbedder("docs", config, EngineResources(tmp_path, pools))
        await engine.start()
        try:
            (vector,) = await embedder.embed(["dead bee 2"])
            found = await engine.search(SearchQuery(text="dead bee 2", limit=5, semantic=1.0,
                                                    vector=vector))
        finally:
            await pools.aclose()
        return [hit.id for hit in found.hits]

    assert asyncio.run(search())[0] == "2"  # first of the rows nearest "dead bee 2"
    kept = stored.RecordVectors(generation)
    again = kept.seq_of["again"]
    assert kept.matrix[again].tolist() == kept.matrix[2].tolist()  # the same text's vector
    assert build_index("docs", config, tmp_path).embedded == 0  # up to date: no request
    loopback.settle()
    assert len(recorder.sent) == 3
