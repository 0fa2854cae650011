"""The engine network: one HTTP exchange with a server engine, from the adapters' calls
(``api``) down to the HTTP client (``client``)."""
