"""The loop: the Stop hook sends the model back while NEXT exists, and always lets it go in the end.

A diligent model is sent back with the NEXT line until every step is recorded; a model that
stops again without recording anything, or one that records but never finishes, is let go within
baton's own budget, and the ledger says why the session ended early.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from store.state.protocol import stop_reason

from .driver import Claude
from .fakeapi import FakeAPI, all_text_of, text, tool_use
from .jobstate import Turns, ledger, results_by_id, write_plan

SEED_PLAN = {"steps": ["a", "b", "c"]}
FINISHED = "I am finished"


def record(step: str, status: str = "done") -> dict[str, Any]:
    command = f'baton record {step} {status} "{step} handled"'
    return tool_use("Bash", {"command": command, "description": f"record {step}"}, id=f"rec_{step}_{status}")


SENT_BACK = "Stop hook additional context: "


def stop_feedback(request: dict[str, Any]) -> str:
    """What baton's Stop hook told the model after its last turn ('' if nothing).

    The CLI (2.1.328) gives a Stop hook's `additionalContext` to the model as
    `Stop hook additional context: <text>` after the model's last turn: in a user text block
    wrapped in `<system-reminder>` tags, or, after tool results, in the system message that
    carries the other hooks' contexts (separated by blank lines).
    """
    messages = request["messages"]
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    texts = []
    for message in messages[last + 1:]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts += [b["text"] for b in blocks if b.get("type") == "text"]
    found = []
    for part in (p for t in texts for p in t.split("\n\n")):
        inner = part.removeprefix("<system-reminder>\n").removesuffix("\n</system-reminder>")
        if inner.startswith(SENT_BACK):
            found.append(inner[len(SENT_BACK):])
    return "\n".join(found)


def assert_no_hook_source(requests: list[dict[str, Any]]) -> None:
    """The hook's command line (the inline bootstrap) never reaches the model."""
    for request in requests:
        seen = all_text_of(request)
        assert "python3 -S -c" not in seen and "hook blocking error" not in seen and "sys.argv" not in seen


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
    assert feedback == stop_reason("NEXT: b", "b", 1, 12), feedback
    assert_no_hook_source(requests)
    assert "NEXT: c" in results_by_id(requests[3])["rec_b_done"].text
    assert "NEXT: (all steps complete - stop)" in results_by_id(requests[4])["rec_c_done"].text
    assert all_text_of(requests[-1]).count(SENT_BACK) == 1  # sent back once only
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
    assert stop_feedback(second) == stop_reason("NEXT: a", "a", 1, 12)
    assert_no_hook_source([first, second])
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
