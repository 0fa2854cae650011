"""A token check takes the same time whatever the token: wrong at its first or last byte, or
matching the first or the last of several keys (rotation).

What is timed is what the key guard runs for every request: ``principal_of`` on a fresh
ASGI scope, which reads the token from the headers and resolves it with ``Keyring``. An
empty token is refused before any comparison (it tells nothing about the keys), so every
case carries one. Measured side by side, interleaved, as the median of many batches, so the
machine's noise hits every case alike. The keys are many and long on purpose (longer than a
secured key may be, so the comparisons outweigh the rest of the path): a check that stopped
at the first matching key or compared bytes with an early exit would differ by several
times, far past the bound.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from searchport.domain.config import Config
from searchport.entrypoints.http.auth import principal_of
from searchport.entrypoints.keys.keyring import Keyring, Principal

KEYS = tuple(chr(65 + i) * 16384 for i in range(8))
KEYRING = Keyring(Config(api_key=list(KEYS)))
CASES: dict[str, bytes] = {
    "wrong first byte": b"z" + KEYS[0][1:].encode(),
    "wrong last byte": KEYS[0][:-1].encode() + b"z",
    "first key": KEYS[0].encode(),
    "last key": KEYS[-1].encode(),
}
BATCHES = 60
CALLS = 100


def principal(token: bytes) -> Principal | None:
    scope: Any = {"type": "http", "path": "/books/search", "client": ("127.0.0.1", 5000),
                  "headers": [(b"authorization", b"Bearer " + token)]}
    return principal_of(scope, KEYRING, trust_forwarded_for=False)


def batch_seconds(check: Callable[[], object]) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        check()
    return time.perf_counter() - started


def test_the_answers_are_right() -> None:
    assert [principal(t) is not None for t in CASES.values()] == [False, False, True, True]


def test_no_token_takes_measurably_more_or_less_time_than_another() -> None:
    checks = {name: (lambda t=token: principal(t)) for name, token in CASES.items()}
    timings: dict[str, list[float]] = {name: [] for name in checks}
    for _ in range(BATCHES):  # interleaved: every case in every round
        for name, check in checks.items():
            timings[name].append(batch_seconds(check))
    medians = {name: statistics.median(times) for name, times in timings.items()}
    fastest, slowest = min(medians.values()), max(medians.values())
    assert slowest / fastest < 1.5, medians
