"""The built-in demo: 34,006 world cities (GeoNames, CC BY 4.0) on the embedded engine, and
1,035 of them as ``places`` with a short description each, to search by meaning.

``searchport serve`` with no ``--config``, no ``$SEARCHPORT_CONFIG`` and no ``config.yaml``
in the working folder serves this demo: ``config.yaml`` here is its template (see
``config_text``), and the indexes are built in a per-user cache folder
(``searchport.entrypoints.cli.main.demo_home``).
``searchport init`` writes ``config.example.yaml`` here, its demo handle on this data, as a
starting ``config.yaml``.
The data's origin and licence: the repository's ``demo/README.md``.
"""

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cities.jsonl.gz"
# the places of the demo's handle searched by meaning (the repository's demo/build_places.py)
PLACES = HERE / "places.jsonl.gz"
CONFIG_TEMPLATE = HERE / "config.yaml"
# a link to the repository's config.example.yaml, copied into the wheel for ``searchport init``
EXAMPLE_CONFIG = HERE / "config.example.yaml"
SOURCE_MARKER = "__DEMO_SOURCE__"
PLACES_MARKER = "__DEMO_PLACES__"
# the line of a ``semantic:`` section marked __SEMANTIC__, and the lines indented under it
_SEMANTIC_SECTION = re.compile(r"^( *)semantic:[^\n]*__SEMANTIC__[^\n]*\n(?:\1 [^\n]*\n)*",
                               re.MULTILINE)


def config_text(semantic: bool, source: Path = SOURCE) -> str:
    """The demo's config: the template with the paths of its data, and the ``semantic``
    section of ``places`` only when ``semantic`` (the extra is installed): without it,
    ``places`` is searched by words alone."""
    text = CONFIG_TEMPLATE.read_text(encoding="utf-8")
    text = text.replace(SOURCE_MARKER, json.dumps(str(source)))
    text = text.replace(PLACES_MARKER, json.dumps(str(PLACES)))
    if not semantic:
        return _SEMANTIC_SECTION.sub("", text)
    return re.sub(r" *# __SEMANTIC__[^\n]*", "", text)  # the mark, not the section
