"""``python -m searchport.entrypoints.cli``: the ``searchport`` command."""

from searchport.entrypoints.cli.main import console

console()
