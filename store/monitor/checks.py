"""check_after_write: run a written file's check, and keep which files of a step fail theirs.

After a Write, Edit or NotebookEdit the PostToolUse hook runs the check of the first
``check_after_write`` glob that covers the file: a command of the plan (``{file}`` replaced by
the quoted path, run by ``/bin/sh`` in the project root) or a built-in one (``python``: compile,
``json``, ``toml`` on Python 3.11+, ``shell``: ``bash -n``, ``notebook``: JSON with a list of
cells), each in a child process with the rule's time limit. A check runs code the model may have
just written (a Makefile, a ``conftest.py``, a ``.venv/bin/python3``), so where baton's sandbox
runs, every command of the plan runs in it, with the step's writes, as ``validate`` does (the
caller passes the sandbox: ``store.gate.enforce.validate_sandbox``). The built-in checkers only
parse (``compile``, ``bash -n``) and run outside it, isolated (``-I``: no module of the project's
folder can shadow the standard library they import). A failure is kept in counters.json
(``checks``: path -> step and first lines) until the file passes again; ``baton record STEP done``
runs the failing files' checks again and is refused while one still fails.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from store.base import durable, paths
from store.monitor.outcomes import read_counters, save_counters
from store.plan.rules import BUILTIN_CHECKERS, checks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Sequence, Tuple

    from store.plan.rules import Rule
    from store.sandbox.bwrap_args import Policy
    from store.state.location import Layout

    Sandbox = Optional[Tuple[str, Policy]]  # (bwrap, the step's policy), None where no sandbox runs

MAX_LINES = 8
MAX_CHARS = 1200
# the built-in checkers, run with ``python3 -S -c CODE KIND FILE`` (standard library only)
CHECKER = r"""
import json, sys, traceback
kind, path = sys.argv[1], sys.argv[2]
def check():
    data = open(path, "rb").read()
    if kind == "python":
        compile(data, path, "exec", dont_inherit=True)
    elif kind == "json":
        json.loads(data.decode("utf-8"))
    elif kind == "toml":
        try:
            import tomllib
        except ImportError:
            return
        tomllib.loads(data.decode("utf-8"))
    elif kind == "notebook":
        nb = json.loads(data.decode("utf-8"))
        cells = nb.get("cells") if isinstance(nb, dict) else None
        if not isinstance(cells, list):
            sys.exit("not a notebook: no list of cells")
        for n, cell in enumerate(cells, 1):
            if not isinstance(cell, dict) or "cell_type" not in cell or not isinstance(cell.get("source"), (str, list)):
                sys.exit("cell %d has no cell_type or source" % n)
try:
    check()
except (ValueError, SyntaxError, UnicodeDecodeError, RecursionError, MemoryError, OSError) as exc:
    sys.exit("".join(traceback.format_exception_only(type(exc), exc)).strip())
"""


class Outcome:
    """One check's result: ``ok``, what ran (``check``) and, when it failed, its first lines."""

    __slots__ = ("ok", "check", "output")

    def __init__(self, ok: bool, check: str, output: str = "") -> None:
        self.ok, self.check, self.output = ok, check, output


def check_for(rules: Sequence[Rule], real: str, project: str, home: str) -> Optional[Tuple[str, float, str]]:
    """(command or built-in checker, seconds, rule id) of the first glob covering ``real``, or None."""
    for glob, command, seconds, rule_id in checks(rules):
        if paths.allowed(real, project, home, (glob,)):
            return command, seconds, rule_id
    return None


def run_check(command: str, seconds: float, real: str, project: str, sandbox: Sandbox = None) -> Outcome:
    if command in BUILTIN_CHECKERS:
        if command == "shell":
            argv = ["/bin/bash", "-n", real]
            shown = "bash -n"
        else:
            argv = [sys.executable or "python3", "-I", "-S", "-c", CHECKER, command, real]
            shown = f"built-in {command} check"
        return _run(argv, seconds, project, shown, None)  # baton's own code, which runs nothing it reads
    line = command.replace("{file}", shlex.quote(real))
    return _run(["/bin/sh", "-c", line], seconds, project, command, sandbox)


def _run(argv: List[str], seconds: float, cwd: str, shown: str, sandbox: Sandbox) -> Outcome:
    env = {k: v for k, v in os.environ.items() if k not in ("BASH_ENV", "ENV", "PYTHONSTARTUP", "PYTHONPATH")}
    built = None
    if sandbox is not None:
        from store.sandbox.bwrap_args import build

        built = build(sandbox[1])
        argv = [sandbox[0], *built.args, "--chdir", cwd, "--", *argv]
    try:
        proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=seconds, start_new_session=True)
    except subprocess.TimeoutExpired:
        return Outcome(False, shown, f"the check took longer than {seconds:g} s")
    except OSError as exc:
        return Outcome(False, shown, f"the check could not start: {exc}")
    finally:
        if built is not None and sandbox is not None:
            from store.sandbox.afterrun import check

            check(built.after_check(sandbox[1]))
    if proc.returncode == 0:
        return Outcome(True, shown)
    text = proc.stdout.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    first = "\n".join(lines[:MAX_LINES])
    return Outcome(False, shown, first[:MAX_CHARS])


def after_write(layout: Layout, rules: Sequence[Rule], real: str, shown: str, step: str,
                home: str, sandbox: Sandbox = None) -> Optional[Outcome]:
    """Check the file just written (None when no rule covers it) and keep its state."""
    found = check_for(rules, real, str(layout.project), home)
    if found is None or not os.path.isfile(real):
        return None
    command, seconds, _ = found
    outcome = run_check(command, seconds, real, str(layout.project), sandbox)
    record(layout, shown, step, outcome)
    return outcome


def record(layout: Layout, shown: str, step: str, outcome: Outcome) -> None:
    with durable.locked(layout.hooks_lock):
        counters = read_counters(layout)
        failing: Dict[str, Dict[str, str]] = counters.setdefault("checks", {})
        if outcome.ok:
            failing.pop(shown, None)
        else:
            failing[shown] = {"step": step, "check": outcome.check, "output": outcome.output[:400]}
        save_counters(layout, counters)


def still_failing(layout: Layout, rules: Sequence[Rule], step: str, env: Mapping[str, str],
                  sandbox: Sandbox = None) -> List[Tuple[str, str]]:
    """The files ``step`` wrote whose check fails now (each checked again): (path, first lines)."""
    failing = read_counters(layout).get("checks", {})
    out = []
    home = env.get("HOME") or os.path.expanduser("~")
    for shown, state in list(failing.items()) if isinstance(failing, dict) else []:
        if not isinstance(state, dict) or state.get("step") != step:
            continue
        real = os.path.realpath(os.path.join(str(layout.project), shown))
        found = check_for(rules, real, str(layout.project), home) if os.path.isfile(real) else None
        outcome = run_check(found[0], found[1], real, str(layout.project), sandbox) if found else None
        if outcome is not None and not outcome.ok:
            out.append((shown, f"{outcome.check}: {outcome.output}"))
        else:
            record(layout, shown, step, outcome or Outcome(True, ""))
    return out
