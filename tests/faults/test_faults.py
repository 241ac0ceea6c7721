"""What a record means when something around it fails, and how a person gets the ledger back:
each case reproduced as a user meets it (the CLI, /baton: commands and hooks run for real)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

import faultkit
import ledgers
import pytest

from store.cli import main as cli
from store.cli import prompt
from store.ledger.ledger import format_line, seal
from store.state import location, snapshot

if TYPE_CHECKING:
    from conftest import Baton, Sandbox


def _records(sandbox: Sandbox) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in (sandbox.state / "steps.jsonl").read_bytes().splitlines()]


def _one_line(err: str, *words: str) -> None:
    assert err.count("\n") == 1 and err.startswith("baton: ") and "internal error" not in err, err
    for word in words:
        assert word in err, err


# ---------------------------------------------------------------- 1. the append is the commit point


def test_a_record_in_the_ledger_is_reported_recorded_even_when_the_snapshot_cannot_be_saved(
        baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b", "c").code == 0
    assert baton("record", "a", "running", "started").code == 0
    (sandbox.state / "state.json").unlink()
    (sandbox.state / "state.json").mkdir()  # a folder where the snapshot belongs: every save fails
    run = baton("record", "a", "done", "built it")
    assert run.code == 0 and run.out.startswith("recorded a done (attempt 1, #2); NEXT: b"), run
    _one_line(run.err, "warning: recorded, but the snapshot could not be saved",
              f"a folder where a file was expected: {sandbox.state / 'state.json'}")
    assert [(r["step"], r["status"]) for r in _records(sandbox)] == [("a", "running"), ("a", "done")]
    retry = baton("record", "a", "done", "built it")  # the caller retries: nothing is added
    assert retry.code == 0 and retry.out.startswith("already recorded a done (attempt 1, #2 at "), retry
    assert "a retry adds nothing); NEXT: b" in retry.out
    assert len(_records(sandbox)) == 2
    layout = location.resolve()
    answer = prompt.run("record", "a done built it", layout, {})  # /baton:record from the prompt too
    assert answer.startswith("baton: already recorded a done") and "Nothing was changed" not in answer
    assert len(_records(sandbox)) == 2
    assert baton("brief").out.splitlines()[1:3] == ["DONE: a", "NEXT: b"]
    other = baton("record", "a", "done", "built it again, differently")  # a new note is new information
    assert other.code == 0 and other.out.startswith("recorded a done (attempt 2, #3)")


# ---------------------------------------------------------------- 2. bad last lines: one command gets them off

CONFLICT_OURS = [{"ts": "2026-01-02T00:00:00Z", "step": "b", "status": "done", "note": "ours", "attempt": 1}]
CONFLICT_THEIRS = [{"ts": "2026-01-01T00:00:00Z", "step": "c", "status": "done", "note": "theirs", "attempt": 1}]


def _bad_tail(kind: str, base: List[Dict[str, Any]]) -> bytes:
    last = base[-1]
    if kind == "a NUL line":
        return b"\0" * 300 + b"\n"
    if kind == "a 10 MB line":
        return b"x" * (10 << 20) + b"\n"
    ours = format_line(seal(CONFLICT_OURS[0], last["seq"] + 1, last["hash"]))
    theirs = format_line(seal(CONFLICT_THEIRS[0], last["seq"] + 1, last["hash"]))
    return b"<<<<<<< HEAD\n" + ours + b"=======\n" + theirs + b">>>>>>> other-branch\n"


@pytest.mark.parametrize("kind", ["git conflict markers", "a NUL line", "a 10 MB line"])
def test_bad_last_lines_are_moved_aside_by_one_documented_command(baton: Baton, sandbox: Sandbox, kind: str) -> None:
    assert baton("init", "a", "b", "c").code == 0
    assert baton("record", "a", "done", "first").code == 0
    ledger = sandbox.state / "steps.jsonl"
    good = ledger.read_bytes()
    bad = _bad_tail(kind, _records(sandbox))
    ledger.write_bytes(good + bad)
    refused = baton("record", "b", "running")
    assert refused.code == 1 and refused.out == ""
    _one_line(refused.err, "last line is not a valid record", "run `baton repair`")
    brief = baton("brief").out.splitlines()
    assert any(line.startswith("STORE: the ledger's last line is not a valid record") and "`baton repair`" in line
               for line in brief), brief
    run = baton("repair")
    assert run.code == 0 and run.err == "", run
    kept = sorted((sandbox.state / "quarantine").iterdir())
    assert len(kept) == 1 and kept[0].read_bytes() == bad  # byte for byte
    assert f"to .baton/quarantine/{kept[0].name}" in run.out
    records = _records(sandbox)
    quarantine = records[-1]
    assert quarantine["status"] == "quarantine" and quarantine["removed"]["offset"] == len(good)
    assert quarantine["removed"]["bytes"] == len(bad) and quarantine["removed"]["kept_in"].endswith(kept[0].name)
    if kind == "git conflict markers":  # resolved as the merge driver would have done it
        assert [(r["step"], r["status"]) for r in records] == [
            ("a", "done"), ("b", "done"), ("", "merge"), ("c", "done"), ("", "quarantine")]
        assert records[3]["merged"]["seq"] == 2 and records[3]["note"] == "theirs"
    else:
        assert ledger.read_bytes().startswith(good) and len(records) == 2
    verify = baton("verify")
    assert verify.code == 0 and verify.out.startswith(f"ok: {len(records)} records, chain intact"), verify
    assert baton("record", "b", "running", "after the repair").code == 0
    assert not any(line.startswith("STORE:") for line in baton("brief").out.splitlines())
    assert baton("repair").out == "nothing to repair: the ledger ends on a valid record\n"


# ---------------------------------------------------------------- 3. and 4. a snapshot that does not fit is rebuilt


def _chain(notes: List[str], statuses: List[str]) -> bytes:
    lines, prev = [], "0" * 32
    for seq, (status, note) in enumerate(zip(statuses, notes), start=1):
        record = seal({"ts": "2026-01-01T00:00:00Z", "step": f"s{seq}", "status": status, "note": note,
                       "session": "", "attempt": 1}, seq, prev)
        lines.append(format_line(record))
        prev = record["hash"]
    return b"".join(lines)


def test_a_ledger_replaced_by_another_chain_of_the_same_size_is_not_briefed_from_the_old_snapshot(
        baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "s1", "s2", "s3", "s4").code == 0
    ledger = sandbox.state / "steps.jsonl"
    first = _chain(["one", "two, running still"], ["done", "running"])
    other = _chain(["uno", "dos, done" + "." * 12], ["done", "done"])  # padded to the same size
    assert len(first) == len(other) and first != other
    ledger.write_bytes(first)
    assert baton("brief").out.splitlines()[2] == "NEXT: s2"  # saves a snapshot of the first chain
    ledger.write_bytes(other)  # e.g. git checkout of another branch
    assert baton("brief").out.splitlines()[1:3] == ["DONE: s1, s2", "NEXT: s3"]
    assert baton("record", "s3", "running").code == 0
    records = _records(sandbox)
    assert records[2]["prev"] == json.loads(other.splitlines()[-1])["hash"]
    assert baton("verify").code == 0


MISSING = object()
WRONG_TYPES = {
    "steps as text": {"steps": {"s3": "done"}},
    "offset as text": {"offset": "12"},
    "sessions as a list": {"sessions": []},
    "problems as text": {"problems": "none"},
    "a status that is not text": {"steps": {"s1": {"status": 3}}},
    "an odd end mark": {"end_mark": "abc"},
    "a missing field": {"hash": MISSING},
}


@pytest.mark.parametrize("change", list(WRONG_TYPES.values()), ids=list(WRONG_TYPES))
def test_a_snapshot_with_wrong_types_is_rebuilt_like_a_missing_one(baton: Baton, sandbox: Sandbox,
                                                                   change: Dict[str, Any]) -> None:
    assert baton("init", "s1", "s2", "s3").code == 0
    for step in ("s1", "s2"):
        assert baton("record", step, "done").code == 0
    state = sandbox.state / "state.json"
    good = json.loads(state.read_bytes())
    bad = {k: v for k, v in {**good, **change}.items() if v is not MISSING}
    state.write_text(json.dumps(bad))
    for command in (["brief"], ["status"]):
        run = baton(*command)
        assert run.code == 0 and run.err == "", run
    assert baton("brief").out.splitlines()[1:3] == ["DONE: s1, s2", "NEXT: s3"]
    context = faultkit.context(faultkit.hook("SessionStart", {"source": "startup"}, sandbox.project))
    assert "NEXT: s3" in context
    assert baton("record", "s3", "running").code == 0
    assert snapshot.Snapshot.from_bytes(state.read_bytes()) == snapshot.rebuild(sandbox.state / "steps.jsonl").snapshot


# ---------------------------------------------------------------- 7. log streams


def test_log_of_the_whole_ledger_streams_in_flat_memory(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox.state.mkdir()
    (sandbox.state / "plan.json").write_text(json.dumps({"steps": ["a", "b", "c", "d", "e"]}))
    count, _ = ledgers.write(sandbox.state / "steps.jsonl", ledgers.long_job(["a", "b", "c", "d", "e"], 100_000))
    size = (sandbox.state / "steps.jsonl").stat().st_size
    out = sandbox.home / "log.txt"
    with open(out, "w", encoding="utf-8") as handle:
        monkeypatch.setattr(sys, "stdout", handle)
        tracemalloc.start()
        try:
            assert cli.main(["log", "-n", str(count + 10)]) == 0
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == count and lines[0].startswith("#1 ") and lines[-1].startswith(f"#{count} ")
    assert peak < size // 5, (peak, size)  # a chunk at a time, never the whole tail


# ---------------------------------------------------------------- 8. the approval key


def _approved_job(sandbox: Sandbox) -> location.Layout:
    from store.cli import actions

    sandbox.state.mkdir()
    (sandbox.state / "plan.json").write_text(json.dumps({"steps": [{"id": "design", "approval": True}, "build"]}))
    layout = location.resolve()
    env = {"HOME": str(sandbox.home)}
    assert actions.approve_step(layout, env, "design", "", "/baton:approve typed in the prompt").startswith("approved")
    return layout


def test_a_missing_approval_key_is_reported_as_missing_not_as_forgery(sandbox: Sandbox, baton: Baton) -> None:
    _approved_job(sandbox)
    key = sandbox.home / ".config" / "baton" / "approval.key"
    assert baton("brief").out.splitlines()[2] == "NEXT: design"
    assert "WAITING" not in baton("brief").out
    key.unlink()
    lines = baton("brief").out.splitlines()
    assert not any(line.startswith("ALERT") for line in lines), lines
    found = [line for line in lines if line.startswith("KEY: ")]
    assert len(found) == 1 and f"approval key {key} is missing" in found[0]
    assert "restore it from a backup (mode 0600) or approve again" in found[0]


def test_an_unreadable_approval_key_is_named_and_never_replaced(sandbox: Sandbox, baton: Baton) -> None:
    layout = _approved_job(sandbox)
    key = sandbox.home / ".config" / "baton" / "approval.key"
    secret = key.read_bytes()
    key.unlink()
    key.mkdir()  # unreadable as a file, for root too
    (key / "keep").write_bytes(secret)
    lines = baton("brief").out.splitlines()
    assert not any(line.startswith("ALERT") for line in lines)
    assert any(f"approval key {key} is unreadable (a folder where a file was expected" in line for line in lines)
    answer = prompt.run("approve", "design", layout, {"HOME": str(sandbox.home)})
    assert answer.startswith(f"baton: the approval key {key} is unreadable") and "chmod 600" in answer
    assert key.is_dir() and (key / "keep").read_bytes() == secret


# ---------------------------------------------------------------- 9. environment errors are named


def test_environment_errors_name_their_cause_and_path(baton: Baton, sandbox: Sandbox, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = Path(cli.__file__).resolve().parents[2] / "bin" / "baton"
    run = subprocess.run([sys.executable, str(script), "brief"], cwd=gone, capture_output=True, text=True,
                         preexec_fn=lambda: os.rmdir(str(gone)), check=False)
    assert run.returncode == 2
    _one_line(run.stderr, "the current folder no longer exists")
    (sandbox.state / "plan.json").mkdir(parents=True)
    _one_line(baton("brief").err, f"{sandbox.state / 'plan.json'}: cannot read the plan: it is a folder, not a "
              "regular file")  # plan.json is read only as a regular file, with a bound (issue 25 item 11)
    (sandbox.state / "plan.json").rmdir()
    assert baton("init", "a").code == 0
    (sandbox.state / "steps.jsonl").mkdir()
    _one_line(baton("record", "a", "done").err, "cannot record: a folder where a file was expected: "
              f"{sandbox.state / 'steps.jsonl'}; nothing was recorded")
    for command in (["log"], ["verify"]):
        run = baton(*command)
        assert run.code == 2
        _one_line(run.err, f"baton: a folder where a file was expected: {sandbox.state / 'steps.jsonl'}")


# ---------------------------------------------------------------- 10. duplicate keys in plan.json


@pytest.mark.parametrize("text, words", [
    ('{"steps": ["a"], "steps": ["b", "c"]}', "duplicate key 'steps'"),
    ('{"steps": [{"id": "a", "writes": ["x"], "writes": ["y"]}]}', "duplicate key 'writes' in the object with id 'a'"),
    ('{"limits": {"tool_calls": 5, "tool_calls": 500}, "steps": ["a"]}', "duplicate key 'tool_calls'"),
])
def test_a_plan_with_a_duplicated_key_is_refused_in_one_line(baton: Baton, sandbox: Sandbox, text: str,
                                                            words: str) -> None:
    sandbox.state.mkdir()
    (sandbox.state / "plan.json").write_text(text)
    run = baton("brief")
    assert run.code == 2 and run.out == ""
    _one_line(run.err, str(sandbox.state / "plan.json"), words)
    source = sandbox.home / "plan.json"
    source.write_text(text)
    _one_line(baton("init", "--force", "--plan", str(source)).err, words)

