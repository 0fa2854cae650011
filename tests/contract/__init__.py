"""Contract tests of the server engine adapters."""
