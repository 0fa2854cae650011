"""What the composition root hands every engine adapter's factory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from searchport.adapters.http_clients import HttpClients


@dataclass(frozen=True)
class EngineResources:
    base_dir: Path  # relative paths in the config (index folders, CA bundles) start here
    http: HttpClients  # the process's pooled HTTP clients, shared by the server engines
