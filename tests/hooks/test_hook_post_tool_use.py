"""PostToolUse and PostToolUseFailure: one compact event line per outcome, counters, alerts at
thresholds with the right hookEventName, rotation at the cap, and failures that never block."""

from __future__ import annotations

import json
import time
from typing import Any, Dict

import hookkit
import pytest
from conftest import Hook, JobDir, Payloads

from store.monitor import outcomes
from store.state.protocol import HEADER

EVENT_KEYS = {"ts", "session", "agent", "step", "tool", "target", "ok", "error", "changed"}


def post_write(payload: Payloads, path: str, name: str = "post_tool_use_write") -> Dict[str, Any]:
    data = payload(name)
    data["tool_input"]["file_path"] = path
    data["tool_response"]["filePath"] = path
    return data


def post_bash(payload: Payloads, command: str) -> Dict[str, Any]:
    data = payload("post_tool_use_bash")
    data["tool_input"]["command"] = command
    return data


def failure(payload: Payloads, command: str = "pytest -q", error: str = "Exit code 1\nFAILED test_x") -> Dict[str, Any]:
    return payload("post_tool_use_failure_bash", tool_input={"command": command, "description": "tests"},
                   error=error)


def test_one_compact_line_per_outcome(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build", "ship"])
    hook("PostToolUse", payload("post_tool_use_write"))
    hook("PostToolUse", payload("post_tool_use_edit"))
    hook("PostToolUse", payload("post_tool_use_bash"))
    hook("PostToolUseFailure", payload("post_tool_use_failure_bash"))
    hook("PostToolUse", payload("post_tool_use_write_subagent"))
    raw = job.layout.events.read_bytes()
    assert raw.isascii() and b", " not in raw and b'": ' not in raw  # compact separators
    events = job.events()
    assert [set(e) for e in events] == [EVENT_KEYS] * 5
    write, edit, ok_bash, failed, sub = events
    assert (write["tool"], write["target"], write["ok"], write["error"], write["changed"]) == (
        "Write", "a.txt", True, "", ["a.txt"])
    assert (edit["tool"], edit["target"], edit["changed"]) == ("Edit", "a.txt", ["a.txt"])
    assert (ok_bash["tool"], ok_bash["target"], ok_bash["ok"], ok_bash["changed"]) == (
        "Bash", "echo out; echo err >&2", True, [])
    assert (failed["ok"], failed["error"], failed["changed"]) == (False, "Exit code 3", [])
    assert failed["target"] == "echo failing; echo bad >&2; exit 3"
    assert {e["session"] for e in events} == {hookkit.SESSION}
    assert {e["step"] for e in events} == {"build"}
    assert [e["agent"] for e in events] == ["", "", "", "", "ab93c1d7e5f24a60"]
    assert (sub["target"], sub["changed"]) == ("src/sub.txt", ["src/sub.txt"])


def test_bash_writes_are_counted_as_changed_files(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build"])
    (job.project / "src").mkdir()
    hook("PostToolUse", post_bash(payload, "echo x > src/a.txt && cp src/a.txt src/b.txt"))
    (event,) = job.events()
    assert event["changed"] == ["src/a.txt", "src/b.txt"]
    assert job.counters()["changed"] == ["src/a.txt", "src/b.txt"]
    assert job.counters()["changed_count"] == 2


def test_long_commands_and_errors_are_cut(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build"])
    inproc("PostToolUseFailure", failure(payload, "echo " + "word " * 500, "\n\n  " + "E" * 5000 + "\nsecond"))
    (event,) = job.events()
    assert len(event["target"]) <= 80 and event["target"].startswith("echo word word")
    assert event["error"] == "E" * 160
    assert len(job.layout.events.read_bytes()) < 600


def test_outside_the_project_the_target_stays_absolute(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build"])
    inproc("PostToolUse", post_write(payload, "/tmp/elsewhere.txt"))
    assert job.events()[0]["target"] == "/tmp/elsewhere.txt"


def test_counters_count_and_reset_on_a_record(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build", "ship"])
    hook("PostToolUse", payload("post_tool_use_write"))
    hook("PostToolUseFailure", failure(payload))
    hook("PostToolUseFailure", failure(payload))
    c = job.counters()
    assert (c["total_calls"], c["calls_since_record"], c["failures_since_record"], c["consecutive_failures"]) == (
        3, 3, 2, 2)
    hook("PostToolUse", payload("post_tool_use_bash"))
    assert job.counters()["consecutive_failures"] == 0
    job.record("build", "done", "built")
    hook("PostToolUse", payload("post_tool_use_edit"))
    c = job.counters()
    assert (c["total_calls"], c["calls_since_record"], c["failures_since_record"], c["step"]) == (5, 1, 0, "ship")
    assert c["changed"] == ["a.txt"]


def test_nothing_is_recorded_without_a_plan(hook: Hook, job: JobDir, payload: Payloads) -> None:
    assert hook("PostToolUse", payload("post_tool_use_write")).out == ""
    assert not job.state.exists()


def test_calls_without_record_alert_reaches_the_model(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"calls_without_record": 3}, "steps": ["build", "ship"]})
    assert hook("PostToolUse", payload("post_tool_use_write")).out == ""
    assert hook("PostToolUse", payload("post_tool_use_bash")).out == ""
    third = hook("PostToolUse", payload("post_tool_use_edit"))
    assert third.answer is not None and third.answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert third.context == ('baton: 3 tool calls since the last recorded step. If build is done, record it now: '
                             'baton record build done "<what you produced>"')
    assert hook("PostToolUse", payload("post_tool_use_bash")).out == ""
    assert hook("PostToolUse", payload("post_tool_use_bash")).out == ""
    sixth = hook("PostToolUseFailure", failure(payload))  # the sixth call is a failure: its own event name
    assert sixth.answer is not None and sixth.answer["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert "6 tool calls since the last recorded step" in sixth.context


def test_calls_without_record_defaults_to_25(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build"])
    for _ in range(24):
        assert inproc("PostToolUse", payload("post_tool_use_bash")).out == ""
    assert "25 tool calls since the last recorded step" in inproc("PostToolUse", payload("post_tool_use_bash")).context
    job.record("build", "running", "started")
    for _ in range(24):
        assert inproc("PostToolUse", payload("post_tool_use_bash")).out == ""


def test_three_identical_failures_in_a_row_raise_an_alert(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build"])
    assert hook("PostToolUseFailure", failure(payload)).out == ""
    assert hook("PostToolUseFailure", failure(payload)).out == ""
    third = hook("PostToolUseFailure", failure(payload))
    assert third.answer is not None
    assert third.answer["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert third.context == ("baton: the same Bash call failed 3 times in a row (pytest -q: Exit code 1). Do not "
                             "retry it unchanged: read the error, change approach, or record the step failed.")


def test_different_or_interrupted_failures_do_not_alert(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build"])
    hook("PostToolUseFailure", failure(payload))
    hook("PostToolUseFailure", failure(payload))
    assert hook("PostToolUseFailure", failure(payload, "pytest -q -x")).out == ""  # another call
    hook("PostToolUseFailure", failure(payload, "pytest -q -x"))
    hook("PostToolUse", payload("post_tool_use_bash"))  # a success breaks the run
    assert hook("PostToolUseFailure", failure(payload, "pytest -q -x")).out == ""
    assert hook("PostToolUseFailure", failure(payload, "pytest -q -x", "Exit code 2\nother")).out == ""


def test_repeated_failures_threshold_comes_from_the_plan(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"repeated_failures": 2}, "steps": ["build"]})
    assert inproc("PostToolUseFailure", failure(payload)).out == ""
    assert "failed 2 times in a row" in inproc("PostToolUseFailure", failure(payload)).context
    assert inproc("PostToolUseFailure", failure(payload)).out == ""
    assert "failed 4 times in a row" in inproc("PostToolUseFailure", failure(payload)).context


def test_changed_files_over_the_limit_alert(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"changed_files": 1}, "steps": ["build"]})
    assert inproc("PostToolUse", post_write(payload, job.path("a.txt"))).out == ""
    over = inproc("PostToolUse", post_write(payload, job.path("b.txt")))
    assert over.context == ("baton: step build has changed 2 files, over the job's limit of 1; further writes are "
                            "refused until the step is recorded.")


def test_the_events_file_rotates_at_its_cap(inproc: Hook, job: JobDir, payload: Payloads,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outcomes, "EVENTS_CAP", 1000)
    job.plan(["build"])
    for i in range(40):
        inproc("PostToolUse", post_write(payload, job.path(f"f{i:02d}.txt")))
    current, old = job.layout.events, job.layout.events.with_name("events.jsonl.1")
    assert old.exists() and old.stat().st_size > 1000
    assert current.stat().st_size <= 1000 + 400
    assert json.loads(current.read_text().splitlines()[-1])["target"] == "f39.txt"
    kept = old.read_text().splitlines() + current.read_text().splitlines()
    targets = [json.loads(line)["target"] for line in kept]
    assert targets == sorted(targets) and targets[-1] == "f39.txt"
    assert not job.layout.events.with_name("events.jsonl.2").exists()
    assert job.counters()["total_calls"] == 40


@pytest.mark.parametrize("broken", ["counters.json", "events.jsonl"])
def test_a_failure_inside_the_hook_is_logged_and_never_blocks(broken: str, hook: Hook, job: JobDir,
                                                              payload: Payloads) -> None:
    job.plan(["build", "ship"])
    job.record("build", "running", "started")
    (job.state / broken).mkdir()  # a folder where a file belongs: the hook's write fails
    for event, name in (("PostToolUse", "post_tool_use_write"), ("PostToolUseFailure", "post_tool_use_failure_bash")):
        result = hook(event, payload(name))
        assert result.code == 0 and result.out == ""  # no block, no decision, no context
    lines = [json.loads(line) for line in job.layout.errors.read_text().splitlines()]
    assert [line["hook"] for line in lines] == ["PostToolUse", "PostToolUseFailure"]
    assert all("IsADirectoryError" in line["error"] for line in lines)
    context = hook("SessionStart", payload("session_start_startup")).context
    assert "DEGRADED: baton's PostToolUseFailure hook failed 2 time(s)" in context
    assert "IsADirectoryError" in context
    brief = hook("UserPromptSubmit", payload("user_prompt_submit", prompt="/baton:brief")).reason
    # SessionStart could not note the session's start in a broken events file either: a third failure
    latest, count = ("SessionStart", 3) if broken == "events.jsonl" else ("PostToolUseFailure", 2)
    assert f"DEGRADED: baton's {latest} hook failed {count} time(s)" in brief


def test_degraded_clears_once_a_later_record_lands(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build", "ship"])
    (job.state / "counters.json").mkdir()
    inproc("PostToolUse", payload("post_tool_use_write"))
    assert "DEGRADED" in inproc("SessionStart", payload("session_start_startup")).context
    (job.state / "counters.json").rmdir()
    time.sleep(1.1)  # timestamps have one-second resolution
    job.record("build", "done", "fixed")
    assert "DEGRADED" not in inproc("SessionStart", payload("session_start_startup")).context.split(HEADER)[1]


def test_the_cli_brief_says_degraded_too(baton: Any, inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["build"])
    (job.state / "counters.json").mkdir()
    inproc("PostToolUse", payload("post_tool_use_write"))
    run = baton("brief")
    assert run.code == 0 and "DEGRADED: baton's PostToolUse hook failed 1 time(s)" in run.out
