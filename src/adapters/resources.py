"""What the composition root hands every engine adapter's factory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from searchport.adapters.network.pools import EnginePools


@dataclass(frozen=True)
class EngineResources:
    base_dir: Path  # relative paths in the config (index folders, CA bundles) start here
    pools: EnginePools  # the process's engine clients, shared by the server engines
