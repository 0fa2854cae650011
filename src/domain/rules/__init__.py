"""Query rules in Algolia's rule format, evaluated by searchport on every engine.

- ``format``: the rule objects as Algolia's Search API defines them (msgspec structs).
- ``text``: how query text and patterns are cut into words.
- ``ruleset``: rules checked and indexed at startup; which rules apply to one search.
- ``effects``: the applied rules' consequences merged into one plan.
- ``paging``: promoted hits placed at their positions, page by page.
- ``rule_sets``: every handle's rules read from the config with the filter grammar.
"""
