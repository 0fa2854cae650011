"""The built-in demo: 34,006 world cities (GeoNames, CC BY 4.0) on the embedded engine.

``searchport serve`` with no ``--config``, no ``$SEARCHPORT_CONFIG`` and no ``config.yaml``
in the working folder serves this demo: ``config.yaml`` here is its template, and the
index is built in a per-user cache folder (``searchport.entrypoints.cli.main.demo_home``).
``searchport init`` writes ``config.example.yaml`` here, its demo handle on this data, as a
starting ``config.yaml``.
The data's origin and licence: the repository's ``demo/README.md``.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cities.jsonl.gz"
CONFIG_TEMPLATE = HERE / "config.yaml"
# a link to the repository's config.example.yaml, copied into the wheel for ``searchport init``
EXAMPLE_CONFIG = HERE / "config.example.yaml"
SOURCE_MARKER = "__DEMO_SOURCE__"
