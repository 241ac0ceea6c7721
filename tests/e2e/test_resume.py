"""A job outlives its sessions: a killed session's successor starts from the brief, and a resumed or
compacted session is handed the current brief again.

The scripted model works through the Bash tool and `baton record`, as the resume protocol tells
it to; each test checks what the next session's model was shown (the request bodies), the files,
and the ledger (`steps.jsonl`, `baton verify`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store.state.protocol import session_context

from .briefs import SUMMARY, Run, bash, conversation, first_message_with, injected, is_compaction, write
from .driver import Claude, kill_while_hanging
from .fakeapi import HANG, FakeAPI, text, tool_results
from .jobstate import baton, ledger

ALL_DONE = "(all steps complete - stop)"


def init_job(plugin: Path, project: Path, claude: Claude, *steps: str) -> None:
    made = baton(plugin, project, claude.home, "init", *steps)
    assert made.returncode == 0, made.stderr


def person_records(plugin: Path, project: Path, claude: Claude, *args: str) -> None:
    """`baton record ...` typed in a terminal, outside any session."""
    done = baton(plugin, project, claude.home, "record", *args)
    assert done.returncode == 0, done.stderr


def statuses(project: Path) -> list[tuple[str, str]]:
    return [(r["step"], r["status"]) for r in ledger(project)]


def verify(plugin: Path, project: Path, claude: Claude) -> str:
    checked = baton(plugin, project, claude.home, "verify")
    assert checked.returncode == 0, checked.stderr
    return checked.stdout


def test_a_killed_job_goes_on_in_a_brand_new_session_from_its_brief(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    init_job(plugin_copy, project, claude, "a", "b", "c", "d")
    fake_api.script = Run(  # one turn per step: the work and its record chained, as models write them
        [text("step a"), bash('echo A > a.txt && baton record a done "wrote a.txt"')],
        [text("step b"), bash('cd src; echo B > ../b.txt; baton record b done "wrote b.txt"')],
        HANG,
    )
    (project / "src").mkdir()
    kill_while_hanging(claude, fake_api, project, plugin_copy)

    hung = fake_api.requests_main()[-1]  # what session one's model last saw, before it died
    assert tool_results(hung)[-1].text == "recorded b done (attempt 1, #2); NEXT: c"
    assert statuses(project) == [("a", "done"), ("b", "done")]
    first_session = {r["session"] for r in ledger(project)}
    plan_bytes = (project / ".baton/plan.json").stat().st_size
    ledger_bytes = (project / ".baton/steps.jsonl").stat().st_size
    brief_then = baton(plugin_copy, project, claude.home, "brief").stdout.strip()

    mark = len(fake_api.log)
    fake_api.script = Run(
        [text("step c"), bash('baton brief >/dev/null && echo C > c.txt && baton record c done "wrote c.txt"')],
        [text("step d"), write(project / "d.txt", "D\n"), bash('baton record d done "wrote d.txt"'),
         bash("test -f d.txt && baton brief")],
        [text("the job is complete")],
    )
    run = claude.run("continue the job", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    assert run.session_id not in first_session
    requests = conversation(fake_api, mark)
    first = requests[0]
    assert [m["role"] for m in first["messages"]] == ["user", "system"]  # a new conversation
    [context] = injected(first)
    assert context.text == session_context(brief_then)  # the resume protocol, then the brief, intact
    assert context.line("PLAN: ") == "a, b, c, d"
    assert context.line("DONE: ") == "a, b"
    assert context.line("NEXT: ") == "c"
    assert context.line("LAST: ") == "b done wrote b.txt"
    assert tool_results(requests[-1])[-1].text.splitlines()[2] == f"NEXT: {ALL_DONE}"
    assert run.result == "the job is complete"

    for name in "abcd":
        assert (project / f"{name}.txt").read_text() == f"{name.upper()}\n"
    assert statuses(project) == [("a", "done"), ("b", "done"), ("c", "done"), ("d", "done")]
    assert {r["session"] for r in ledger(project)[2:]} == {run.session_id}
    final = baton(plugin_copy, project, claude.home, "brief").stdout
    assert f"NEXT: {ALL_DONE}" in final.splitlines()
    assert verify(plugin_copy, project, claude).startswith("ok: 4 records, chain intact")

    metrics = {
        "injected_context_chars": len(context.text),
        "brief_chars": len(brief_then),
        "first_request_json_bytes": len(json.dumps(first)),
        "plan_json_bytes": plan_bytes,
        "steps_jsonl_bytes": ledger_bytes,
        "ledger_records": 2,
    }
    (tmp_path / "e2e-metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"E2E-METRIC resumed session's first request: {json.dumps(metrics)}")


def test_a_session_killed_between_its_side_effect_and_its_record_leaves_the_step_flagged(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    init_job(plugin_copy, project, claude, "a", "b", "c", "d")
    person_records(plugin_copy, project, claude, "a", "done", "by hand")
    person_records(plugin_copy, project, claude, "b", "done", "by hand")
    fake_api.script = Run(
        [bash('baton record c running "about to write c" && echo C > c.txt')],
        HANG,  # the session dies before `baton record c done`
    )
    kill_while_hanging(claude, fake_api, project, plugin_copy)

    assert (project / "c.txt").read_text() == "C\n"
    *_, running = ledger(project)
    assert (running["step"], running["status"], running["note"]) == ("c", "running", "about to write c")

    mark = len(fake_api.log)
    fake_api.script = Run(
        [bash("cat c.txt")],
        [bash('test -f c.txt && baton record c done "c.txt from the killed session checked and kept"'),
         bash('echo D > d.txt; baton record d done "wrote d.txt"')],
        [text("the job is complete")],
    )
    run = claude.run("continue the job", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    first, second, *_ = conversation(fake_api, mark)
    [context] = injected(first)
    assert context.line("NEXT: ") == "c"
    flagged = context.line("LEFT RUNNING: ")
    assert flagged is not None, context.text
    assert flagged.startswith(f"c was started by session {running['session'][:8]} at {running['ts']}")
    assert flagged.endswith("verify its effects before redoing it")
    assert tool_results(second)[-1].text == "C"  # the model looked before redoing

    assert statuses(project)[2:] == [("c", "running"), ("c", "done"), ("d", "done")]
    assert verify(plugin_copy, project, claude).startswith("ok: 5 records, chain intact")
    after = baton(plugin_copy, project, claude.home, "brief").stdout
    assert "LEFT RUNNING" not in after and f"NEXT: {ALL_DONE}" in after


def nexts(request: dict[str, Any]) -> list[str | None]:
    """The NEXT step of each SessionStart context in `request`, in order."""
    return [context.line("NEXT: ") for context in injected(request)]


def test_resume_hands_the_session_the_current_brief_after_its_new_prompt(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    init_job(plugin_copy, project, claude, "a", "b", "c", "d")
    fake_api.script = Run(
        [text("step a"), write(project / "a.txt", "A\n"), bash('baton record a done "wrote a.txt"')],
        [text("pausing here")],
    )
    started = claude.run("FIRST-PROMPT", cwd=project, plugin_dir=plugin_copy)
    assert started.returncode == 0, started.stderr
    assert ("a", "done") in statuses(project)

    mark = len(fake_api.log)
    fake_api.script = Run([text("resumed")])
    resumed = claude.run("RESUME-PROMPT", cwd=project, plugin_dir=plugin_copy, resume=started.session_id)

    assert resumed.returncode == 0, resumed.stderr
    assert resumed.session_id == started.session_id
    first = conversation(fake_api, mark)[0]
    old, new = injected(first)
    assert old.line("NEXT: ") == "a"  # the startup brief stays in the history
    assert first_message_with(first, "FIRST-PROMPT") < old.message < first_message_with(first, "RESUME-PROMPT")
    assert new.message > first_message_with(first, "RESUME-PROMPT")
    assert (new.line("DONE: "), new.line("NEXT: ")) == ("a", "b")


def test_compaction_keeps_the_brief_in_front_of_the_model(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    init_job(plugin_copy, project, claude, "a", "b", "c", "d")
    fake_api.script = Run([text("looking around")])
    started = claude.run("FIRST-PROMPT", cwd=project, plugin_dir=plugin_copy)
    assert started.returncode == 0, started.stderr
    person_records(plugin_copy, project, claude, "a", "done", "by hand")

    mark = len(fake_api.log)
    compacted = claude.run("/compact", cwd=project, plugin_dir=plugin_copy, resume=started.session_id)
    assert compacted.returncode == 0, compacted.stderr
    summaries = [e.body for e in fake_api.log[mark:] if e.kind == "main" and is_compaction(e.body)]
    assert summaries, "the CLI sent no compaction request"
    assert conversation(fake_api, mark) == []  # /compact alone asks the model nothing else

    person_records(plugin_copy, project, claude, "b", "done", "by hand")
    mark = len(fake_api.log)
    fake_api.script = Run([text("after compaction")])
    after = claude.run("AFTER-COMPACT", cwd=project, plugin_dir=plugin_copy, resume=started.session_id)

    assert after.returncode == 0, after.stderr
    first = conversation(fake_api, mark)[0]
    assert first_message_with(first, SUMMARY) >= 0
    assert first_message_with(first, "FIRST-PROMPT") < 0  # the old history, and its brief, are gone
    # What is left: SessionStart(compact) at the compaction (NEXT: b; the CLI may also keep the
    # /compact run's SessionStart(resume) before it, NEXT: b too), then SessionStart(resume) of
    # this run (NEXT: c).
    assert nexts(first)[-2:] == ["b", "c"] and set(nexts(first)[:-2]) <= {"b"}
    assert injected(first)[-1].message > first_message_with(first, "AFTER-COMPACT")
