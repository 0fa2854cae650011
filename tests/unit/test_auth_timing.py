"""Token checks take the same time whatever the token: missing, wrong at its first or last
byte, or matching the first or the last of several keys (rotation).

Measured side by side, interleaved, as the median of many batches, so the machine's noise
hits every case alike. The keys are many and long on purpose: a check that stopped at the
first matching key, skipped the comparison for an empty token, or compared bytes with an
early exit would differ by several times, far past the bound.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from searchport.entrypoints.http.auth import token_matches

KEYS = tuple(bytes([65 + i]) * 4096 for i in range(8))
CASES: dict[str, bytes] = {
    "missing": b"",
    "wrong first byte": b"z" + KEYS[0][1:],
    "wrong last byte": KEYS[0][:-1] + b"z",
    "first key": KEYS[0],
    "last key": KEYS[-1],
}
BATCHES = 60
CALLS = 300


def batch_seconds(check: Callable[[], bool]) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        check()
    return time.perf_counter() - started


def test_the_answers_are_right() -> None:
    assert [token_matches(t, KEYS) for t in CASES.values()] == [False, False, False, True, True]


def test_no_token_takes_measurably_more_or_less_time_than_another() -> None:
    checks = {name: (lambda t=token: token_matches(t, KEYS)) for name, token in CASES.items()}
    timings: dict[str, list[float]] = {name: [] for name in checks}
    for _ in range(BATCHES):  # interleaved: every case in every round
        for name, check in checks.items():
            timings[name].append(batch_seconds(check))
    medians = {name: statistics.median(times) for name, times in timings.items()}
    fastest, slowest = min(medians.values()), max(medians.values())
    assert slowest / fastest < 1.5, medians
