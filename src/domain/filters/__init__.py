"""The product's filter grammar, read wherever filters are written in Algolia's languages
(the Algolia routes, secured and named keys, query rules, the command line).

- ``grammar``: ``filters``, ``facetFilters`` and ``numericFilters`` parsed to one
  conjunctive normal form (``Cnf``).
- ``translate``: a ``Cnf`` as domain filters (``domain/query.py``), Algolia's meaning kept.
"""
