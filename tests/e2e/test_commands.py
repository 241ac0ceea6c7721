"""`/baton:brief`, `/baton:record` and `/baton:status` typed by a person in `-p` mode.

baton's UserPromptSubmit hook answers them itself: the fake API must see no request at all, and
the CLI's result is the hook's text after the CLI's fixed "Operation stopped by hook: ". Arguments never
reach a shell: notes full of quotes, `;`, `$(...)` and backquotes land in the ledger verbatim and
nothing they name is executed.
"""

from __future__ import annotations

import json
from pathlib import Path

from .driver import Claude, RunResult
from .fakeapi import FakeAPI
from .jobstate import baton, ledger

STOPPED = "Operation stopped by hook: "


def answered_by_baton(claude: Claude, fake_api: FakeAPI, project: Path, plugin: Path, prompt: str) -> str:
    """Run `prompt` as a `-p` session; assert no model call was made; return baton's answer."""
    before = len(fake_api.log)
    run: RunResult = claude.run(prompt, cwd=project, plugin_dir=plugin)
    assert run.returncode == 0, run.stderr
    assert fake_api.log[before:] == [], f"{prompt!r} reached the API"
    assert run.output is not None and run.output["num_turns"] == 0
    assert run.result.startswith(STOPPED), run.result
    return run.result[len(STOPPED):]


def job(plugin: Path, project: Path, claude: Claude) -> None:
    for args in (("init", "a", "b", "c", "d"), ("record", "a", "done", "first step by hand")):
        made = baton(plugin, project, claude.home, *args)
        assert made.returncode == 0, made.stderr


def test_brief_command_prints_the_brief_without_a_model_call(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    job(plugin_copy, project, claude)

    answer = answered_by_baton(claude, fake_api, project, plugin_copy, "/baton:brief")

    assert answer.splitlines() == [
        "baton brief:",
        "PLAN: a, b, c, d",
        "DONE: a",
        "NEXT: b",
        "LAST: a done first step by hand",
    ]
    assert answer == "baton brief:\n" + baton(plugin_copy, project, claude.home, "brief").stdout.strip()


def test_record_command_keeps_the_note_verbatim_and_runs_none_of_it(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    job(plugin_copy, project, claude)
    notes = {
        "b": 'note with "quotes"; and $(dollars)',
        "c": 'x"; touch PWNED; echo "',
        "d": "$(touch PWNED_SUBST) `touch PWNED_TICK`; touch PWNED_SEMI",
    }
    prompts = [
        f"/baton:record b done {notes['b']}",
        f"/baton:record c running {notes['c']}",
        f"/baton:record d failed {notes['d']}",
    ]

    answers = [answered_by_baton(claude, fake_api, project, plugin_copy, p) for p in prompts]

    assert answers == [
        "baton: recorded b done (attempt 1, #2); NEXT: c",
        "baton: recorded c running (attempt 1, #3); NEXT: c",
        "baton: recorded d failed (attempt 1, #4); NEXT: c",
    ]
    recorded = ledger(project)[1:]
    assert [(r["step"], r["status"], r["note"]) for r in recorded] == [
        ("b", "done", notes["b"]),
        ("c", "running", notes["c"]),
        ("d", "failed", notes["d"]),
    ]
    assert all(r["session"] for r in recorded)  # stamped with the session that typed it
    assert sorted(tmp_path.rglob("PWNED*")) == []  # project, HOME, plugin copy: nothing was run
    verified = baton(plugin_copy, project, claude.home, "verify")
    assert verified.returncode == 0 and verified.stdout.startswith("ok: 4 records"), verified


def test_record_command_refuses_bad_input_with_one_line_and_records_nothing(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    job(plugin_copy, project, claude)

    unknown = answered_by_baton(claude, fake_api, project, plugin_copy, "/baton:record zz done x")
    usage = answered_by_baton(claude, fake_api, project, plugin_copy, "/baton:record b")
    status = answered_by_baton(claude, fake_api, project, plugin_copy, "/baton:record b finished x")

    assert unknown == "baton: unknown step 'zz'; valid steps: a, b, c, d"
    assert usage.startswith("baton: usage: /baton:record STEP STATUS [NOTE]")
    assert status.startswith("baton: unknown status 'finished'")
    assert len(ledger(project)) == 1


def test_status_command_shows_progress_without_a_model_call(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    job(plugin_copy, project, claude)
    answered_by_baton(claude, fake_api, project, plugin_copy, "/baton:record b running started")

    answer = answered_by_baton(claude, fake_api, project, plugin_copy, "/baton:status")

    lines = answer.splitlines()
    assert lines[0] == "baton status:"
    assert lines[1] == f"job {project.name}  [#####---------------]  1/4 steps, 1 running"
    assert lines[2].startswith("next   b, attempt 1")
    steps = lines[lines.index("") + 2:lines.index("last records:") - 1]
    assert [line.split()[:3] for line in steps] == [
        ["a", "done", "1"], [">", "b", "running"], ["c", "pending", "0"], ["d", "pending", "0"],
    ]
    assert any(line.startswith("seen   2 sessions") for line in lines), "the /baton:record run, and this one"


def test_status_json_and_an_upper_case_status_in_the_prompt(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    job(plugin_copy, project, claude)

    recorded = answered_by_baton(claude, fake_api, project, plugin_copy, "/baton:record b DONE by hand")
    as_json = answered_by_baton(claude, fake_api, project, plugin_copy, "/baton:status --json")
    brief = answered_by_baton(claude, fake_api, project, plugin_copy, "/baton:brief --json")

    assert recorded == "baton: recorded b done (attempt 1, #2); NEXT: c"
    data = json.loads(as_json)
    assert (data["done"], data["next"], data["records"]) == (2, "c", 2)
    assert json.loads(brief)["next"] == "c" and json.loads(brief)["complete"] is False
    assert [(r["step"], r["status"], r["note"]) for r in ledger(project)][1] == ("b", "done", "by hand")
