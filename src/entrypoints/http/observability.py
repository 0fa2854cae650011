"""The access log and the Prometheus metrics, fed once per request by ``RequestContext``.

- ``AccessLog``: one line per request on stdout, JSON (``{"ts", "requestId", "method",
  "route", "handle", "status", "ms", "engineMs", "cache"}``) or, in ``--reload`` mode, a
  short human-readable line. No query string, header or body is logged: a URL may carry
  filters with personal data and a header may carry a token.
- ``Metrics``: a registry of this process's own (tests build as many apps as they like),
  rendered in the Prometheus text format by ``GET /metrics``. Labels are bounded: the route
  template (not the path), the handles of the config (any other is ``-``), statuses.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any, Literal

import msgspec
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

LogFormat = Literal["json", "text"]
UNMATCHED = "unmatched"
NO_HANDLE = "-"

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class RequestRecord(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One finished request, as logged."""

    ts: float
    request_id: str
    method: str
    route: str
    handle: str | None
    status: int
    ms: float
    engine_ms: float
    cache: str | None


_encoder = msgspec.json.Encoder()


class AccessLog:
    """Writes one line per request to its own logger (``searchport.access``, stdout)."""

    def __init__(self, fmt: LogFormat = "json", stream: object = None) -> None:
        self.fmt = fmt
        self.logger = logging.getLogger("searchport.access")
        self.logger.propagate = False
        self.logger.setLevel(logging.INFO)
        if not self.logger.handlers:
            handler = logging.StreamHandler(stream or sys.stdout)  # type: ignore[arg-type]
            handler.setFormatter(logging.Formatter("%(message)s"))
            self.logger.addHandler(handler)

    def __call__(self, record: RequestRecord) -> None:
        if self.fmt == "json":
            line = _encoder.encode(record).decode("utf-8")
        else:
            stamp = time.strftime("%H:%M:%S", time.localtime(record.ts))
            cache = f" cache={record.cache}" if record.cache else ""
            line = (
                f"{stamp} {record.status} {record.method} {record.route} "
                f"{record.ms:.1f} ms (engine {record.engine_ms:.1f} ms){cache} "
                f"[{record.request_id}]"
            )
        logger = self.logger
        if logger.isEnabledFor(logging.INFO):
            # handed to the handlers as made: the line says where it comes from, so the
            # caller's file and line (a walk of the stack per request) are not looked up
            logger.handle(logger.makeRecord(logger.name, logging.INFO, "", 0, line, (), None))


class Metrics:
    """This process's counters and histograms."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self, handles: frozenset[str] = frozenset()) -> None:
        self.handles = handles
        self.registry = CollectorRegistry(auto_describe=True)
        registry = self.registry
        self.requests = Counter(
            "searchport_requests", "HTTP requests answered, by route template and status.",
            ["route", "method", "status"], registry=registry,
        )
        self.latency = Histogram(
            "searchport_request_duration_seconds", "Time to answer a request, by route.",
            ["route"], buckets=LATENCY_BUCKETS, registry=registry,
        )
        self.engine_latency = Histogram(
            "searchport_engine_duration_seconds", "Time of engine calls, by handle and call.",
            ["handle", "operation"], buckets=LATENCY_BUCKETS, registry=registry,
        )
        self.engine_errors = Counter(
            "searchport_engine_errors", "Engine calls that failed, by handle and error.",
            ["handle", "error"], registry=registry,
        )
        self.cache_lookups = Counter(
            "searchport_cache_lookups", "Response cache lookups, by result (hit or miss).",
            ["result"], registry=registry,
        )
        self.circuit_open = Gauge(
            "searchport_circuit_open", "1 while calls to an engine host are refused after "
            "repeated failures (circuit open or half-open), else 0.",
            ["host"], registry=registry,
        )
        self.analytics_drops = Counter(
            "searchport_analytics_dropped", "Searches and events the analytics store did "
            "not get (the buffer full, the store slow or down).", registry=registry,
        )
        # labelled children by label values: ``labels()`` costs microseconds on every call
        self._per_request: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        self._per_call: dict[tuple[str, str], Any] = {}
        self._per_lookup: dict[bool, Any] = {}

    def handle_label(self, handle: str | None) -> str:
        return handle if handle in self.handles else NO_HANDLE

    def answered(self, route: str, method: str, status: int, seconds: float) -> None:
        """One request answered; ``route``: its template (``UNMATCHED`` when none)."""
        key = (route, method, status)
        children = self._per_request.get(key)
        if children is None:
            children = (self.requests.labels(route, method, str(status)),
                        self.latency.labels(route))
            self._per_request[key] = children
        children[0].inc()
        children[1].observe(seconds)

    def engine_call(self, handle: str, operation: str, seconds: float, error: str | None) -> None:
        label = self.handle_label(handle)
        child = self._per_call.get((label, operation))
        if child is None:
            child = self._per_call[(label, operation)] = self.engine_latency.labels(label,
                                                                                   operation)
        child.observe(seconds)
        if error is not None:
            self.engine_errors.labels(label, error).inc()

    def cache_lookup(self, hit: bool) -> None:
        child = self._per_lookup.get(hit)
        if child is None:
            child = self._per_lookup[hit] = self.cache_lookups.labels("hit" if hit else "miss")
        child.inc()

    def analytics_dropped(self, count: int) -> None:
        self.analytics_drops.inc(count)

    def circuit(self, host: str, is_open: bool) -> None:
        """``host``: scheme://host:port of an engine, never with credentials."""
        self.circuit_open.labels(host).set(1 if is_open else 0)

    def render(self) -> bytes:
        return generate_latest(self.registry)
