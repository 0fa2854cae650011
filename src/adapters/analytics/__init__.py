"""The ``AnalyticsStore`` adapters: ``sqlite`` (embedded, the default), ``postgres`` (one
database shared by several instances) and ``none``. Both databases hold the same tables
(``schema.py``), created by searchport."""
