"""Reading a file's complete lines in blocks (store.ledger.linescan.Lines): every line whole, however
long against the block, and a file that is shorter than the range asked for (cut since its size was
taken) ends at what is there, its part line kept as torn, instead of reading on for ever."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Optional

import pytest

from store.ledger.linescan import Lines


@pytest.fixture(autouse=True)
def deadline() -> Iterator[None]:
    """A read that never ends fails the test in 5 s instead of hanging the run."""
    def expired(signum: int, frame: Optional[FrameType]) -> None:
        raise TimeoutError("Lines kept reading")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(5)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def read(path: Path, stop: int, block: int) -> tuple[list[bytes], int, bytes]:
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = Lines(fd, 0, stop, block)
        found = [line for chunk in lines for line in chunk]
        return found, lines.end, lines.torn
    finally:
        os.close(fd)


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
def test_every_line_whole_whatever_the_block(tmp_path: Path, block: int) -> None:
    data = b"a\n" + b"b" * 40 + b"\n\nccc\ndd"
    path = tmp_path / "f"
    path.write_bytes(data)
    assert read(path, len(data), block) == ([b"a", b"b" * 40, b"", b"ccc"], len(data) - 2, b"dd")


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("tail", [b"", b"d", b"def"])
def test_a_file_shorter_than_the_range_ends_where_it_ends(tmp_path: Path, block: int, tail: bytes) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc\n" + tail)  # was longer when its size was taken: the range runs to 100
    assert read(path, 100, block) == ([b"abc"], 4, tail)
