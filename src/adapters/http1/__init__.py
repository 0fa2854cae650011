"""searchport's own HTTP/1.1 client for the server engines (``Http1Exchange``)."""

from searchport.adapters.http1.exchange import Http1Exchange

__all__ = ["Http1Exchange"]
