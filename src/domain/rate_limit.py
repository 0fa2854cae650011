"""The rate-limit rule, as pure arithmetic (GCRA, the generic cell rate algorithm).

A limit of ``limit`` requests per ``window`` seconds is a token bucket: a client may send up
to ``limit`` requests at once, and its allowance refills evenly, one request every
``window / limit`` seconds (so over any span of ``d`` seconds at most
``limit + d * limit / window`` requests get through, and a steady ``limit / window`` per
second never gets a 429). Per key the only state is one instant, the theoretical
arrival time (TAT) of the next request, so a store (memory or Redis) holds one number a key.
"""

from __future__ import annotations

TOLERANCE = 1e-9  # seconds: rounding in ``start + interval`` never refuses a steady client


class Verdict:
    """Allowed (``retry_after`` 0, ``tat`` the state to store) or refused (``retry_after`` > 0,
    the seconds until a request would be allowed; the state stays as it was)."""

    __slots__ = ("retry_after", "tat")

    def __init__(self, tat: float, retry_after: float) -> None:
        self.tat = tat
        self.retry_after = retry_after

    @property
    def allowed(self) -> bool:
        return self.retry_after <= 0


def gcra(tat: float | None, now: float, limit: int, window: float) -> Verdict:
    """The verdict on one request at ``now`` given the key's stored ``tat`` (None: unseen)."""
    interval = window / limit
    start = now if tat is None or tat < now else tat
    new_tat = start + interval
    excess = new_tat - now - window
    if excess > TOLERANCE:
        return Verdict(start, excess)
    return Verdict(new_tat, 0.0)
