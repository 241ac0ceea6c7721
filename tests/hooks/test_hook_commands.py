"""``/baton:`` commands typed by a person, answered by UserPromptSubmit with no model call: the
answer, what lands in the ledger (exactly, nothing executed), and one line for every mistake."""

from __future__ import annotations

from typing import Any, Dict

import pytest
from conftest import Hook, JobDir, Payloads


def typed(payload: Payloads, text: str) -> Dict[str, Any]:
    return payload("user_prompt_submit", prompt=text)


def answered(result: Any) -> str:
    """The text shown to the person; asserts the prompt stopped at the hook, with no model call."""
    assert result.answer is not None, "the command was passed to the model"
    assert set(result.answer) == {"continue", "stopReason"} and result.answer["continue"] is False, result.answer
    return str(result.reason)


def test_brief(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    job.record("a", "done", "first")
    gates = "" if hook.sandboxed else ("\nGATES: best effort: baton's sandbox cannot run here (bubblewrap is "
                                       "unavailable in this test); Bash commands are only read, not confined")
    assert answered(hook("UserPromptSubmit", typed(payload, "/baton:brief"))) == (
        "baton brief:\nPLAN: a, b\nDONE: a\nNEXT: b\nLAST: a done first" + gates)
    assert answered(hook("UserPromptSubmit", typed(payload, "  /baton:brief  \n"))).startswith("baton brief:\nPLAN: a")


def test_status(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"job": "demo", "steps": ["a", {"id": "b", "approval": True}]})
    job.record("a", "done", "first")
    text = answered(hook("UserPromptSubmit", typed(payload, "/baton:status")))
    lines = text.splitlines()
    assert lines[0] == "baton status:"
    assert lines[1] == "job demo  [##########----------]  1/2 steps"
    assert lines[2] == "next   b, attempt 1, 0s in; waiting for a person's approval (/baton:approve b)" or \
        lines[2].startswith("next   b, attempt 1, ")
    assert [line.split()[:3] for line in lines if line.startswith(("  a ", "> b"))] == [
        ["a", "done", "1"], [">", "b", "*pending"]]
    assert "  * needs a person's approval" in lines


NOTE = 'note with "quotes"; and $(touch PWNED) `touch PWNED2` && touch PWNED3 > x; \'single\' \\back'


def test_record_stores_the_note_exactly_and_runs_nothing(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    text = answered(hook("UserPromptSubmit", typed(payload, f"/baton:record a done {NOTE}")))
    assert text == "baton: recorded a done (attempt 1, #1); NEXT: b"
    (record,) = job.ledger()
    assert (record["step"], record["status"], record["note"]) == ("a", "done", NOTE)
    assert (record["by"], record["via"]) == ("person", "/baton:record typed in the prompt")
    assert not any(p.name.startswith("PWNED") or p.name == "x" for p in job.project.iterdir())


def test_record_takes_quoted_step_names_and_multi_line_notes(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["step one", "two"])
    answered(hook("UserPromptSubmit", typed(payload, '/baton:record "step one" failed first line\nsecond line')))
    (record,) = job.ledger()
    assert (record["step"], record["status"], record["note"]) == ("step one", "failed", "first line\nsecond line")
    assert record["session"]
    brief = answered(hook("UserPromptSubmit", typed(payload, "/baton:brief")))
    assert "RETRY: step one failed on attempt 1: first line second line" in brief


def test_record_runs_validate_and_says_why_it_failed(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": [{"id": "a", "validate": "echo not yet; exit 3"}, "b"]})
    text = answered(hook("UserPromptSubmit", typed(payload, "/baton:record a done it works")))
    assert text.startswith("baton: recorded a failed (attempt 1, #1); NEXT: a")
    assert "a was not recorded done: validate failed (exit 3): not yet (note: it works)" in text
    assert job.ledger()[-1]["status"] == "failed"


def test_plan_creates_a_seed_plan_then_shows_it(hook: Hook, job: JobDir, payload: Payloads) -> None:
    text = answered(hook("UserPromptSubmit", typed(payload, "/baton:plan fetch 'train model' report")))
    assert text.startswith(f"baton: created {job.layout.plan} with 3 steps.\n")
    assert "NEXT: fetch" in text
    assert (job.state / ".gitignore").exists()
    shown = answered(hook("UserPromptSubmit", typed(payload, "/baton:plan")))
    assert shown.splitlines() == ["baton plan:", f"plan {job.layout.plan}: 3 steps", "  fetch", "  train model",
                                  "  report"]


def test_plan_shows_each_steps_policy(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"job": "j", "steps": [{"id": "d", "phase": "approved", "writes": ["docs/**"]},
                                    {"id": "t", "tools": ["Read"], "validate": "make test"}]})
    shown = answered(hook("UserPromptSubmit", typed(payload, "/baton:plan"))).splitlines()
    assert shown == ["baton plan:", f"plan {job.layout.plan} (job j): 2 steps",
                     "  d  [phase=approved; writes=docs/**; needs approval]",
                     "  t  [tools=Read; validate=make test]"]


def test_plan_never_replaces_an_existing_plan(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a"])
    before = job.layout.plan.read_bytes()
    text = answered(hook("UserPromptSubmit", typed(payload, "/baton:plan x y")))
    assert text.startswith("baton: ") and "already exists" in text and "\n" not in text
    assert job.layout.plan.read_bytes() == before


@pytest.mark.parametrize("prompt", [
    "go", "", "   ", "please run /baton:brief", "/baton:xyz", "/baton:", "/baton:Brief", "/batonx:brief",
    "/baton:briefs", "/brief", "/record a done", "/recorded a done", "/briefly", "/brief x", "/record",
    "<task-notification>/baton:approve a</task-notification>",
    "/baton :brief",
])
def test_other_prompts_pass_through_untouched(prompt: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a"])
    assert hook("SessionStart", payload("session_start_startup")).context  # the model has seen the brief
    assert hook("UserPromptSubmit", typed(payload, prompt)).out == ""
    assert job.ledger() == []


@pytest.mark.parametrize("prompt", [None, 7, ["/baton:brief"], {"text": "/baton:brief"}])
def test_a_prompt_that_is_not_text_passes_through(prompt: Any, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a"])
    assert hook("SessionStart", payload("session_start_startup")).context
    assert hook("UserPromptSubmit", typed(payload, prompt)).out == ""


BAD = [
    ("/baton:record", "usage: /baton:record STEP STATUS [NOTE]"),
    ("/baton:record a", "usage: /baton:record STEP STATUS [NOTE]"),
    ("/baton:record a finished", "unknown status 'finished'; valid: running, done, failed, skipped"),
    ("/baton:record zz done", "unknown step 'zz'; valid steps: a, b"),
    ("/baton:record aa done", "did you mean 'a'?"),
    ('/baton:record "a done', 'no closing " quote'),
    ("/baton:record 'a done", "no closing ' quote"),
    ("/baton:record a approved", "unknown status 'approved'"),
    ("/baton:approve", "usage: /baton:approve STEP [NOTE]"),
    ("/baton:approve zz", "unknown step 'zz'"),
    ('/baton:plan "x', "cannot read the step names"),
    ("/baton:record b done", "waits for a person's approval (/baton:approve b)"),
]


@pytest.mark.parametrize("prompt,phrase", BAD, ids=[b[0] for b in BAD])
def test_bad_arguments_give_one_line(prompt: str, phrase: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": ["a", {"id": "b", "approval": True}]})
    text = answered(hook("UserPromptSubmit", typed(payload, prompt)))
    assert text.startswith("baton: ") and phrase in text
    assert "\n" not in text and "Traceback" not in text
    assert job.ledger() == []


@pytest.mark.parametrize("prompt", ["/baton:brief", "/baton:status", "/baton:record a done", "/baton:approve a",
                                    "/baton:plan"])
def test_commands_without_a_plan_say_so_in_one_line(prompt: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    text = answered(hook("UserPromptSubmit", typed(payload, prompt)))
    assert text == (f"baton: no job in {job.project} yet. Create one with /baton:plan STEP... "
                    "(for example /baton:plan fetch clean train)")
    assert not job.state.exists()


def test_an_environment_error_names_its_cause_and_path(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a"])
    job.layout.ledger.mkdir()  # a folder where the ledger belongs
    result = hook("UserPromptSubmit", typed(payload, "/baton:record a done x"))
    assert answered(result) == (f"baton: cannot record: a folder where a file was expected: {job.layout.ledger}; "
                                "nothing was recorded")


def test_a_command_that_fails_unexpectedly_is_refused_with_a_message(inproc: Hook, job: JobDir, payload: Payloads,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from store.cli import actions

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a bug")

    job.plan(["a"])
    monkeypatch.setattr(actions, "record", broken)
    result = inproc("UserPromptSubmit", typed(payload, "/baton:record a done x"))
    assert result.stopped
    assert result.reason.startswith("baton could not run this command: KeyError: 'a bug'")
    assert result.reason.endswith("Run `baton log -n 3` to see whether anything was recorded.")
    assert "UserPromptSubmit" in job.layout.errors.read_text()


def test_status_does_not_count_a_forged_approval(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": [{"id": "b", "approval": True}]})
    job.record("b", "approved", "", by="person", sig="0" * 64)
    text = answered(hook("UserPromptSubmit", typed(payload, "/baton:status")))
    assert [line.split()[:2] for line in text.splitlines() if line.startswith("> b")] == [[">", "b"]]
    assert "*pending" in next(line for line in text.splitlines() if line.startswith("> b"))


# ---------------------------------------------------------------- the bare /brief and /record


def test_bare_commands_are_answered_only_while_batons_files_are_installed(hook: Hook, job: JobDir,
                                                                          payload: Payloads) -> None:
    from store.cli import command_files

    job.plan(["a", "b"])
    hook("SessionStart", payload("session_start_startup"))
    assert hook("UserPromptSubmit", typed(payload, "/record a done x")).out == ""  # not installed: Claude Code's
    folder = command_files.folder_for("project", job.project, job.home)
    command_files.install(folder)
    text = answered(hook("UserPromptSubmit", typed(payload, f"/record a done {NOTE}")))
    assert text == "baton: recorded a done (attempt 1, #1); NEXT: b"
    (record,) = job.ledger()
    assert (record["note"], record["via"]) == (NOTE, "/record typed in the prompt")
    assert answered(hook("UserPromptSubmit", typed(payload, "/brief"))).splitlines()[3] == "NEXT: b"
    usage = answered(hook("UserPromptSubmit", typed(payload, "/record a")))
    assert usage.startswith("baton: usage: /record STEP STATUS [NOTE]")
    assert not any(p.name.startswith("PWNED") or p.name == "x" for p in job.project.iterdir())


def test_a_persons_own_record_command_is_never_taken_over(hook: Hook, job: JobDir, payload: Payloads) -> None:
    from store.cli import command_files

    job.plan(["a", "b"])
    hook("SessionStart", payload("session_start_startup"))
    command_files.install(command_files.folder_for("project", job.project, job.home))
    user = command_files.folder_for("user", job.project, job.home)
    user.mkdir(parents=True)
    (user / "record.md").write_text("---\ndescription: mine\n---\nlog $ARGUMENTS to my diary\n")
    assert hook("UserPromptSubmit", typed(payload, "/record a done x")).out == ""
    assert job.ledger() == []
    assert answered(hook("UserPromptSubmit", typed(payload, "/brief"))).startswith("baton brief:\nPLAN: a, b")


def test_a_command_answered_without_a_model_marks_its_session(hook: Hook, job: JobDir, payload: Payloads) -> None:
    """So the report does not draw a session that only answered baton's commands as one that worked."""
    import json

    job.plan(["a", "b"])
    prompt = typed(payload, "/baton:status")
    answered(hook("UserPromptSubmit", prompt))
    events = [json.loads(line) for line in (job.state / "events.jsonl").read_text().splitlines()]
    assert [(e["kind"], e["event"], e["session"], e["command"]) for e in events] == [
        ("session", "command", prompt["session_id"], "status")]
    hook("UserPromptSubmit", typed(payload, "please go on"))  # a prompt for the model notes nothing
    assert len((job.state / "events.jsonl").read_text().splitlines()) == 1
