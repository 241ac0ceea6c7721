"""The loop: the Stop hook sends the model back while NEXT exists, and always lets it go in the end.

A diligent model is sent back with the NEXT line until every step is recorded; a model that
stops again without recording anything, or one that records but never finishes, is let go within
baton's own budget, and the ledger says why the session ended early.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from .driver import Claude
from .fakeapi import FakeAPI, all_text_of, text, tool_use
from .jobstate import Turns, ledger, results_by_id, write_plan

SEED_PLAN = {"steps": ["a", "b", "c"]}
FINISHED = "I am finished"


def record(step: str, status: str = "done") -> dict[str, Any]:
    command = f'baton record {step} {status} "{step} handled"'
    return tool_use("Bash", {"command": command, "description": f"record {step}"}, id=f"rec_{step}_{status}")


def stop_feedback(request: dict[str, Any]) -> str:
    """The "Stop hook feedback" the CLI added after the model's last turn ('' if none).

    The CLI sends it as a user message of its own (a plain string) or, when the turn before
    ended with tool results, as a text block after them; then it adds a system message
    ("Stop hook blocking error from command: ...") inside `messages`.
    """
    messages = request["messages"]
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    texts = []
    for message in messages[last + 1:]:
        content = message["content"]
        if message["role"] == "user":
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            texts += [b["text"] for b in blocks if b.get("type") == "text"]
    return "\n".join(t for t in texts if t.startswith("Stop hook feedback:"))


def test_stop_sends_the_model_back_until_every_step_is_recorded(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, SEED_PLAN)
    fake_api.script = Turns(
        [record("a")],
        [text(FINISHED)],
        [record("b")],
        [record("c")],
        [text("All three steps are recorded.")],
    )

    run = claude.run("work through the plan", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    assert run.result == "All three steps are recorded."
    requests = fake_api.requests_main()
    assert len(requests) == 5
    assert "recorded a done" in results_by_id(requests[1])["rec_a_done"].text
    feedback = stop_feedback(requests[2])
    assert feedback.startswith("Stop hook feedback:\nbaton: the job is not finished. NEXT: b."), feedback
    assert "baton record b done" in feedback
    assert "NEXT: c" in results_by_id(requests[3])["rec_b_done"].text
    assert "NEXT: (all steps complete - stop)" in results_by_id(requests[4])["rec_c_done"].text
    assert all_text_of(requests[-1]).count("Stop hook feedback:") == 1  # sent back once only
    records = [(r["step"], r["status"], r["session"]) for r in ledger(project)]
    assert records == [(s, "done", run.session_id) for s in "abc"]


def test_a_model_that_stops_without_progress_is_let_go(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, SEED_PLAN)
    fake_api.script = lambda body: [text(FINISHED)]

    run = claude.run("work through the plan", cwd=project, plugin_dir=plugin_copy, timeout=60)

    assert run.returncode == 0, run.stderr
    assert run.result == FINISHED
    first, second = fake_api.requests_main()  # sent back once, then let go
    assert stop_feedback(first) == ""
    assert "NEXT: a." in stop_feedback(second)
    [stop] = ledger(project)
    assert (stop["step"], stop["status"], stop["session"]) == ("a", "stop", run.session_id)
    assert stop["note"] == (
        "session ended with a still NEXT: nothing recorded since baton last sent the session back"
    )


def test_a_model_that_records_but_never_finishes_is_let_go_when_the_budget_is_spent(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"limits": {"stop_blocks": 2}, "steps": ["a", "b", "c"]})

    served = itertools.count()

    def busy_but_never_done(body: dict[str, Any]) -> list[dict[str, Any]]:
        turn = next(served)
        if turn % 2:
            return [text(FINISHED)]
        command = f'baton record a running "pass {turn // 2 + 1}"'
        return [tool_use("Bash", {"command": command, "description": "record"})]

    fake_api.script = busy_but_never_done
    run = claude.run("work through the plan", cwd=project, plugin_dir=plugin_copy, timeout=60)

    assert run.returncode == 0, run.stderr
    assert run.result == FINISHED
    requests = fake_api.requests_main()
    assert len(requests) == 6  # record, stop (sent back 1 of 2), record, stop (2 of 2), record, stop
    assert "sent this session back 1 of at most 2 times" in stop_feedback(requests[2])
    assert "sent this session back 2 of at most 2 times" in stop_feedback(requests[4])
    *passes, stop = ledger(project)
    assert [(r["step"], r["status"], r["note"]) for r in passes] == [
        ("a", "running", f"pass {n}") for n in (1, 2, 3)
    ]
    assert (stop["step"], stop["status"]) == ("a", "stop")
    assert stop["note"] == "session ended with a still NEXT: this session's budget of 2 continuations is spent"
