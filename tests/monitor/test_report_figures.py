"""What the figures keep for the report, folded from the ledger, the events and the transcripts: the
notes of each attempt's records, the approvals, the ``baton once`` intents and results, the gate's
refusals with what was refused, the sessions that only answered baton's commands; all bounded, the
same when rebuilt, and a version 2 figures file read on without them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

from transcripts import assistant, tool_result, usage, write

from store.monitor import figures, fold, outcomes, summary
from store.state import journal
from store.state.job import Job
from store.state.location import Layout

A, B = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"


def plan(layout: Layout, steps: Any) -> None:
    layout.plan.write_text(json.dumps({"steps": steps}))


def record(layout: Layout, step: str, status: str, ts: str, note: str = "", session: str = A, **extra: Any) -> None:
    journal.append(layout, step, status, note, ts=ts, session=session, **extra)


def event(layout: Layout, **fields: Any) -> None:
    outcomes.append_event(layout, fields)


def status(layout: Layout) -> Dict[str, Any]:
    job = Job(layout, {})
    return summary.summarize(job, figures.refresh(layout, job.plan), now=1796040000.0)


def test_each_attempt_keeps_the_notes_of_its_records(layout: Layout) -> None:
    plan(layout, ["a", "b"])
    record(layout, "a", "running", "2026-11-30T10:00:00Z", "first try")
    record(layout, "a", "failed", "2026-11-30T10:00:05Z", "no input yet")
    record(layout, "a", "done", "2026-11-30T10:00:09Z", "wrote a.txt", session=B)
    record(layout, "b", "done", "2026-11-30T10:00:12Z")  # no note: none kept
    steps = {s["id"]: s for s in status(layout)["steps"]}
    assert [[(n["status"], n["note"], n["ts"]) for n in a["notes"]] for a in steps["a"]["attempts"]] == [
        [("running", "first try", "2026-11-30T10:00:00Z"), ("failed", "no input yet", "2026-11-30T10:00:05Z")],
        [("done", "wrote a.txt", "2026-11-30T10:00:09Z")]]
    assert [a["notes"] for a in steps["b"]["attempts"]] == [[]]


def test_notes_are_bounded_per_attempt_and_in_length(layout: Layout) -> None:
    plan(layout, ["a"])
    for n in range(fold.KEEP_NOTES + 3):
        record(layout, "a", "running", f"2026-11-30T10:00:{n:02d}Z", f"note {n} " + "x" * 500)
    [attempt] = status(layout)["steps"][0]["attempts"]
    assert len(attempt["notes"]) == fold.KEEP_NOTES
    assert attempt["notes"][-1]["note"].startswith(f"note {fold.KEEP_NOTES + 2} ")
    assert all(len(n["note"]) == fold.NOTE_CHARS for n in attempt["notes"])


def test_approvals_side_effects_and_their_settlement_are_kept_in_order(layout: Layout) -> None:
    plan(layout, ["a", "b"])
    record(layout, "a", "approved", "2026-11-30T10:00:01Z", "go ahead", session=B, by="person",
           via="/baton:approve typed in the prompt", sig="x")
    record(layout, "a", "intent", "2026-11-30T10:00:02Z", "./notify.sh team", key="notify-team")
    record(layout, "a", "result", "2026-11-30T10:00:03Z", "exit 0, id 4711", key="notify-team", outcome="ran",
           exit=0, id="4711")
    record(layout, "a", "intent", "2026-11-30T10:00:04Z", "./notify.sh ops", key="notify-ops")
    record(layout, "a", "result", "2026-11-30T10:00:09Z", "seen in #ops", session="", key="notify-ops",
           outcome="done", exit=0, settles=4)
    data = status(layout)
    assert data["approvals"] == [{"ts": "2026-11-30T10:00:01Z", "step": "a", "session": B, "note": "go ahead",
                                  "by": "person", "via": "/baton:approve typed in the prompt"}]
    assert [(r["key"], r["status"], r["outcome"], r["exit"], r["id"], r["note"], r["settles"], r["session"])
            for r in data["once"]["records"]] == [
        ("notify-team", "intent", "", None, "", "./notify.sh team", None, A),
        ("notify-team", "result", "ran", 0, "4711", "exit 0, id 4711", None, A),
        ("notify-ops", "intent", "", None, "", "./notify.sh ops", None, A),
        ("notify-ops", "result", "done", 0, "", "seen in #ops", 4, None)]


def test_refusals_keep_what_was_refused_relative_to_the_project(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b"])
    path = tmp_path / "s.jsonl"
    event(layout, kind="session", event="start", ts="2026-11-30T10:00:00Z", session=A, source="startup",
          transcript=str(path))
    use = assistant("m1", "r1", usage(1, 1), "2026-11-30T10:00:01.000Z", ("text", "tool_use"))
    use[1] = use[1].replace('"name":"Bash"', '"name":"Write"').replace(
        '"input":{"command":"echo hi","description":"usage in a command"}',
        f'"input":{{"file_path":"{layout.project}/src/x.py","content":"x"}}')
    denied = "PreToolUse:Write hook error: baton denied writing src/x.py: step a may write only docs/**. [baton:writes]"
    write(path, use + [tool_result(denied, True, "2026-11-30T10:00:02.000Z", "toolu_m1_1")])
    data = status(layout)
    assert data["refused"] == [{"ts": "2026-11-30T10:00:02Z", "session": A, "step": "a", "code": "writes",
                                "tool": "Write", "target": "src/x.py",
                                "reason": "baton denied writing src/x.py: step a may write only docs/**."}]
    assert data["tools"]["refusals"] == {"writes": 1} and data["steps"][0]["refusals"] == 1


def test_the_lists_are_bounded(layout: Layout) -> None:
    plan(layout, ["a"])
    for n in range(fold.KEEP_APPROVALS + 5):
        record(layout, "a", "approved", "2026-11-30T10:00:00Z", f"approval {n}", by="person", sig="x")
    data = status(layout)
    assert len(data["approvals"]) == fold.KEEP_APPROVALS
    assert data["approvals"][-1]["note"] == f"approval {fold.KEEP_APPROVALS + 4}"


def test_a_session_that_only_answered_commands_is_marked(layout: Layout) -> None:
    plan(layout, ["a"])
    event(layout, kind="session", event="start", ts="2026-11-30T10:00:00Z", session=B, source="startup")
    event(layout, kind="session", event="command", ts="2026-11-30T10:00:01Z", session=B, command="approve")
    event(layout, kind="session", event="end", ts="2026-11-30T10:00:02Z", session=B, reason="other")
    [view] = status(layout)["sessions"]
    assert (view["commands"], view["turns"], view["calls"], view["ended"]) == (1, 0, 0, "other")


def test_the_figures_kept_for_the_report_are_the_same_when_rebuilt(layout: Layout) -> None:
    plan(layout, ["a", "b"])
    record(layout, "a", "running", "2026-11-30T10:00:00Z", "first try")
    record(layout, "a", "approved", "2026-11-30T10:00:01Z", "ok", by="person", sig="x")
    status(layout)  # folded in two pieces
    record(layout, "a", "intent", "2026-11-30T10:00:02Z", "./x", key="k")
    record(layout, "a", "done", "2026-11-30T10:00:03Z", "done it")
    pieces = status(layout)
    Path(figures.path_of(layout)).unlink()
    whole = status(layout)
    for key in ("approvals", "refused"):
        assert pieces[key] == whole[key]
    assert pieces["once"]["records"] == whole["once"]["records"]
    assert pieces["steps"][0]["attempts"] == whole["steps"][0]["attempts"]


def test_a_version_2_figures_file_is_read_on(layout: Layout) -> None:
    """The figures an older baton wrote are not thrown away (a rebuild would lose transcripts whose
    sessions' events have rotated away): their lists for the report start empty."""
    plan(layout, ["a", "b"])
    record(layout, "a", "approved", "2026-11-30T10:00:00Z", "earlier", by="person", sig="x")
    record(layout, "a", "done", "2026-11-30T10:00:01Z", "first")
    status(layout)
    where = Path(figures.path_of(layout))
    head_text, *lines = where.read_text(encoding="ascii").split("\n")
    head = json.loads(head_text)
    lists = head["parts"]["lists"]
    del lines[len(lines) - 1 - len(lists) + lists.index("approvals")]  # as version 2 wrote it: no such list
    lists.remove("approvals")
    head["version"] = 2
    where.write_text("\n".join([json.dumps(head, separators=(",", ":")), *lines]), encoding="ascii")
    fig = figures.load(layout)
    assert fig["ledger"] == head["ledger"] and fig.get("approvals") is None
    record(layout, "b", "approved", "2026-11-30T10:00:05Z", "later", by="person", sig="x")
    data = status(layout)
    assert [a["note"] for a in data["approvals"]] == ["later"]  # folded on from where it was, not rebuilt
    assert json.loads(where.read_text(encoding="ascii").split("\n", 1)[0])["version"] == 3
