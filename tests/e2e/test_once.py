"""A side effect run through `baton once` is not repeated by the session that resumes a killed job,
and a DONE step whose artifact vanished between sessions is reported CHANGED.

The scripted model behaves like a model that forgot: in the fresh session, told only "Go on.", it
runs the side effect again, bare and then wrapped. The test checks the side effect's own counter,
what the fresh session's first request showed (the brief injected at SessionStart), and what each
tool call answered.
"""

from __future__ import annotations

import time
from pathlib import Path

from .briefs import Run, bash, conversation, injected, write
from .driver import Claude, kill_group, kill_while_hanging
from .fakeapi import HANG, FakeAPI, text, tool_results
from .jobstate import baton, gate_denied, ledger, results_by_id, write_plan
from .processes import tagged_gone

PLAN = {"effects": ["./notify.sh*"], "steps": [{"id": "deliver", "title": "tell the team"}, "report"]}
NOTIFY = "#!/bin/sh\necho \"$1\" >> sent.txt\nsleep \"${2:-0}\"\necho \"sent message id=4711\"\n"
ONCE = "baton once notify-team --id-from 'id=(\\d+)' -- ./notify.sh team"


def job(project: Path, sleep: str = "0") -> None:
    write_plan(project, PLAN)
    script = project / "notify.sh"
    script.write_text(NOTIFY.replace('"${2:-0}"', sleep))
    script.chmod(0o755)


def sent(project: Path) -> list[str]:
    path = project / "sent.txt"
    return path.read_text().splitlines() if path.exists() else []


def the_model_tries_again() -> Run:
    """A fresh session's model that repeats the side effect, bare and then through baton once."""
    return Run(
        [text("picking up"), bash("./notify.sh team")],
        [bash(ONCE)],
        [text("the team was told before; moving on")],
    )


def test_a_side_effect_done_before_the_kill_is_replayed_not_repeated(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    job(project)
    fake_api.script = Run([text("notifying"), bash(ONCE)], HANG)
    kill_while_hanging(claude, fake_api, project, plugin_copy)
    assert sent(project) == ["team"]
    assert [(r["status"], r.get("id")) for r in ledger(project)] == [("intent", None), ("result", "4711")]

    mark = len(fake_api.log)
    fake_api.script = the_model_tries_again()
    run = claude.run("Go on.", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    assert sent(project) == ["team"]  # not sent twice
    first, second, third, *_ = conversation(fake_api, mark)
    [context] = injected(first)
    ran = context.line("ONCE: ")
    assert ran is not None, context.text
    assert ran.startswith("notify-team (deliver) ran at ") and "exit 0, id 4711" in ran
    bare = tool_results(second)[-1]
    assert gate_denied(bare) and bare.text.endswith("[baton:once]"), bare.text
    assert "Run it as: baton once deliver-notify-sh-team -- ./notify.sh team" in bare.text
    replayed = tool_results(third)[-1]
    assert "sent message id=4711" in replayed.text and "Not run again" in replayed.text, replayed.text
    assert [r["status"] for r in ledger(project) if "key" in r] == ["intent", "result"]


def test_a_session_killed_while_its_side_effect_ran_leaves_it_unknown(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    job(project, sleep="60")
    fake_api.script = Run([text("notifying"), bash(ONCE)], HANG)
    proc = claude.start("run the job", cwd=project, plugin_dir=plugin_copy)
    try:
        deadline = time.monotonic() + 60
        while not sent(project):  # the side effect is under way: kill everything now
            assert time.monotonic() < deadline, "the side effect never started"
            time.sleep(0.05)
    finally:
        kill_group(proc)
        proc.communicate(timeout=10)
        claude.kill_all()
    assert tagged_gone(claude.tag)
    assert [r["status"] for r in ledger(project)] == ["intent"]

    mark = len(fake_api.log)
    fake_api.script = Run(
        [text("picking up"), bash(ONCE)],
        [bash('baton once --settle notify-team done "sent.txt has the message for the team"')],
        [text("settled")],
    )
    run = claude.run("Go on.", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    assert sent(project) == ["team"]
    first, second, third, *_ = conversation(fake_api, mark)
    [context] = injected(first)
    unknown = context.line("UNKNOWN: ")
    assert unknown is not None, context.text
    assert unknown.startswith("notify-team (deliver) started ") and unknown.endswith(
        'verify, then settle: baton once --settle notify-team done|failed|retry "<evidence>"')
    refused = tool_results(second)[-1]
    assert refused.is_error and "outcome unknown" in refused.text and "Exit code 3" in refused.text, refused.text
    assert "settled once notify-team done" in tool_results(third)[-1].text
    assert [r["status"] for r in ledger(project) if "key" in r] == ["intent", "result"]
    assert "UNKNOWN" not in baton(plugin_copy, project, claude.home, "brief").stdout


def test_an_artifact_deleted_between_sessions_is_reported_changed(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": [{"id": "build", "artifacts": ["dist/app.txt"]}, "ship"]})
    fake_api.script = Run(
        [text("building"), write(project / "dist" / "app.txt", "the app\n"),
         bash('baton record build done "dist/app.txt built"')],
        HANG,
    )
    kill_while_hanging(claude, fake_api, project, plugin_copy)
    [done] = ledger(project)
    assert done["status"] == "done" and done["artifacts"][0]["path"] == "dist/app.txt"

    (project / "dist" / "app.txt").unlink()  # between the sessions
    mark = len(fake_api.log)
    fake_api.script = Run([text("checking")])
    run = claude.run("Go on.", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    [context] = injected(conversation(fake_api, mark)[0])
    assert context.line("NEXT: ") == "ship"
    changed = context.line("CHANGED: ")
    assert changed is not None, context.text
    assert changed.startswith("build: dist/app.txt is missing: do not trust it")


def test_a_model_cannot_record_done_without_the_declared_artifact(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": [{"id": "build", "artifacts": ["dist/app.txt"]}, "ship"]})
    fake_api.script = Run([bash('baton record build done "built, I think"')], [text("oh")])
    run = claude.run("do the job", cwd=project, plugin_dir=plugin_copy)
    assert run.returncode == 0, run.stderr
    refused = results_by_id(fake_api.requests_main()[1])
    [result] = refused.values()
    assert result.is_error and "step build must produce dist/app.txt" in result.text
    assert [r["status"] for r in ledger(project) if r["status"] != "stop"] == []


def test_under_the_default_rules_baton_once_runs_where_its_command_would(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    """No rule allows ``baton once`` itself: Claude Code in its default mode, the person's only rule
    ``Bash(./notify.sh:*)``. A read-only command and the allowed notify.sh run through ``baton once``
    without a refusal; one no rule covers asks, which ``-p`` (no person to ask) answers as a refusal."""
    job(project)
    fake_api.script = Run([bash("baton once list-files -- ls"), bash(ONCE), bash("baton once mark -- touch made.txt")],
                          [text("done")])
    run = claude.run("deliver", cwd=project, plugin_dir=plugin_copy,
                     permissions=("--permission-mode", "default", "--allowedTools", "Bash(./notify.sh:*)"))
    assert run.returncode == 0, run.stderr
    listed, told, marked = tool_results(fake_api.requests_main()[1])
    assert not listed.is_error and "notify.sh" in listed.text, listed.text
    assert not told.is_error and "sent message id=4711" in told.text, told.text
    assert marked.is_error and "`baton once mark -- touch made.txt`" in marked.text, marked.text
    assert sent(project) == ["team"] and not (project / "made.txt").exists()
    assert [(r["status"], r["key"]) for r in ledger(project) if "key" in r] == [
        ("intent", "list-files"), ("result", "list-files"), ("intent", "notify-team"), ("result", "notify-team")]
