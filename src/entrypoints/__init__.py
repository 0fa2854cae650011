"""Entry points, the hexagon's driving side.

- ``container``: the composition root, the one place adapters and use cases are assembled.
- ``http``: the Litestar application and the ASGI layers around it.
- ``controllers``: the route handlers, thin: parse, call a use case, return its struct.
- ``algolia``: Algolia's search protocol translated to and from the domain (no framework).
- ``keys``: API keys, named and secured.
- ``cli``: the ``searchport`` command.
- ``ui``: the search page's static files.
"""
