"""The brief: seed lines first, news only when there is news, flat and bounded in size, and
cheap however long the ledger grows."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rebuild_wait import wait_for_rebuild

from store.cli import actions
from store.ledger import ledger
from store.ledger.ledger import GENESIS, format_line, seal
from store.plan.plan import parse_plan
from store.state import journal, location, snapshot
from store.state.brief import ALL_DONE, MAX_CHARS, render
from store.state.snapshot import Snapshot

if TYPE_CHECKING:
    from conftest import ChainLines, InProcess, Sandbox

SEED_PREFIXES = ("PLAN: ", "DONE: ", "NEXT: ", "LAST: ")
TS = "2026-01-01T00:00:00Z"


def _install(sandbox: Sandbox, plan: Dict[str, Any]) -> location.Layout:
    sandbox.state.mkdir(exist_ok=True)
    (sandbox.state / "plan.json").write_text(json.dumps(plan))
    return location.resolve()


def _brief(main: InProcess) -> List[str]:
    run = main(["brief"])
    assert run.code == 0, run.err
    return run.out.splitlines()


def _rec(step: str, status: str, note: str = "", session: str = "", attempt: int = 1) -> Dict[str, Any]:
    return {"ts": TS, "step": step, "status": status, "note": note, "session": session, "attempt": attempt}


# ---------------------------------------------------------------- the seed lines


def test_seed_lines_come_first_in_order(sandbox: Sandbox, main: InProcess) -> None:
    layout = _install(sandbox, {"steps": ["a", "b", "c", "d"]})
    assert _brief(main) == ["PLAN: a, b, c, d", "DONE: (nothing yet)", "NEXT: a"]
    journal.append(layout, "a", "done", "first one")
    journal.append(layout, "c", "skipped", "not needed")
    assert _brief(main) == ["PLAN: a, b, c, d", "DONE: a, c (skipped)", "NEXT: b", "LAST: c skipped not needed"]


def test_next_says_stop_when_every_step_is_complete(sandbox: Sandbox, main: InProcess) -> None:
    layout = _install(sandbox, {"steps": ["a", {"id": "b", "title": "the last one"}]})
    assert _brief(main)[2] == "NEXT: a"
    journal.append(layout, "a", "done")
    assert _brief(main)[2] == "NEXT: b - the last one"
    journal.append(layout, "b", "skipped")
    assert _brief(main) == ["PLAN: a, b", "DONE: a, b (skipped)", f"NEXT: {ALL_DONE}", "LAST: b skipped"]
    assert ALL_DONE == "(all steps complete - stop)"


# ---------------------------------------------------------------- news, and only news

PLAN = {"steps": ["a", "b", {"id": "ship", "phase": "published"}, "c"]}


def _news_case(layout: location.Layout, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put the job in the state the case names; the brief's session is always 'me-session'."""
    journal.append(layout, "a", "done", session="me-session")
    if case == "left running by another session":
        journal.append(layout, "b", "running", session="dead-session-42")
    elif case == "left running, session unknown":
        journal.append(layout, "b", "running", session="")
    elif case == "my own running step":
        journal.append(layout, "b", "running", session="me-session")
    elif case == "failed, to retry":
        journal.append(layout, "b", "running", session="me-session")
        journal.append(layout, "b", "failed", "tests red", session="me-session")
    elif case in ("waiting for approval", "approved"):
        journal.append(layout, "b", "done", session="me-session")
        if case == "approved":
            actions.approve_step(layout, os.environ, "ship", "", via="test")
    elif case == "torn tail":
        with open(layout.ledger, "ab") as handle:
            handle.write(b'{"seq":2,"ts":"2026')
    elif case == "damaged ledger":
        journal.append(layout, "b", "running", session="me-session")
        lines = layout.ledger.read_bytes().splitlines(keepends=True)
        layout.ledger.write_bytes(lines[0] + lines[1].replace(b'"running"', b'"done"'))
        layout.snapshot.unlink()
    else:
        assert case == "a normal job"


NEWS = [  # (case, the extra lines' beginnings, words the line must hold)
    ("a normal job", [], ""),
    ("my own running step", [], ""),
    ("approved", [], ""),
    ("left running by another session", ["LEFT RUNNING: b"], "session dead-ses"),
    ("left running, session unknown", ["LEFT RUNNING: b"], "an earlier session"),
    ("failed, to retry", ["RETRY: b failed on attempt 1: tests red"], "tests red"),
    ("waiting for approval", ["WAITING: ship needs a person's approval"], "/baton:approve ship"),
    ("torn tail", ["STORE: the ledger's last line is torn"], "next record repairs it"),
    ("damaged ledger", ["DEGRADED: ledger damaged at line 2", "STORE: the ledger's last line is not a valid record"],
     "baton "),
]


@pytest.mark.parametrize("case, extra, words", NEWS, ids=[n[0] for n in NEWS])
def test_extra_lines_only_for_news(sandbox: Sandbox, main: InProcess, monkeypatch: pytest.MonkeyPatch,
                                   case: str, extra: List[str], words: str) -> None:
    layout = _install(sandbox, PLAN)
    _news_case(layout, case, monkeypatch)
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "me-session")
    lines = _brief(main)
    assert [line[:6] for line in lines[:4]] == list(SEED_PREFIXES)
    news = lines[4:]
    assert len(news) == len(extra), lines
    for line, start in zip(news, extra):
        assert line.startswith(start) and words in line
    if case.startswith("left running"):
        assert "verify its effects before redoing it" in news[0]


# ---------------------------------------------------------------- size: flat in the ledger, bounded in the plan

STEPS = [f"s{i}" for i in range(10)]


def _ledger_ending_in_the_same_state(total: int) -> bytes:
    """``total`` chained lines: fillers retrying s5, then the same eight records for every size."""
    fillers = total - 8
    lines, prev, seq = [], GENESIS, 1
    fields = [_rec("s5", "running" if i % 2 == 0 else "failed", "retrying", attempt=i // 2 + 1) for i in range(fillers)]
    attempt = fillers // 2 + 1
    fields += [_rec(s, "done", f"{s} ok", session="s-old") for s in STEPS[:5]]
    fields += [_rec("s6", "running", session="other-session"), _rec("s5", "running", attempt=attempt),
               _rec("s5", "failed", "tests still red", attempt=attempt)]
    for item in fields:
        record = seal(item, seq, prev)
        lines.append(format_line(record))
        seq, prev = seq + 1, record["hash"]
    return b"".join(lines)


@pytest.fixture(scope="module")
def big_job(tmp_path_factory: pytest.TempPathFactory) -> Tuple[bytes, bytes]:
    """A 100,000-record ledger and its up-to-date snapshot, built once for this module."""
    folder = tmp_path_factory.mktemp("big")
    data = _ledger_ending_in_the_same_state(100_000)
    (folder / "steps.jsonl").write_bytes(data)
    return data, snapshot.rebuild(folder / "steps.jsonl").snapshot.to_bytes()


def _put(sandbox: Sandbox, ledger: bytes, state: Optional[bytes] = None) -> location.Layout:
    layout = _install(sandbox, {"steps": STEPS})
    layout.ledger.write_bytes(ledger)
    if state is not None:
        layout.snapshot.write_bytes(state)
    return layout


def test_brief_size_is_flat_as_the_ledger_grows(sandbox: Sandbox, main: InProcess, big_job: Tuple[bytes, bytes],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "me-session")
    _put(sandbox, _ledger_ending_in_the_same_state(10))
    small = _brief(main)
    _put(sandbox, *big_job)
    big = _brief(main)
    assert abs(len("\n".join(big)) - len("\n".join(small))) <= 8
    assert [re.sub(r"\d+", "#", line) for line in big] == [re.sub(r"\d+", "#", line) for line in small]
    assert big[2:5] == ["NEXT: s5", "LAST: s5 failed tests still red",
                        "RETRY: s5 failed on attempt 49997: tests still red"]
    assert len(big) == 6
    assert big[5].startswith("LEFT RUNNING: s6 was started by session other-se")


class Reads:
    """Counts what this process reads: ledger scans through ``iter_lines`` and bytes from /proc."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.scans: List[int] = []
        real = ledger.iter_lines

        def counting(path: Path, start: int = 0) -> Iterator[Tuple[int, bytes, bool]]:
            self.scans.append(start)
            return real(path, start)

        monkeypatch.setattr(snapshot, "iter_lines", counting)

    @staticmethod
    def rchar() -> int:
        """Bytes this process has read through read(2) and friends (Linux)."""
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
        raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts bytes read through Linux's /proc/self/io")
def test_brief_reads_none_of_the_ledger_when_the_snapshot_is_up_to_date(
        sandbox: Sandbox, main: InProcess, big_job: Tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _put(sandbox, *big_job)
    reads = Reads(monkeypatch)
    first = _brief(main)  # warms up imports and caches
    before = Reads.rchar()
    second = _brief(main)
    read = Reads.rchar() - before
    assert second == first and first[2] == "NEXT: s5"
    assert reads.scans == []
    assert read < 64 * 1024 < layout.ledger.stat().st_size // 100


def test_a_missing_snapshot_is_rebuilt(sandbox: Sandbox, main: InProcess, big_job: Tuple[bytes, bytes]) -> None:
    layout = _put(sandbox, *big_job)
    with_snapshot = _brief(main)
    layout.snapshot.unlink()
    assert _brief(main) == with_snapshot  # read from the ledger's end, while a detached process rebuilds
    assert wait_for_rebuild(layout.root) == big_job[1]


def test_a_stale_snapshot_catches_up_reading_only_the_new_lines(
        sandbox: Sandbox, main: InProcess, big_job: Tuple[bytes, bytes], chain_lines: ChainLines,
        monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _put(sandbox, *big_job)
    assert _brief(main)[2] == "NEXT: s5"
    saved = Snapshot.from_bytes(big_job[1])
    assert saved is not None
    behind = chain_lines([_rec("s5", "done", "fixed"), _rec("s6", "done", "checked"), _rec("s7", "running")],
                         seq=saved.seq + 1, prev=saved.hash)
    with open(layout.ledger, "ab") as handle:  # written behind the snapshot's back
        handle.write(b"".join(behind))
    reads = Reads(monkeypatch)
    lines = _brief(main)
    assert reads.scans == [saved.offset]
    assert lines[1] == "DONE: s0, s1, s2, s3, s4, s5, s6"
    assert lines[2:4] == ["NEXT: s7", "LAST: s7 running"]
    assert len(lines) == 5 and lines[4].startswith("LEFT RUNNING: s7")
    on_disk = Snapshot.from_bytes(layout.snapshot.read_bytes())
    assert on_disk == snapshot.rebuild(layout.ledger).snapshot


@st.composite
def big_plans(draw: st.DrawFn) -> Tuple[Dict[str, Any], Snapshot, bool]:
    """A plan of 1 to 1,000 steps with long names and titles, at any point of progress, with news."""
    count = draw(st.integers(1, 1000))
    width = draw(st.integers(4, 150))
    ids = [(f"{i:04d}-" + "n" * 150)[:max(width, 4)] for i in range(count)]
    steps = [{"id": sid, "title": "t" * draw(st.sampled_from([0, 150])),
              "phase": draw(st.sampled_from(["planned", "approved"]))} for sid in ids[:3]]
    steps += [{"id": sid, "title": "t" * 150} for sid in ids[3:]]
    done = draw(st.integers(0, count))
    snap = Snapshot()
    seq = 0
    for i, sid in enumerate(ids):
        if i < done:
            status = draw(st.sampled_from(["done", "skipped"])) if i % 50 == 0 else "done"
        elif i == done:
            status = draw(st.sampled_from(["", "failed", "running"]))
        else:
            status = "running" if i - done <= draw(st.integers(0, 5)) else ""
        if status:
            seq += 1
            snap.steps[sid] = {"seq": seq, "ts": TS, "status": status, "note": "x" * 300,
                               "session": f"other-{i}", "attempt": 99}
            snap.last = {"seq": seq, "ts": TS, "step": sid, "status": status, "note": "y" * 300}
    snap.seq = seq
    snap.problems = ["line 7: " + "z" * 300] * draw(st.integers(0, 5))
    return {"steps": steps}, snap, draw(st.booleans())


@given(big_plans())
def test_brief_is_bounded_for_any_plan_size_name_length_and_progress(
        case: Tuple[Dict[str, Any], Snapshot, bool]) -> None:
    raw, snap, torn = case
    plan = parse_plan(raw)
    text = render(plan, snap, "me", 5 if torn else 0, ["ALERT: " + "a" * 500])
    assert len(text) <= MAX_CHARS
    lines = text.split("\n")
    assert text.splitlines() == lines
    assert [line[:6] for line in lines[:3]] == list(SEED_PREFIXES[:3])
    assert sum(line.startswith("NEXT:") for line in lines) == 1
    pending = [s for s in plan.steps if snap.steps.get(s.id, {}).get("status") not in ("done", "skipped")]
    want_next = f"NEXT: {pending[0].id}" if pending else f"NEXT: {ALL_DONE}"
    assert lines[2].startswith(want_next) and len(lines[2]) <= len(want_next) + 103
    assert (lines[3].startswith("LAST: ") if snap.last else len(lines) == 3 or not lines[3].startswith("LAST: "))


# ---------------------------------------------------------------- notes never forge a brief line

NOTE_TEXT = (st.text(st.characters() | st.sampled_from("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x1b"), max_size=300)
             | st.builds("{}\n{}".format, st.text(max_size=20),
                         st.sampled_from(["NEXT: z", "LAST: a done", "DONE: a, b, c", "PLAN: z", "\r\nNEXT: zz"])))


@given(done_note=NOTE_TEXT, failed_note=NOTE_TEXT)
def test_a_note_never_forges_a_brief_line(sandbox: Sandbox, main: InProcess, done_note: str, failed_note: str) -> None:
    layout = _install(sandbox, {"steps": ["a", "b", "c"]})
    if layout.ledger.exists():
        layout.ledger.unlink()
        layout.snapshot.unlink()
    journal.append(layout, "a", "done", done_note)
    journal.append(layout, "b", "failed", failed_note)
    run = main(["brief"])
    assert run.code == 0 and run.out.endswith("\n")
    text = run.out[:-1]
    lines = text.split("\n")
    assert text.splitlines() == lines  # no other line break of any kind
    assert [line.split(":")[0] for line in lines] == ["PLAN", "DONE", "NEXT", "LAST", "RETRY"]
    assert lines[:3] == ["PLAN: a, b, c", "DONE: a", "NEXT: b"]
    assert lines[3].startswith("LAST: b failed") and lines[4].startswith("RETRY: b failed on attempt 1")
    assert not [ch for ch in text.replace("\n", "") if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")]


@given(text=st.text(st.characters(codec="utf-8") | st.sampled_from(" \t\n\x85\u2028\u00a0\u200b"), max_size=80),
       limit=st.integers(1, 100))
def test_one_line_fast_path_matches_the_full_cleaning(text: str, limit: int) -> None:
    from unicodedata import category

    from store.base.text import one_line

    cleaned = "".join(" " if category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c for c in text)
    cleaned = " ".join(cleaned.split())
    want = cleaned if len(cleaned) <= limit else cleaned[: max(limit - 1, 0)] + "\u2026"
    assert one_line(text, limit) == want
