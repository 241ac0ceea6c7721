"""Claude Code's tools, by what each can do, and so how baton's gate meets it (docs/gate.md, "Every tool").

A tool that runs a command, writes a file or reads one is gated: ``dev/hooks_json.py`` builds the
PreToolUse matchers from these names, and ``tests/e2e/test_tool_coverage.py`` fails when the
Claude Code it drives offers a tool that ``TOOLS`` does not classify, one that can run, write or
read that no PreToolUse matcher starts the gate for, or a hook event ``EVENTS`` does not know.
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
# make, enter, leave or remove a git worktree: a whole checkout written outside the step's writes;
# Workflow runs a script that starts subagents in the background: refused while a job is active
WORKTREES = ("EnterWorktree", "ExitWorktree")
OUTSIDE = (*WORKTREES, "Workflow")
# start a prompt or a skill: judged so that none approves a step
PROMPTS = ("Skill", "CronCreate", "ScheduleWakeup")
# the tools whose every call starts the gate (Read starts it only for the key's paths, hooks_json.key_reads;
# a permission-rule filter on Grep or Glob never matched in 2.1.328, so they start it on every call)
GATED = ("Write", "Edit", "NotebookEdit", *SHELLS, *UNREAD_SHELLS, "Grep", "Glob", *OUTSIDE, *PROMPTS)

# Every tool Claude Code 2.1.328 offers (in the request's tools array, through ToolSearch, or opt-in),
# by what it can do. runs/writes/reads/prompts: the gate starts for it (GATED, or Read's key filter);
# sends: judged by allow_hosts (hooks_json.EXTERNAL); delegates: starts an agent or session whose
# own calls reach the same hooks; inert: touches no file and runs nothing.
TOOLS = {
    "Bash": "runs", "Monitor": "runs", "PowerShell": "runs", "Workflow": "runs",
    "Write": "writes", "Edit": "writes", "NotebookEdit": "writes", "EnterWorktree": "writes",
    "ExitWorktree": "writes",
    "Read": "reads", "Grep": "reads", "Glob": "reads",  # Grep, Glob: not offered by 2.1.328, gated if they return
    "Skill": "prompts", "CronCreate": "prompts", "ScheduleWakeup": "prompts",
    "WebFetch": "sends",
    "Agent": "delegates", "SendMessage": "delegates",
    "WebSearch": "inert",  # the query goes to the API provider, as the conversation does
    "ListAgents": "inert", "TaskStop": "inert", "CronDelete": "inert", "CronList": "inert", "ToolSearch": "inert",
    "DeferredToolPlaceholder": "inert", "ReportFindings": "inert",
}
# Every hook event Claude Code 2.1.328's settings schema lists. None runs a command the model chose
# apart from the tools above; PreSkillShellCommand (2.1.332: the `!` commands a skill runs as it loads,
# outside PreToolUse) is listed as not yet hooked, so that the coverage test fails on a Claude Code
# that has it until baton gates it (docs/gate.md, "Every tool").
EVENTS = {
    "hooked": ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop",
               "StopFailure", "SessionEnd"),
    "no command": ("PostToolBatch", "UserPromptExpansion", "SubagentStop", "PreCompact", "Notification",
                   "SubagentStart", "PostCompact", "PreModelSwitch", "PostModelSwitch", "PermissionRequest",
                   "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation",
                   "ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded",
                   "CwdChanged", "FileChanged", "DirectoryAdded", "MessageDisplay"),
    "not hooked yet": ("PreSkillShellCommand",),
}


def command_of(tool: str, tool_input: Mapping[str, Any]) -> Optional[str]:
    """The shell command a Bash or Monitor call runs (``None``: not a command; a Monitor on a WebSocket)."""
    if tool not in SHELLS:
        return None
    command = tool_input.get("command")
    return command if isinstance(command, str) else None
