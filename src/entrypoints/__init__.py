"""Entry points: the Litestar app and controllers, the CLI, and the DI container."""
