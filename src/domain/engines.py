"""The engines searchport speaks to, and what the rest of it needs to know about each.

One table: the config's ``engine`` key accepts exactly these names (``EngineName``), its
loader reads which need a server and which nest. Which adapter serves each name is the
adapters' table (``adapters/engines.py``), read by the composition root.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import msgspec


class Engine(msgspec.Struct, frozen=True, kw_only=True):
    """What searchport knows of one engine before any adapter is loaded."""

    name: str
    server: bool  # over the network: ``host`` and ``indexName``; else embedded: ``path``
    nested: bool  # reads nested documents: ``fields.<name>.nestedPath`` is allowed
    index_lists: bool  # one handle may search several indices (``indexName: [a, b]``)
    # built by searchport from the query log of the handle named by ``source``
    from_log: bool = False
    # a geo point stored as two numbers: GeoJSON order (longitude first) or latitude first
    point_order: Literal["lat_lon", "lon_lat"] = "lat_lon"
    # the ``semantic.embedder`` values its adapter searches by meaning with (none: a
    # ``semantic`` section is a config error)
    embedders: tuple[str, ...] = ()
    # with ``embedder: engine``, ``semantic.model`` names the engine's own model that embeds
    # the query (required); elsewhere the engine knows its model from the index
    engine_model: bool = False


ENGINES: tuple[Engine, ...] = (
    Engine(name="elasticsearch", server=True, nested=True, index_lists=True, point_order="lon_lat",
           embedders=("builtin", "openai", "engine"), engine_model=True),
    Engine(name="opensearch", server=True, nested=True, index_lists=True, point_order="lon_lat",
           embedders=("builtin", "openai", "engine"), engine_model=True),
    Engine(name="meilisearch", server=True, nested=False, index_lists=False,
           embedders=("builtin", "openai", "engine")),
    Engine(name="typesense", server=True, nested=False, index_lists=False,
           embedders=("builtin", "openai", "engine")),
    Engine(name="tantivy", server=False, nested=False, index_lists=False,
           embedders=("builtin", "openai")),
    Engine(name="querySuggestions", server=False, nested=False, index_lists=False, from_log=True),
)
ENGINE_NAMES: tuple[str, ...] = tuple(engine.name for engine in ENGINES)
BY_NAME: dict[str, Engine] = {engine.name: engine for engine in ENGINES}

if TYPE_CHECKING:
    EngineName = str
else:
    # the names as a Literal, so that msgspec refuses any other name and the JSON schema
    # lists them; built from the table at run time, which type checkers cannot follow
    EngineName = Literal[ENGINE_NAMES]
