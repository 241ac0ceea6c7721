"""Claude Code's tools, by what each can do, and so how baton's gate meets it (docs/gate.md, "Every tool").

A tool that runs a command, writes a file or reads one is gated: ``dev/hooks_json.py`` builds the
PreToolUse matchers from these names, and ``tests/e2e/test_tool_coverage.py`` fails when the
pinned Claude Code offers a tool that no row of docs/gate.md's table classifies, or one that can
run, write or read and no matcher here starts the gate for.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping, Optional

# run a shell command that baton reads and runs in its sandbox (Monitor: a background command whose
# stdout lines are events; Claude Code honours a PreToolUse rewrite of it only when the matcher names it)
SHELLS = ("Bash", "Monitor")
# run a command baton can neither read nor sandbox (PowerShell, opt-in with CLAUDE_CODE_USE_POWERSHELL_TOOL=1)
UNREAD_SHELLS = ("PowerShell",)
# write the file their path field names
WRITERS = {"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"}
# read files: the field naming the file or the folder searched (Grep and Glob: the session's folder when absent)
READERS = {"Read": "file_path", "Grep": "path", "Glob": "path"}
# make, enter, leave or remove a git worktree: a whole checkout written outside the step's writes
WORKTREES = ("EnterWorktree", "ExitWorktree")
# start a prompt or a skill: judged so that none approves a step
PROMPTS = ("Skill", "CronCreate", "ScheduleWakeup")
# the tools whose every call starts the gate (Read starts it only for the key's paths, hooks_json.key_reads;
# a permission-rule filter on Grep or Glob never matched in 2.1.328, so they start it on every call)
GATED = ("Write", "Edit", "NotebookEdit", *SHELLS, *UNREAD_SHELLS, "Grep", "Glob", *WORKTREES, *PROMPTS)


def command_of(tool: str, tool_input: Mapping[str, Any]) -> Optional[str]:
    """The shell command a Bash or Monitor call runs (``None``: not a command; a Monitor on a WebSocket)."""
    if tool not in SHELLS:
        return None
    command = tool_input.get("command")
    return command if isinstance(command, str) else None
