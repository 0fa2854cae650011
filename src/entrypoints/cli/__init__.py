"""The ``searchport`` command line: ``main`` (serve, check, index build) and ``keys``."""
