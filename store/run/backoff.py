"""How long to wait before the next session after an abnormal end: exponential, jittered, capped.

The n-th failure in a row waits ``first * 2**(n-1)`` seconds with "equal jitter" (a random point in
the upper half of that span), so waits spread out across many supervisors yet still grow from one
failure to the next. A retry-after that Claude Code reported raises the wait; ``cap`` bounds both.
"""

from __future__ import annotations

import random

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

MAX_DOUBLINGS = 40  # 2**40 seconds is far past any cap; stops the float from overflowing


def wait_seconds(failures: int, first: float, cap: float, retry_after: float = 0.0,
                 draw: Callable[[], float] = random.random) -> float:
    """Seconds to wait after ``failures`` (1 or more) abnormal ends in a row."""
    span = min(first * 2.0 ** min(max(failures, 1) - 1, MAX_DOUBLINGS), cap)
    jittered = span / 2.0 + draw() * span / 2.0
    return min(max(jittered, retry_after), cap)
