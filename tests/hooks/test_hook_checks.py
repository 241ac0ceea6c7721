"""check_after_write through PostToolUse (in process and as hooks.json starts it): a written file that
fails its check is told to the model through additionalContext and counted as a failed outcome;
``baton record STEP done`` is refused until every file the step changed passes again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest
from conftest import REPO, Hook, JobDir, Payloads

PLAN = {"rules": [{"id": "syntax", "check_after_write": "default", "reason": "a broken file is not done"}],
        "steps": ["build", "ship"]}


def written(payload: Payloads, job: JobDir, rel: str, text: str, tool: str = "Write") -> Dict[str, Any]:
    path = job.project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    name = {"Write": "post_tool_use_write", "Edit": "post_tool_use_edit"}[tool]
    data = payload(name)
    data["tool_input"]["file_path"] = str(path)
    data["tool_response"]["filePath"] = str(path)
    return data


def record(job: JobDir, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "bin" / "baton"), "record", *args], cwd=job.project,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_a_broken_file_is_told_and_counted_as_a_failure(tool: str, hook: Hook, job: JobDir,
                                                        payload: Payloads) -> None:
    job.plan(PLAN)
    result = hook("PostToolUse", written(payload, job, "src/app.py", "def f(:\n    pass\n", tool))
    assert result.context.startswith("baton: src/app.py fails its check (built-in python check):\n")
    assert "SyntaxError" in result.context and 'src/app.py", line 1' in result.context
    assert "baton refuses `baton record build done`" in result.context
    (event,) = job.events()
    assert event["ok"] is False and event["error"].startswith("check failed: ")
    assert job.counters()["failures_since_record"] == 1
    assert job.counters()["checks"]["src/app.py"]["step"] == "build"


def test_a_good_file_says_nothing_and_a_fix_clears_the_failure(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    assert hook("PostToolUse", written(payload, job, "data/a.json", '{"a": 1}')).out == ""
    hook("PostToolUse", written(payload, job, "data/a.json", '{"a": 1'))
    assert "data/a.json" in job.counters()["checks"]
    assert hook("PostToolUse", written(payload, job, "data/a.json", '{"a": 2}')).out == ""
    assert job.counters()["checks"] == {}
    assert [e["ok"] for e in job.events()] == [True, False, True]


def test_files_no_glob_covers_are_not_checked(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    assert hook("PostToolUse", written(payload, job, "notes.txt", "def f(:")).out == ""
    assert "checks" not in job.counters()


def test_without_the_rule_nothing_is_checked(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": ["build"]})
    assert hook("PostToolUse", written(payload, job, "src/app.py", "def f(:")).out == ""


def test_a_plan_command_runs_with_the_file(hook: Hook, job: JobDir, payload: Payloads) -> None:
    check = "grep -q OK {file} || { echo missing OK; exit 1; }"
    job.plan({"rules": [{"id": "lint", "check_after_write": {"**/*.txt": check}, "seconds": 5, "reason": "r"}],
              "steps": ["build"]})
    result = hook("PostToolUse", written(payload, job, "docs/a b.txt", "nothing here"))
    assert "docs/a b.txt fails its check (grep -q OK {file} || { echo missing OK; exit 1; }):\nmissing OK" in \
        result.context
    assert hook("PostToolUse", written(payload, job, "docs/a b.txt", "OK")).out == ""


def test_record_done_is_refused_while_a_changed_file_fails(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    inproc("PostToolUse", written(payload, job, "src/app.py", "def f(:\n"))
    refused = record(job, "build", "done", "wrote the app")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("baton: step 'build' cannot be recorded done: files it changed fail their "
                                     "check: src/app.py (built-in python check: File")
    assert job.ledger() == []
    assert record(job, "build", "failed", "left broken").returncode == 0  # other statuses are not held up
    (job.project / "src" / "app.py").write_text("def f():\n    pass\n")  # fixed by any means, checked again
    done = record(job, "build", "done", "fixed")
    assert done.returncode == 0, done.stderr
    assert [r["status"] for r in job.ledger()] == ["failed", "done"]


def test_a_notebook_must_hold_cells(hook: Hook, job: JobDir, payload: Payloads, tmp_path: Path) -> None:
    job.plan(PLAN)
    data = payload("post_tool_use_edit")
    path = job.project / "nb.ipynb"
    path.write_text(json.dumps({"cells": {}}))
    data.update(tool_name="NotebookEdit", tool_input={"notebook_path": str(path), "new_source": "x", "cell_id": "a"})
    assert "not a notebook: no list of cells" in hook("PostToolUse", data).context
