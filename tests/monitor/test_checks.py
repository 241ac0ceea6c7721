"""check_after_write's checks, run for real: the built-in ones (stdlib only), a plan's own command
with the file's path quoted, the time limit, the first lines kept, and the failing files of a step
checked again when it is recorded done."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict

import pytest

from store.monitor import checks
from store.monitor.outcomes import read_counters
from store.plan.plan import parse_plan
from store.state.location import Layout

GOOD: Dict[str, str] = {
    "a.py": "def f(x):\n    return x + 1\n",
    "a.json": '{"a": [1, 2]}\n',
    "a.toml": "[tool]\nname = 'x'\n",
    "a.sh": "for i in 1 2; do echo $i; done\n",
    "a.ipynb": json.dumps({"cells": [{"cell_type": "code", "source": ["x = 1"]}], "nbformat": 4}),
}
BAD: Dict[str, tuple[str, str]] = {
    "a.py": ("def f(x:\n    return x\n", "SyntaxError"),
    "a.json": ('{"a": [1, 2}\n', "Expecting"),
    "a.toml": ("[tool\nname = 'x'\n", "TOMLDecodeError"),
    "a.sh": ("for i in 1 2; do echo $i\n", "syntax error"),
    "a.ipynb": (json.dumps({"cells": "nope"}), "not a notebook"),
}
KIND = {".py": "python", ".json": "json", ".toml": "toml", ".sh": "shell", ".ipynb": "notebook"}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_built_in_checks_pass_good_files(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(GOOD[name])
    outcome = checks.run_check(KIND[path.suffix], 10, str(path), str(tmp_path))
    assert outcome.ok, outcome.output


@pytest.mark.parametrize("name", sorted(BAD))
def test_built_in_checks_fail_bad_files_with_the_first_lines(name: str, tmp_path: Path) -> None:
    if name.endswith(".toml") and sys.version_info < (3, 11):
        pytest.skip("TOML is checked on Python 3.11+ (tomllib)")
    path = tmp_path / name
    path.write_text(BAD[name][0])
    outcome = checks.run_check(KIND[path.suffix], 10, str(path), str(tmp_path))
    assert not outcome.ok
    assert BAD[name][1] in outcome.output, outcome.output
    assert len(outcome.output.splitlines()) <= checks.MAX_LINES


def test_python_is_compiled_not_run_and_leaves_no_bytecode(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("open('ran', 'w').write('x')\n")
    assert checks.run_check("python", 10, str(path), str(tmp_path)).ok
    assert not (tmp_path / "ran").exists() and not (tmp_path / "__pycache__").exists()


def test_a_plan_command_gets_the_path_quoted(tmp_path: Path) -> None:
    odd = tmp_path / "a $(touch pwned) b.txt"
    odd.write_text("x\n")
    outcome = checks.run_check("test -s {file} && echo checked {file}", 10, str(odd), str(tmp_path))
    assert outcome.ok and not (tmp_path / "pwned").exists()
    failed = checks.run_check("echo broken: {file}; exit 3", 10, str(odd), str(tmp_path))
    assert not failed.ok and failed.output == f"broken: {odd}" and failed.check == "echo broken: {file}; exit 3"


def test_a_check_that_takes_too_long_fails(tmp_path: Path) -> None:
    outcome = checks.run_check("sleep 5", 0.5, str(tmp_path / "x"), str(tmp_path))
    assert not outcome.ok and outcome.output == "the check took longer than 0.5 s"


def plan_with_checks() -> object:
    return parse_plan({"steps": ["a"], "rules": [
        {"id": "syntax", "check_after_write": "default", "reason": "r"},
        {"id": "txt", "check_after_write": {"**/*.txt": "grep -q ok {file}"}, "reason": "r"}]})


def test_the_first_covering_glob_decides_and_failures_are_kept(tmp_path: Path) -> None:
    layout = Layout(tmp_path / ".baton", tmp_path)
    layout.root.mkdir()
    rules = plan_with_checks().rules  # type: ignore[attr-defined]
    assert checks.check_for(rules, str(tmp_path / "x.md"), str(tmp_path), "/h") is None
    assert checks.check_for(rules, str(tmp_path / "x.txt"), str(tmp_path), "/h") == ("grep -q ok {file}", 10.0, "txt")
    bad = tmp_path / "src" / "m.py"
    bad.parent.mkdir()
    bad.write_text("def (:\n")
    outcome = checks.after_write(layout, rules, str(bad), "src/m.py", "a", "/h")
    assert outcome is not None and not outcome.ok
    assert read_counters(layout)["checks"]["src/m.py"]["step"] == "a"
    assert checks.still_failing(layout, rules, "a", {"HOME": "/h"})[0][0] == "src/m.py"
    assert checks.still_failing(layout, rules, "other", {"HOME": "/h"}) == []
    bad.write_text("def f():\n    pass\n")  # fixed by any tool: the check runs again at record time
    assert checks.still_failing(layout, rules, "a", {"HOME": "/h"}) == []
    assert read_counters(layout)["checks"] == {}


def test_a_deleted_file_no_longer_fails(tmp_path: Path) -> None:
    layout = Layout(tmp_path / ".baton", tmp_path)
    layout.root.mkdir()
    rules = plan_with_checks().rules  # type: ignore[attr-defined]
    bad = tmp_path / "m.py"
    bad.write_text("def (:\n")
    checks.after_write(layout, rules, str(bad), "m.py", "a", "/h")
    bad.unlink()
    assert checks.still_failing(layout, rules, "a", {}) == []
