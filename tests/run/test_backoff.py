"""The wait between sessions after failures: doubling, jittered in the upper half, capped, and never
shorter than a retry-after Claude Code reported (unless the cap says so)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from store.run.backoff import wait_seconds


def test_the_span_doubles_and_the_draw_picks_a_point_in_its_upper_half() -> None:
    assert [wait_seconds(n, 10, 1000, draw=lambda: 0.0) for n in (1, 2, 3, 4)] == [5, 10, 20, 40]
    assert [wait_seconds(n, 10, 1000, draw=lambda: 1.0) for n in (1, 2, 3, 4)] == [10, 20, 40, 80]


def test_the_cap_bounds_every_wait_a_retry_after_included() -> None:
    assert wait_seconds(30, 15, 600, draw=lambda: 1.0) == 600
    assert wait_seconds(10_000, 15, 600, draw=lambda: 0.5) == 450  # no overflow however many failures
    assert wait_seconds(1, 0.1, 5, retry_after=3600) == 5


def test_a_retry_after_raises_the_wait() -> None:
    assert wait_seconds(1, 0.05, 600, retry_after=1.2, draw=lambda: 1.0) == 1.2
    assert wait_seconds(4, 15, 600, retry_after=1.2, draw=lambda: 0.0) == 60  # longer already


@given(st.integers(1, 60), st.floats(0.01, 100), st.floats(0.01, 10_000), st.floats(0, 1), st.floats(0, 1))
def test_waits_never_shrink_until_the_cap_and_never_pass_it(
        failures: int, first: float, cap: float, a: float, b: float) -> None:
    now = wait_seconds(failures, first, cap, draw=lambda: a)
    then = wait_seconds(failures + 1, first, cap, draw=lambda: b)
    assert 0 < now <= cap and 0 < then <= cap
    if first * 2.0 ** failures <= cap:  # below the cap the next span starts where this one ends
        assert now <= then
    else:  # at the cap, waits spread over its upper half
        assert then >= cap / 2
