"""Timing code as people run it: without the coverage tracer that dev/test runs pytest under.

The tracer slows what it measures four to six times (a deep shell scan: 0.6 s untraced, 2.3 s
traced, on a quiet machine), so a bound meant for people's machines is checked on an untraced run.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def untraced() -> Iterator[None]:
    """This thread's trace function (coverage's, when it measures) off for the block, then back."""
    tracer = sys.gettrace()
    sys.settrace(None)
    try:
        yield
    finally:
        sys.settrace(tracer)
