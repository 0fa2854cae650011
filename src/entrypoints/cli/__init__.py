"""The ``searchport`` command line: ``main`` (serve, check, index build), ``init_config``
(init) and ``keys``."""
