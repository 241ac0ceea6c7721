"""Appending to the ledger: attempts, concurrent writers, a writer killed mid-append, tampering
caught by ``verify``, and notes that can never forge a second entry."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.base.errors import BatonError
from store.ledger.ledger import check_link, parse_line, read_last, seal
from store.state import journal, location, snapshot

if TYPE_CHECKING:
    from conftest import Baton, ChainLines, Sandbox

REPO = Path(__file__).resolve().parents[2]


def _layout() -> location.Layout:
    return location.resolve()


def _records(path: Path) -> List[Dict[str, Any]]:
    """Every line of a ledger that must be whole and chained; fails the test otherwise."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    records: List[Dict[str, Any]] = []
    for raw in data[:-1].split(b"\n"):
        record = parse_line(raw)
        check_link(record, records[-1] if records else None)
        records.append(record)
    return records


# ---------------------------------------------------------------- attempts, sessions, notes


@pytest.mark.parametrize("entries, attempts", [
    ([("a", "running"), ("a", "done")], [1, 1]),
    ([("a", "running"), ("a", "failed"), ("a", "running"), ("a", "done")], [1, 1, 2, 2]),
    ([("a", "done"), ("a", "done")], [1, 2]),
    ([("a", "failed"), ("a", "failed"), ("a", "failed")], [1, 2, 3]),
    ([("a", "running"), ("b", "running"), ("a", "done"), ("b", "skipped")], [1, 1, 1, 1]),
])
def test_append_numbers_seq_and_attempts(entries: Sequence[Tuple[str, str]], attempts: List[int]) -> None:
    layout = _layout()
    got = [journal.append(layout, step, status, f"note {i}") for i, (step, status) in enumerate(entries)]
    assert [r["seq"] for r in got] == list(range(1, len(entries) + 1))
    assert [r["attempt"] for r in got] == attempts
    assert _records(layout.ledger) == got


def test_append_records_the_session_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _layout()
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "sess-1234")
    first = journal.append(layout, "a", "running")
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    second = journal.append(layout, "a", "done")
    assert (first["session"], second["session"]) == ("sess-1234", "")
    assert [r["session"] for r in _records(layout.ledger)] == ["sess-1234", ""]


def test_notes_are_kept_whole_and_what_baton_composes_beyond_is_cut_visibly() -> None:
    whole = journal.append(_layout(), "a", "done", "x" * journal.COMPOSED_MAX)
    assert whole["note"] == "x" * journal.COMPOSED_MAX
    record = journal.append(_layout(), "b", "done", "y" * 5000)
    assert record["note"].endswith("y\u2026 [cut: 5,000 characters in all]") and len(record["note"]) == \
        journal.COMPOSED_MAX
    assert [r["note"] for r in _records(_layout().ledger)] == [whole["note"], record["note"]]


def test_a_note_given_to_baton_is_whole_or_refused() -> None:
    assert journal.check_note("n" * journal.NOTE_MAX) == "n" * journal.NOTE_MAX
    with pytest.raises(BatonError) as caught:
        journal.check_note("n" * (journal.NOTE_MAX + 1))
    assert "2,001 characters" in caught.value.message and "nothing was recorded" in caught.value.message


def test_append_saves_a_snapshot_that_matches_a_rebuild() -> None:
    layout = _layout()
    for step, status in [("a", "running"), ("a", "done"), ("b", "failed")]:
        journal.append(layout, step, status, f"{step} {status}")
    saved = snapshot.Snapshot.from_bytes(layout.snapshot.read_bytes())
    assert saved == snapshot.rebuild(layout.ledger).snapshot
    assert saved is not None and saved.offset == layout.ledger.stat().st_size
    assert saved.steps["b"]["status"] == "failed" and saved.steps["a"]["status"] == "done"


def test_read_state_catches_up_and_saves_only_when_asked(chain_lines: ChainLines) -> None:
    layout = _layout()
    first = journal.append(layout, "a", "running")
    saved = layout.snapshot.read_bytes()
    extra = chain_lines([{"ts": "t", "step": "a", "status": "done", "note": "behind its back", "attempt": 1}],
                        seq=2, prev=first["hash"])
    with open(layout.ledger, "ab") as handle:
        handle.write(b"".join(extra))
    assert journal.read_state(layout, save=False).snapshot.steps["a"]["status"] == "done"
    assert layout.snapshot.read_bytes() == saved
    assert journal.read_state(layout).snapshot.seq == 2
    on_disk = snapshot.Snapshot.from_bytes(layout.snapshot.read_bytes())
    assert on_disk is not None and (on_disk.seq, on_disk.offset) == (2, layout.ledger.stat().st_size)


def test_append_after_lines_written_behind_the_snapshot_chains_and_counts_attempts(chain_lines: ChainLines) -> None:
    layout = _layout()
    first = journal.append(layout, "a", "running")
    extra = chain_lines([{"ts": "t", "step": "a", "status": "failed", "note": "", "attempt": 1}],
                        seq=2, prev=first["hash"])
    with open(layout.ledger, "ab") as handle:
        handle.write(b"".join(extra))
    record = journal.append(layout, "a", "running")
    assert (record["seq"], record["attempt"]) == (3, 2)
    assert [r["seq"] for r in _records(layout.ledger)] == [1, 2, 3]


def test_append_refuses_when_the_last_line_is_corrupt(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b").code == 0
    assert baton("record", "a", "done").code == 0
    ledger = sandbox.state / "steps.jsonl"
    ledger.write_bytes(ledger.read_bytes() + b"not a record\n")
    before = ledger.read_bytes()
    with pytest.raises(BatonError) as info:
        journal.append(_layout(), "b", "running")
    assert info.value.code == 1 and "baton repair" in info.value.message
    run = baton("record", "b", "running")
    assert run.code == 1 and run.err.count("\n") == 1 and "last line is not a valid record" in run.err
    assert ledger.read_bytes() == before


# ---------------------------------------------------------------- concurrent writers

WORKER = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from store.state import journal
from store.state import location
worker, count, go = sys.argv[2], int(sys.argv[3]), sys.argv[4]
layout = location.resolve()
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(count):
    journal.append(layout, "s%d" % (i % 4), "running" if i % 3 else "done", "w%s-%d" % (worker, i))
"""


def _expected_attempts(records: Sequence[Dict[str, Any]]) -> List[int]:
    """Attempt numbers as the rules give them: a new attempt unless the step's latest is running."""
    latest: Dict[str, Dict[str, Any]] = {}
    out = []
    for record in records:
        prior = latest.get(record["step"])
        out.append(1 if prior is None else prior["attempt"] + (prior["status"] != "running"))
        latest[record["step"]] = record
    return out


def test_eight_processes_appending_at_once_lose_and_interleave_nothing(
        baton: Baton, sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # BATON_FSYNC=0 for this test only. With fsync on, 8 x 1,000 appends took 6 s on an idle
    # 2-CPU machine but 36-39 s while other test suites ran beside it (9-12 s with fsync off),
    # over the 20 s budget. fsync is about power loss; what this test checks (the lock and the
    # single write) does not depend on it.
    monkeypatch.setenv("BATON_FSYNC", "0")
    workers, count = 8, 1000
    script, go = tmp_path / "worker.py", tmp_path / "go"
    script.write_text(WORKER)
    procs = [subprocess.Popen([sys.executable, str(script), str(REPO), str(w), str(count), str(go)],
                              cwd=sandbox.project, stderr=subprocess.PIPE) for w in range(workers)]
    time.sleep(0.2)
    go.touch()
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * workers, errors

    ledger = sandbox.state / "steps.jsonl"
    records = _records(ledger)  # every line whole, valid JSON, own hash and link intact
    assert len(records) == workers * count
    assert [r["seq"] for r in records] == list(range(1, workers * count + 1))
    for w in range(workers):  # each writer's records all there, once, in its own order
        mine = [int(r["note"].split("-")[1]) for r in records if r["note"].startswith(f"w{w}-")]
        assert mine == list(range(count))
    assert [r["attempt"] for r in records] == _expected_attempts(records)

    run = baton("verify")
    assert run.out.startswith(f"ok: {workers * count} records, chain intact") and run.err == ""
    saved = snapshot.Snapshot.from_bytes((sandbox.state / "state.json").read_bytes())
    rebuilt = snapshot.rebuild(ledger).snapshot
    assert saved is not None
    assert (saved.seq, saved.hash, saved.offset) == (rebuilt.seq, rebuilt.hash, rebuilt.offset) == (
        workers * count, records[-1]["hash"], ledger.stat().st_size)
    assert saved.steps == rebuilt.steps


# ---------------------------------------------------------------- a writer killed mid-append

TORN_WRITER = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from store.state import journal
from store.state import location
real_write = os.write

def torn_write(fd, data):
    data = bytes(data)
    if data.startswith(b'{"seq"'):  # the ledger line: write part of it, then hang until killed
        real_write(fd, data[: len(data) // 2 if sys.argv[2] == "half" else len(data) - 1])
        time.sleep(60)
    return real_write(fd, data)

os.write = torn_write
journal.append(location.resolve(), "b", "running", "this append is killed")
"""


def _kill_mid_append(sandbox: Sandbox, tmp_path: Path, cut: str) -> bytes:
    """Run the torn writer until its partial line is on disk, SIGKILL it; return the torn bytes."""
    ledger = sandbox.state / "steps.jsonl"
    before = ledger.read_bytes()
    script = tmp_path / "torn_writer.py"
    script.write_text(TORN_WRITER)
    proc = subprocess.Popen([sys.executable, str(script), str(REPO), cut], cwd=sandbox.project)
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            now = ledger.read_bytes()
            if len(now) > len(before) and not now.endswith(b"\n"):
                break
            assert proc.poll() is None, "the writer ended before it was killed"
            time.sleep(0.01)
        else:
            pytest.fail("the partial line never reached the ledger")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    after = ledger.read_bytes()
    assert after.startswith(before)
    return after[len(before):]


@pytest.mark.parametrize("cut", ["half", "all but the newline"])
def test_sigkill_mid_append_leaves_a_torn_tail_that_readers_skip_and_the_next_record_repairs(
        baton: Baton, sandbox: Sandbox, tmp_path: Path, cut: str) -> None:
    assert baton("init", "a", "b", "c").code == 0
    for status_word in ("running", "done"):
        assert baton("record", "a", status_word).code == 0
    ledger = sandbox.state / "steps.jsonl"
    complete = _records(ledger)
    torn = _kill_mid_append(sandbox, tmp_path, "half" if cut == "half" else "newline")
    assert torn.startswith(b'{"seq":3,') and b"\n" not in torn
    on_disk = ledger.read_bytes()

    brief = baton("brief")
    assert brief.code == 0 and "torn line" in brief.err
    lines = brief.out.splitlines()
    assert lines[:4] == ["PLAN: a, b, c", "DONE: a", "NEXT: b", "LAST: a done"]
    assert any(line.startswith("STORE: the ledger's last line is torn") for line in lines[4:])

    status = baton("status")
    assert status.code == 0 and "torn line" in status.err
    assert "  1/3 steps" in status.out and "since the first of 2 records" in status.out

    log = baton("log")
    assert log.code == 0 and "torn line" in log.err
    assert [line.split()[0] for line in log.out.splitlines()] == ["#1", "#2"]

    verify = baton("verify")
    assert verify.code == 0 and verify.err == ""
    assert verify.out.splitlines() == [
        f"ok: 2 records, chain intact (last hash {complete[-1]['hash'][:12]})",
        f"torn tail: {len(torn)} bytes after record 2 (line 3) from a writer killed mid-append; "
        "not corruption, the next record repairs it",
    ]
    assert ledger.read_bytes() == on_disk  # readers never write the ledger

    record = baton("record", "c", "running", "after the crash")
    assert record.code == 0, record.err
    repaired = _records(ledger)
    torn_log = sandbox.state / "torn.log"
    if cut == "half":  # the half line is dropped from the ledger and kept in torn.log
        assert [r["seq"] for r in repaired] == [1, 2, 3]
        assert repaired[:2] == complete and repaired[2]["prev"] == complete[-1]["hash"]
        kept = [json.loads(line) for line in torn_log.read_text().splitlines()]
        assert len(kept) == 1
        assert kept[0]["bytes"].encode("latin-1") == torn and kept[0]["offset"] == len(on_disk) - len(torn)
    else:  # the whole record was written, only its newline was missing: it is kept
        assert [r["seq"] for r in repaired] == [1, 2, 3, 4]
        assert repaired[2]["note"] == "this append is killed" and repaired[3]["prev"] == repaired[2]["hash"]
        assert not torn_log.exists()
    assert repaired[-1]["note"] == "after the crash"

    verify = baton("verify")
    assert (verify.code, verify.err) == (0, "")
    last_hash = repaired[-1]["hash"][:12]
    assert verify.out.splitlines() == [f"ok: {len(repaired)} records, chain intact (last hash {last_hash})"]
    brief = baton("brief")
    assert brief.err == "" and not any(line.startswith("STORE:") for line in brief.out.splitlines())


# ---------------------------------------------------------------- tampering caught by verify


def _swap(lines: List[bytes], i: int, j: int) -> List[bytes]:
    lines = list(lines)
    lines[i], lines[j] = lines[j], lines[i]
    return lines


def _edit(lines: List[bytes], i: int, rehash: bool) -> List[bytes]:
    record = parse_line(lines[i][:-1])
    record["note"] = "edited by hand"
    if rehash:
        record = seal(record, record["seq"], record["prev"])
    lines = list(lines)
    lines[i] = json.dumps(record, separators=(",", ":")).encode() + b"\n"
    return lines


TAMPERING = [  # (what, change to the 6 lines, first bad line number, what the message says)
    ("a field edited", lambda ls: _edit(ls, 2, rehash=False), 3, "hash does not match"),
    ("a field edited and the line re-hashed", lambda ls: _edit(ls, 2, rehash=True), 4, "chain broken"),
    ("a line deleted", lambda ls: ls[:2] + ls[3:], 3, "chain broken"),
    ("the first line deleted", lambda ls: ls[1:], 1, "chain broken"),
    ("two lines swapped", lambda ls: _swap(ls, 2, 3), 3, "chain broken"),
    ("a line repeated", lambda ls: ls[:3] + ls[2:], 4, "chain broken"),
    ("a blank line inserted", lambda ls: ls[:4] + [b"\n"] + ls[4:], 5, "not valid JSON"),
    ("a line of garbage", lambda ls: ls[:1] + [b"{oops\n"] + ls[2:], 2, "not valid JSON"),
]


@pytest.mark.parametrize("what, change, line, reason", TAMPERING, ids=[t[0] for t in TAMPERING])
def test_verify_names_the_first_bad_line(baton: Baton, sandbox: Sandbox, chain_lines: ChainLines,
                                         what: str, change: Any, line: int, reason: str) -> None:
    sandbox.state.mkdir()
    ledger = sandbox.state / "steps.jsonl"
    lines = chain_lines({"ts": "t", "step": f"s{i}", "status": "done", "note": f"n{i}", "attempt": 1}
                        for i in range(6))
    ledger.write_bytes(b"".join(lines))
    intact = baton("verify")
    assert intact.code == 0 and intact.out.startswith("ok: 6 records, chain intact")

    ledger.write_bytes(b"".join(change(lines)))
    tampered = ledger.read_bytes()
    run = baton("verify")
    assert (run.code, run.out) == (1, "")
    assert run.err.count("\n") == 1 and run.err.startswith(f"baton: verify failed: {ledger}: line {line}: ")
    assert re.findall(r"line (\d+):", run.err)[0] == str(line) and reason in run.err
    assert ledger.read_bytes() == tampered


# ---------------------------------------------------------------- notes never forge an entry

NASTY_NOTES = [
    "two\nlines", "carriage\rreturn", "crlf\r\nline", "line\u2028separator", "para\u2029graph", "nel\x85x",
    "nul\x00byte", "escape \x1b[31mred\x1b[0m", "vt\x0bff\x0cfs\x1cgs\x1drs\x1e", "bidi \u202e gnp.exe",
    '"}\n{"seq":99,"ts":"t","step":"b","status":"done","prev":"0","hash":"x"}',
    "x\nNEXT: z\nDONE: everything", "\nLAST: b done forged",
]


@pytest.mark.parametrize("note", NASTY_NOTES)
def test_a_nasty_note_is_one_record_that_round_trips(note: str) -> None:
    layout = _layout()
    journal.append(layout, "a", "running")
    before = layout.ledger.read_bytes()
    record = journal.append(layout, "a", "done", note)
    after = layout.ledger.read_bytes()
    added = after[len(before):]
    assert added.count(b"\n") == 1 and added.endswith(b"\n") and all(b < 128 for b in added)
    assert len(after.decode("ascii").splitlines()) == 2
    assert parse_line(added[:-1])["note"] == note == record["note"]
    assert read_last(layout.ledger, 5)[0][-1]["note"] == note


# any character, with line breaks, separators, controls and record-shaped text drawn often
NASTY_CHARS = "\n\r\x00\x0b\x0c\x1c\x1d\x1e\x1b\x7f\x85\u2028\u2029\ufeff\u202e"
FORGERIES = ['{"seq":2,"step":"b","status":"done"}', "NEXT: z", "LAST: b done", "\r\nDONE: a, b"]
NOTE_TEXT = (st.text(st.characters() | st.sampled_from(NASTY_CHARS), max_size=journal.NOTE_MAX)
             | st.builds("{}\n{}".format, st.text(max_size=20), st.sampled_from(FORGERIES)))


@given(note=NOTE_TEXT)
def test_any_note_adds_exactly_one_line_and_round_trips(note: str) -> None:
    layout = _layout()
    before = layout.ledger.read_bytes() if layout.ledger.exists() else b""
    record = journal.append(layout, "a", "done", note)
    after = layout.ledger.read_bytes()
    assert after.startswith(before)
    added = after[len(before):]
    assert added.count(b"\n") == 1 and added.endswith(b"\n")
    text = after.decode("ascii")  # escaped: no raw separator of any kind reaches the file
    assert len(text.splitlines()) == text.count("\n") == record["seq"]
    assert parse_line(added[:-1])["note"] == note
    assert read_last(layout.ledger, 1)[0] == [record]
