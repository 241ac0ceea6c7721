"""Runs the real Claude Code CLI in `-p` mode against a fake Messages API.

`find_claude()` locates the pinned executable (BATON_CLAUDE overrides the repository's
`.cache` install) or raises `ClaudeMissing` saying how to install it. A `Claude` runs the CLI
with its own throwaway HOME and an environment cleaned of inherited CLAUDE*/ANTHROPIC*
variables: `run()` waits and returns a `RunResult` (parsed `--output-format json` plus the
raw streams); `start()` returns a `Popen` leading its own process group, so a test can
`os.killpg(proc.pid, signal.SIGKILL)` it. Hooks and Bash commands run in process groups
of their own; `Claude.kill_all()` also kills those (found by an environment tag).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .processes import TAG_VAR, kill_tagged, tagged_gone, tagged_pids

if TYPE_CHECKING:
    from .fakeapi import FakeAPI

REPO = Path(__file__).resolve().parents[2]
PINNED_VERSION = "2.1.328"
CACHED_EXE = REPO / ".cache/claude-code/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
DEFAULT_ARGS = ("--permission-mode", "acceptEdits", "--allowedTools", "Bash")


class ClaudeMissing(RuntimeError):
    """The Claude Code executable is not installed where the tests look for it."""


def find_claude() -> Path:
    """The CLI to test: $BATON_CLAUDE if set, else the copy `dev/install-claude-code` installs."""
    override = os.environ.get("BATON_CLAUDE")
    exe = Path(override) if override else CACHED_EXE
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        source = "BATON_CLAUDE" if override else "the pinned install"
        raise ClaudeMissing(
            f"Claude Code CLI not found at {exe} ({source}). "
            f"Run `dev/install-claude-code` to install @anthropic-ai/claude-code@{PINNED_VERSION} "
            "into .cache/claude-code (the full test command does this for you)."
        )
    return exe


@dataclass
class RunResult:
    """What one `claude -p` run produced; `output` is the parsed JSON result, if any."""

    returncode: int
    stdout: str
    stderr: str
    output: dict[str, Any] | None

    @property
    def result(self) -> str:
        """The final assistant text the CLI reported."""
        assert self.output is not None, f"no JSON result; stderr: {self.stderr}"
        return str(self.output.get("result", ""))

    @property
    def session_id(self) -> str:
        assert self.output is not None, f"no JSON result; stderr: {self.stderr}"
        return str(self.output["session_id"])


def parse_output(stdout: str) -> dict[str, Any] | None:
    """The `--output-format json` object in stdout (its last JSON line), or None."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


class Claude:
    """One simulated user: a HOME of its own, talking to the API at `base_url`.

    Every process started by its runs carries `TAG_VAR=self.tag` in its environment.
    """

    def __init__(self, exe: Path, base_url: str, home: Path) -> None:
        self.exe = exe
        self.base_url = base_url
        self.home = home
        self.tag = uuid.uuid4().hex
        home.mkdir(parents=True, exist_ok=True)

    def live_pids(self) -> list[int]:
        """Processes still alive from this driver's runs: CLIs, hooks, Bash commands."""
        return tagged_pids(self.tag)

    def kill_all(self) -> list[str]:
        """SIGKILL every process from this driver's runs, in whatever process group, until none is
        left (10 s at most); the command lines of any still alive then."""
        return kill_tagged(self.tag)

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The CLI's environment: ours minus CLAUDE*/ANTHROPIC*, plus the fake API's settings."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC"))}
        env.update(
            HOME=str(self.home),
            ANTHROPIC_BASE_URL=self.base_url,
            ANTHROPIC_API_KEY="test",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        env[TAG_VAR] = self.tag
        env.update(extra or {})
        return env

    def command(
        self,
        prompt: str,
        plugin_dir: Path | None = None,
        extra_args: Sequence[str] = (),
        resume: str | None = None,
        permissions: Sequence[str] = DEFAULT_ARGS,
    ) -> list[str]:
        """The argv for one `-p` run with JSON output and the permission flags (by default the tests')."""
        cmd = [str(self.exe), "-p", prompt, "--output-format", "json", *permissions]
        if plugin_dir is not None:
            cmd += ["--plugin-dir", str(plugin_dir)]
        if resume is not None:
            cmd += ["--resume", resume]
        return cmd + list(extra_args)

    def run(
        self,
        prompt: str,
        cwd: Path,
        plugin_dir: Path | None = None,
        extra_args: Sequence[str] = (),
        resume: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
        permissions: Sequence[str] = DEFAULT_ARGS,
    ) -> RunResult:
        """Run the CLI to completion in `cwd`; on timeout its whole process group is killed."""
        proc = self.start(prompt, cwd, plugin_dir, extra_args, resume, env, permissions)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            self.kill_all()
            stdout, stderr = proc.communicate()
            raise AssertionError(
                f"claude did not finish within {timeout}s\nstdout: {stdout}\nstderr: {stderr}"
            ) from None
        return RunResult(proc.returncode, stdout, stderr, parse_output(stdout))

    def start(
        self,
        prompt: str,
        cwd: Path,
        plugin_dir: Path | None = None,
        extra_args: Sequence[str] = (),
        resume: str | None = None,
        env: Mapping[str, str] | None = None,
        permissions: Sequence[str] = DEFAULT_ARGS,
    ) -> subprocess.Popen[str]:
        """Start the CLI in a new session (its pid is its process group id), all streams piped."""
        return subprocess.Popen(
            self.command(prompt, plugin_dir, extra_args, resume, permissions),
            cwd=cwd,
            env=self.env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the process group `proc` leads (see `Claude.start`); quiet if it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def kill_while_hanging(claude: Claude, fake_api: FakeAPI, project: Path, plugin: Path, prompt: str = "run the job",
                       seconds: float = 60) -> None:
    """Start a session with `prompt`, wait until the fake API hangs on its script's HANG turn, then
    SIGKILL the CLI's process group and every straggler (hooks, Bash commands)."""
    proc = claude.start(prompt, cwd=project, plugin_dir=plugin)
    try:
        assert fake_api.wait_until_hanging(seconds), "the session never reached its HANG turn"
    finally:
        kill_group(proc)
        proc.communicate(timeout=10)
        claude.kill_all()
    assert proc.returncode == -signal.SIGKILL
    assert tagged_gone(claude.tag)
