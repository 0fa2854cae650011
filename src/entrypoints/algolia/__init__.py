"""The Algolia search protocol, an inbound adapter: its request bodies and parameters read
into domain queries (``plans.py``), its answers shaped; its filter languages are the
domain's (``domain/filters``)."""
