"""The Algolia search protocol, an inbound adapter: its request bodies and parameters read
into domain queries (``plans.py``), its filter languages, its answers shaped."""
