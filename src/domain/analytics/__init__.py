"""Search analytics: the query log, Insights events and what the recorder does with them."""
