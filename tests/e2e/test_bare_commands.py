"""The card's `/brief` and `/record`, in `claude -p`: after `baton init a b --commands` they are
answered by baton's prompt hook with no model call, exactly like `/baton:brief` and
`/baton:record`; a person's own `/record` is never taken over; without baton's hooks, the
command file's text tells the model that they are not running.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .driver import Claude, RunResult
from .fakeapi import FakeAPI, all_text_of, text
from .jobstate import Turns, baton, ledger

STOPPED = "Operation stopped by hook: "
NOTE = 'wrote it; "quoted" $(touch PWNED) `touch PWNED2`'


def no_model_call(claude: Claude, fake_api: FakeAPI, project: Path, plugin: Path, prompt: str) -> str:
    before = len(fake_api.log)
    run: RunResult = claude.run(prompt, cwd=project, plugin_dir=plugin)
    assert run.returncode == 0, run.stderr
    assert fake_api.log[before:] == [], f"{prompt!r} reached the API"
    assert run.output is not None and run.output["num_turns"] == 0
    assert run.result.startswith(STOPPED), run.result
    return run.result[len(STOPPED):]


def test_init_commands_gives_brief_and_record_without_a_model_call(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    made = baton(plugin_copy, project, claude.home, "init", "a", "b", "--commands")
    assert made.returncode == 0, made.stderr
    assert f"{project / '.claude' / 'commands' / 'record.md'}: installed" in made.stdout

    recorded = no_model_call(claude, fake_api, project, plugin_copy, "/record a done wrote it")
    noted = no_model_call(claude, fake_api, project, plugin_copy, f"/record b running {NOTE}")
    brief = no_model_call(claude, fake_api, project, plugin_copy, "/brief")

    assert recorded == "baton: recorded a done (attempt 1, #1); NEXT: b"
    assert noted == "baton: recorded b running (attempt 1, #2); NEXT: b"
    assert [(r["step"], r["status"], r["note"], r["via"]) for r in ledger(project)] == [
        ("a", "done", "wrote it", "/record typed in the prompt"),
        ("b", "running", NOTE, "/record typed in the prompt")]
    assert brief.splitlines()[:4] == ["baton brief:", "PLAN: a, b", "DONE: a", "NEXT: b"]
    assert sorted(tmp_path.rglob("PWNED*")) == []


def test_a_persons_own_record_command_is_left_to_the_model(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    assert baton(plugin_copy, project, claude.home, "init", "a", "b", "--commands").returncode == 0
    mine = claude.home / ".claude" / "commands"
    mine.mkdir(parents=True)
    (mine / "record.md").write_text("---\ndescription: my diary\n---\nMY-DIARY-COMMAND: $ARGUMENTS\n")
    fake_api.script = Turns([text("noted in your diary")])

    run = claude.run("/record lunch was good", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    assert "MY-DIARY-COMMAND: lunch was good" in all_text_of(fake_api.requests_main()[0])
    assert [r for r in ledger(project) if r["status"] != "stop"] == []


def test_after_remove_the_bare_names_are_not_batons(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    assert baton(plugin_copy, project, claude.home, "init", "a", "--commands").returncode == 0
    removed = baton(plugin_copy, project, claude.home, "commands", "remove")
    assert removed.stdout.count(": removed") == 2, removed.stdout
    fake_api.script = Turns([text("no such command here")])

    run = claude.run("/record a done x", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    first = all_text_of(fake_api.requests_main()[0])  # Claude Code's own handling: the prompt reached the model
    assert "/record a done x" in first and "no command with that name" in first
    assert [r for r in ledger(project) if r["status"] != "stop"] == []


def test_without_batons_hooks_the_file_tells_the_model_so(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    assert baton(plugin_copy, project, claude.home, "init", "a", "--commands").returncode == 0
    shutil.rmtree(plugin_copy / "hooks")  # the plugin loads, its hooks do not run
    fake_api.script = Turns([text("baton's hooks are not running")])

    run = claude.run("/record a done x", cwd=project, plugin_dir=plugin_copy)

    assert run.result == "baton's hooks are not running"  # and no Stop hook either
    seen = all_text_of(fake_api.requests_main()[0])
    assert "baton's prompt hook normally answers /record itself" in seen and "NOTHING was recorded" in seen
    assert ledger(project) == []
