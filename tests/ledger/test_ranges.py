"""verify in pieces at once: for any ledger, any damage and any cut into pieces, the joined verdict of
the forked workers, and the serial one where fork fails, is the one-pass verdict, naming the same
first bad line; workers do not outlive the process that started them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ledgers import reference

from store.ledger import chain, ranges
from store.ledger.chain import Verdict
from store.ledger.ledger import GENESIS, LedgerError, format_line, parse_line, seal
from store.ledger.linescan import spans

REPO = Path(__file__).resolve().parents[2]



def _ledger(count: int, first: int = 1) -> List[bytes]:
    """Sealed lines of varied lengths, numbered from ``first`` (across a change of digits when asked)."""
    lines, prev = [], GENESIS
    for seq in range(1, first + count):
        record = seal({"ts": "2026-01-01T00:00:00Z", "step": f"s{seq % 5}", "status": "done",
                       "note": "x" * (seq * 7 % 40), "session": "", "attempt": 1}, seq, prev)
        if seq >= first:
            lines.append(format_line(record))
        prev = record["hash"]
    return lines


def _damage(lines: List[bytes], i: int, kind: str) -> List[bytes]:
    lines = list(lines)
    if kind == "flip":
        line = bytearray(lines[i])
        line[len(line) // 2] ^= 1
        lines[i] = bytes(line)
    elif kind == "delete":
        del lines[i]
    elif kind == "reseal":  # its own hash right, the next line's link broken
        record = parse_line(lines[i][:-1])
        record["note"] = "edited"
        lines[i] = format_line(seal(record, record["seq"], record["prev"]))
    elif kind == "garbage":
        lines.insert(i, b'{"seq":1,"hash":"x"}\n')
    return lines


def _verify(path: Path, monkeypatch: pytest.MonkeyPatch, parts: int, fork: bool = True, block: int = 256) -> Verdict:
    monkeypatch.setattr(chain, "SPLIT_BYTES", 0)  # cut into pieces whatever the size
    monkeypatch.setattr(chain, "PARTS", parts)
    monkeypatch.setattr(chain, "FORK", fork)
    monkeypatch.setattr(chain, "BLOCK", block)
    return chain.verify(path)


def _write(path: Path, lines: List[bytes]) -> bytes:
    data = b"".join(lines)
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("fork", [True, False])
@pytest.mark.parametrize("kind", ["flip", "delete", "reseal", "garbage"])
def test_a_bad_line_in_any_piece_is_named_as_in_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        kind: str, fork: bool) -> None:
    lines = _ledger(14)
    path = tmp_path / "steps.jsonl"
    for i in range(len(lines)):
        data = _write(path, _damage(lines, i, kind))
        want = reference(data)
        assert want.problem or (kind != "flip" and i == len(lines) - 1)  # the damage is seen, but at the end
        for parts in (2, 3, 6):
            assert _verify(path, monkeypatch, parts, fork) == want, (i, parts)


@pytest.mark.parametrize("fork", [True, False])
def test_damage_at_each_border_is_named_as_in_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       fork: bool) -> None:
    lines = _ledger(40, first=90)  # numbers from 90 to 129: a change of digits inside a block
    lines = _ledger(129)[:89] + lines
    path = tmp_path / "steps.jsonl"
    data = _write(path, lines)
    assert _verify(path, monkeypatch, 4, fork) == reference(data) == Verdict(129, reference(data).last_hash, 0, "")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    fd = os.open(str(path), os.O_RDONLY)
    try:
        borders = [start for start, _ in spans(fd, len(data), 4)][1:]
    finally:
        os.close(fd)
    assert len(borders) == 3
    for border in borders:
        after = starts.index(border)  # the first line of a piece
        for i in (after - 1, after):
            for kind in ("flip", "delete", "reseal", "garbage"):
                damaged = _write(path, _damage(lines, i, kind))
                want = reference(damaged)
                assert want.problem.startswith(f"line {i + 1}:") or want.problem.startswith(f"line {i + 2}:")
                assert _verify(path, monkeypatch, 4, fork) == want, (border, i, kind)


@pytest.mark.parametrize("fork", [True, False])
@pytest.mark.parametrize("count", [0, 1, 2, 7])
def test_small_ledgers_and_a_torn_last_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int,
                                            fork: bool) -> None:
    lines = _ledger(count)
    path = tmp_path / "steps.jsonl"
    for cut in sorted({0, 1, 30, len(lines[-1]) - 1} if lines else {0}):
        torn = lines[:-1] + [lines[-1][:cut]] if lines else [b""]
        for variant in (lines, torn):
            data = _write(path, variant)
            for parts in (1, 2, 5):
                assert _verify(path, monkeypatch, parts, fork) == reference(data)
    path.unlink()
    assert _verify(path, monkeypatch, 3, fork) == Verdict(0, GENESIS, 0, "")
    if count:
        _write(path, lines[:-1] + [lines[-1][:40]])
        verdict = _verify(path, monkeypatch, 3, fork)
        assert (verdict.records, verdict.torn, verdict.problem) == (count - 1, 40, "")


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    lines = _ledger(draw(st.integers(0, 30)), first=1)
    for _ in range(draw(st.integers(0, 2))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["flip", "delete", "reseal", "garbage", "swap", "blank", "torn", "none"]))
        if kind == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif kind == "blank":
            lines.insert(i, b"\n")
        elif kind == "torn" and lines[-1]:
            lines[-1] = lines[-1][: draw(st.integers(0, len(lines[-1]) - 1))]
        elif kind in ("delete", "garbage") or (kind == "flip" and len(lines[i]) > 1):
            lines = _damage(lines, i, kind)
        elif kind == "reseal":
            try:
                lines = _damage(lines, i, kind)
            except (ValueError, LedgerError):
                pass  # a line an earlier change already broke
    return b"".join(lines)


@settings(max_examples=150)
@given(data=damaged(), parts=st.integers(1, 7), block=st.sampled_from([64, 300, 4096]))
def test_pieces_in_workers_and_one_after_another_give_the_one_pass_verdict(
        tmp_path_factory: pytest.TempPathFactory, data: bytes, parts: int, block: int) -> None:
    path = tmp_path_factory.mktemp("v") / "steps.jsonl"
    path.write_bytes(data)
    want = reference(data)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _verify(path, monkeypatch, parts, True, block) == want
        assert _verify(path, monkeypatch, parts, False, block) == want


def test_when_fork_fails_each_piece_is_checked_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _ledger(30)
    path = tmp_path / "steps.jsonl"
    data = _write(path, _damage(lines, 27, "flip"))

    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    assert _verify(path, monkeypatch, 3) == reference(data)
    assert reference(data).problem.startswith("line 28:")


def test_workers_answer_from_other_processes_and_a_failed_one_answers_none() -> None:
    def work(piece: int) -> bytes:
        if piece == 2 and os.getpid() != here:
            raise RuntimeError("this worker fails")
        return f"{piece} {os.getpid()}".encode()

    here = os.getpid()
    got = list(ranges.answers(work, [0, 1, 2, 3]))
    assert got[0] == f"0 {here}".encode() and got[2] is None
    pids = {int(answer.split()[1]) for answer in (got[1], got[3]) if answer}
    assert len(pids) == 2 and here not in pids
    assert list(ranges.answers(work, [0, 1], fork=False)) == [f"0 {here}".encode(), None]


def test_a_worker_that_could_not_start_leaves_the_next_ones_working(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first pipe fails; the workers started after it still answer (they once closed its missing
    read end, -1, and died)."""
    here, pipe, failed = os.getpid(), os.pipe, []

    def pipe_once_failing() -> Tuple[int, int]:
        if not failed:
            failed.append(1)
            raise OSError(24, "Too many open files")
        return pipe()

    monkeypatch.setattr(os, "pipe", pipe_once_failing)
    got = list(ranges.answers(lambda piece: f"{piece} {os.getpid()}".encode(), [0, 1, 2, 3]))
    assert got[1] is None and all(answer is not None and int(answer.split()[1]) != here for answer in got[2:]), got


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"  # exited, not yet reaped by its new parent
    except FileNotFoundError:
        return True


def _pids(folder: Path, count: int) -> List[int]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = [int(p.read_text()) for p in folder.glob("*.pid") if p.read_text()]
        if len(found) == count:
            return found
        time.sleep(0.02)
    raise AssertionError(f"{count} workers did not start")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_closing_early_kills_the_workers(tmp_path: Path) -> None:
    def work(piece: int) -> bytes:
        if piece:
            (tmp_path / f"{piece}.pid").write_text(str(os.getpid()))
            time.sleep(300)
        return b"first"

    answers = ranges.answers(work, [0, 1, 2])
    assert next(answers) == b"first"
    pids = _pids(tmp_path, 2)
    start = time.monotonic()
    answers.close()
    assert all(_gone(pid) for pid in pids)
    assert time.monotonic() - start < 100  # killed, not waited for until they end


WORKER_SCRIPT = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from store.ledger import ranges
folder = sys.argv[2]
def work(piece):
    if piece:
        with open(os.path.join(folder, "%d.pid" % piece), "w") as out:
            out.write(str(os.getpid()))
    while True:  # a long verify: a step, then the check verify makes between blocks
        ranges.stop_if_abandoned()
        time.sleep(0.01)
list(ranges.answers(work, [0, 1, 2]))
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_stop_when_their_parent_is_killed(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", WORKER_SCRIPT, str(REPO), str(tmp_path)])
    try:
        pids = _pids(tmp_path, 2)
        assert not any(_gone(pid) for pid in pids)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline: Optional[float] = time.monotonic() + 10
    while deadline and time.monotonic() < deadline and not all(_gone(pid) for pid in pids):
        time.sleep(0.02)
    left = [pid for pid in pids if not _gone(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, json.dumps(left)


@pytest.mark.parametrize("at,sealed_as", [(1, 12), (1, 10), (9, 90), (9, 10), (10, 1), (10, 100), (11, 111)])
def test_a_record_sealed_with_the_wrong_seq_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: int,
                                                     sealed_as: int) -> None:
    lines = _ledger(12)
    prev = parse_line(lines[at - 2][:-1])["hash"] if at > 1 else GENESIS
    record = parse_line(lines[at - 1][:-1])
    lines[at - 1] = format_line(seal(record, sealed_as, prev))  # its hash and link right, its number wrong
    path = tmp_path / "steps.jsonl"
    data = _write(path, lines)
    assert reference(data).problem == f"line {at}: seq is {sealed_as}, expected {at} (lines removed or reordered)"
    for parts in (1, 3):
        assert _verify(path, monkeypatch, parts, block=1 << 20) == reference(data)


def test_a_read_that_fails_names_the_ledger(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    path.mkdir()  # opens, but every read fails
    with pytest.raises(IsADirectoryError) as raised:
        chain.verify(path)
    assert raised.value.filename == str(path)
