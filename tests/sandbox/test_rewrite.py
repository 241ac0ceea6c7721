"""The rewritten command, run for real the way Claude Code's Bash tool runs it: the original runs
inside bubblewrap exactly as it would outside (quotes, functions from the shell snapshot, exit codes,
``cd``), the report pipe and the command's own descriptor stay out of its reach, nothing runs when
the sandbox cannot start, and what a person is shown is short: the command verbatim plus two lines."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Tuple

import gatemodes
import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.sandbox import bwrap_args, probe, rewrite


@given(st.text(st.characters(codec="utf-8", blacklist_characters="\x00"), max_size=200))
def test_the_original_is_read_back_exactly_and_shown_verbatim_in_a_short_line(command: str) -> None:
    line = rewrite.sandboxed(command, "/p/.baton/run/toolu_01.sh")
    assert rewrite.original_of(line) == command
    assert command in line and line.count("\n") == command.count("\n") + 2 and len(line) <= len(command) + 300


@pytest.mark.parametrize("command", ["BATON_CMD", "echo x\nBATON_CMD\necho y", "cat <<BATON_CMD_1\nx\nBATON_CMD_1"])
def test_a_command_holding_the_end_line_gets_another(command: str) -> None:
    line = rewrite.sandboxed(command, "/p/.baton/run/x.sh")
    assert rewrite.original_of(line) == command and line.splitlines()[-1] not in command.splitlines()


def test_a_line_that_is_not_a_rewrite_has_no_original() -> None:
    assert rewrite.original_of("echo hi") == ""
    assert rewrite.original_of(". '/p/x.sh' 9<<'BATON_CMD'\necho hi") == ""
    assert rewrite.original_of(". '/p/x.sh' 9<<'BATON_CMD'\nBATON_CMD\nBATON_CMD") == ""  # not what it would make


class Shell:
    """A project, a home with a shell snapshot, and the Bash tool's way of running one command."""

    def __init__(self, root: Path) -> None:
        self.project, self.home = root / "project", root / "home"
        (self.project / "src").mkdir(parents=True)
        (self.project / ".baton" / "run").mkdir(parents=True)
        snapshots = self.home / ".claude" / "shell-snapshots"
        snapshots.mkdir(parents=True)
        self.snapshot = snapshots / "snapshot-bash-1-test.sh"
        self.snapshot.write_text('greet() { echo "hello $1"; }\n')
        self.cwd_file = root / "cwd"
        gatemodes.sandboxed_here(self.home)
        self.bwrap = probe.bubblewrap({"HOME": str(self.home)}).bwrap
        self.calls = 0

    def line(self, command: str, args_file: str = "") -> str:
        self.calls += 1
        if not args_file:
            policy = bwrap_args.Policy(str(self.project), str(self.project / ".baton"),
                                    str(self.home / ".config" / "baton"), str(self.home), ("src/**",))
            args_file = str(self.project / ".baton" / "run" / f"{self.calls}.args")
            rewrite.write_args(args_file, bwrap_args.build(policy).args)
        script = str(self.project / ".baton" / "run" / f"{self.calls}.sh")
        rewrite.write_script(script, [self.bwrap], args_file, args_file + ".started")
        return rewrite.sandboxed(command, script)

    def run(self, command: str, args_file: str = "", stdin: str = "") -> Tuple[int, str, str, str]:
        """(exit code, stdout, stderr, the directory Claude Code would keep) for ``command`` sandboxed."""
        self.cwd_file.unlink(missing_ok=True)
        outer = (f"source {self.snapshot} 2>/dev/null || true && \\builtin shopt -u extglob 2>/dev/null || true && "
                 f"eval {rewrite.quote(self.line(command, args_file))} && pwd -P >| {self.cwd_file}")
        proc = subprocess.run(["/bin/bash", "-c", outer], cwd=self.project, input=stdin, capture_output=True,
                              text=True, env={**os.environ, "HOME": str(self.home)}, timeout=60)
        kept = self.cwd_file.read_text().strip() if self.cwd_file.exists() else ""
        return proc.returncode, proc.stdout, proc.stderr, kept


@pytest.fixture
def shell(tmp_path: Path) -> Shell:
    return Shell(tmp_path)


def test_quotes_heredocs_and_expansions_behave_as_without_the_sandbox(shell: Shell) -> None:
    command = "x='a b'; printf '%s|' \"$x\" $'t\\tab' \"$((6 * 7))\"; cat <<EOF\n${x}\nEOF"
    code, out, _, _ = shell.run(command)
    plain = subprocess.run(["/bin/bash", "-c", command], capture_output=True, text=True).stdout
    assert code == 0 and out == plain == "a b|t\tab|42|a b\n"


def test_functions_from_the_shell_snapshot_work_inside(shell: Shell) -> None:
    assert shell.run("greet sandbox")[:2] == (0, "hello sandbox\n")


def test_cd_persists_and_exit_codes_are_kept(shell: Shell) -> None:
    code, out, _, kept = shell.run("cd src && pwd")
    assert code == 0 and out.strip() == str(shell.project / "src") and kept == str(shell.project / "src")
    assert shell.run("false")[0] == 1
    code, _, _, kept = shell.run("cd src; exit 3")
    assert code == 3 and kept == ""  # like Claude Code: an exit skips its own `pwd -P`


def test_stdin_reaches_the_command_and_the_report_pipe_does_not(shell: Shell) -> None:
    assert shell.run("cat", stdin="from stdin")[1] == "from stdin"
    assert shell.run("read -r x; echo \"got $x\"", stdin="line one\nline two")[1] == "got line one\n"
    code, out, _, _ = shell.run("ls /proc/self/fd")
    assert code == 0 and sorted(out.split()) == ["0", "1", "2", "3"]  # 3: the directory ls itself reads


def test_writes_land_only_where_the_step_may_write(shell: Shell) -> None:
    code, _, err, _ = shell.run("echo ok > src/in.txt; echo no > out.txt")
    assert (shell.project / "src" / "in.txt").read_text() == "ok\n"
    assert not (shell.project / "out.txt").exists() and "Read-only file system" in err


def test_nothing_runs_when_the_sandbox_cannot_start(shell: Shell) -> None:
    marker = shell.project / "src" / "ran"
    code, _, err, _ = shell.run(f"touch {marker}", args_file=str(shell.project / ".baton" / "run" / "missing.args"))
    assert code != 0 and not marker.exists() and "No such file" in err
    bad = shell.project / ".baton" / "run" / "bad.args"
    rewrite.write_args(str(bad), ["--no-such-option"])
    code, _, err, _ = shell.run(f"touch {marker}", args_file=str(bad))
    assert code != 0 and not marker.exists() and "bwrap" in err


def test_an_args_file_is_never_rewritten(tmp_path: Path) -> None:
    rewrite.write_args(str(tmp_path / "a"), ["--x", "y z", "é"])
    assert (tmp_path / "a").read_bytes() == b"--x\0y z\0\xc3\xa9\0"
    with pytest.raises(FileExistsError):
        rewrite.write_args(str(tmp_path / "a"), ["--other"])
