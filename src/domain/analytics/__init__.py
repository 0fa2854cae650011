"""Search analytics: the query log, Insights events and what the recorder does with them.

``records``: what one search leaves in the log (``SearchRecord``), built in the background
from what the request saw (``ObservedSearch``): the query normalised, the user token or a
per-day pseudonym of the client address. ``insights``: the events of Algolia's Insights API
(``POST /1/events``), checked as its specification says. ``recorder``: what the requests
hand to an ``AnalyticsStore``.
"""
