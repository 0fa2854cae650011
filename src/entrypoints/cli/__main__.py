"""``python -m searchport.entrypoints.cli``: the ``searchport`` command."""

import sys

from searchport.entrypoints.cli.main import main

sys.exit(main())
