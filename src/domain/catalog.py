"""The configured handles, each with its settings, field map and engine."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from searchport.domain.config import IndexConfig
from searchport.domain.errors import IndexNotFound
from searchport.domain.fields import FieldMap
from searchport.domain.replicas import Searcher, replica_of, replica_searcher

if TYPE_CHECKING:  # a type-only dependency: the domain never imports ports at run time
    from searchport.domain.rules.ruleset import RuleSet
    from searchport.domain.rules.search import FacetValueCache
    from searchport.domain.semantic import QueryMeanings
    from searchport.ports.embedder import EmbedderPort
    from searchport.ports.engine import SearchEnginePort


class IndexEntry:
    """One handle: its config, its field map, the engine adapter serving it, its query
    rules (``None`` without), with the facet values their placeholders may take, and what
    it is a replica of (``None``: a primary; a replica shares its primary's engine and
    rules); ``meanings``: its query vectors, when it searches by meaning with an embedder
    of searchport's (docs/semantic.md)."""

    __slots__ = ("config", "engine", "facet_values", "fields", "handle", "meanings", "replica",
                 "rules")

    def __init__(self, handle: str, config: IndexConfig, engine: SearchEnginePort,
                 rules: RuleSet | None = None,
                 facet_values: FacetValueCache | None = None,
                 meanings: QueryMeanings | None = None) -> None:
        self.handle = handle
        self.config = config
        self.engine = engine
        self.fields = FieldMap(config.fields)
        self.rules = rules
        self.facet_values = facet_values
        self.meanings = meanings
        self.replica = replica_of(config)

    def search(self, strictness: int | None = None) -> Searcher:
        """The engine's search, as this handle orders hits (``replicas``);
        ``strictness``: a search's ``relevancyStrictness`` (virtual replicas)."""
        return replica_searcher(self.engine.search, self.replica, strictness,
                                self.engine.capabilities.max_page)


class Catalog(Mapping[str, IndexEntry]):
    """Handles in config order; ``get_entry`` raises ``IndexNotFound`` for unknown ones."""

    def __init__(self, entries: Mapping[str, IndexEntry]) -> None:
        self._entries = dict(entries)

    def get_entry(self, handle: str) -> IndexEntry:
        entry = self._entries.get(handle)
        if entry is None:
            raise IndexNotFound(handle)
        return entry

    def __getitem__(self, handle: str) -> IndexEntry:
        return self._entries[handle]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def replicas_of(self, handle: str) -> list[IndexEntry]:
        """The replicas of ``handle``, in config order."""
        return [e for e in self._entries.values()
                if e.replica is not None and e.replica.primary == handle]

    def embedders(self) -> list[EmbedderPort]:
        """Each embedder once (a replica shares its primary's)."""
        found = {id(e.meanings.embedder): e.meanings.embedder for e in self._entries.values()
                 if e.meanings is not None}
        return list(found.values())

    def engines(self) -> list[SearchEnginePort]:
        """Each engine adapter once (a replica shares its primary's)."""
        return list({id(e.engine): e.engine for e in self._entries.values()}.values())
