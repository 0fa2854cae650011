"""Query Suggestions: an index of the popular queries of a handle, built from the query log
as Algolia's Query Suggestions builds its own (``engine: querySuggestions``)."""
