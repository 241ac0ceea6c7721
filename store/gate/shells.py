"""The tools beyond Bash that run something, and the worktree tools: what baton lets each do.

A Monitor call with a ``command`` is a background Bash command: checked and sandboxed as Bash is
(``store.gate.bash``, ``store.gate.enforce``). A Monitor on a WebSocket (``ws``) opens a connection,
judged by ``allow_hosts`` and counted toward ``limits.external_ops`` as WebFetch is; a Monitor of any
other shape is refused while a job is active, as baton cannot tell what it watches. PowerShell
runs a command baton can neither read nor run in its sandbox, so while a job is active it is
refused, and without one only when it names baton's own files. EnterWorktree and ExitWorktree
make, enter, leave or remove a git checkout under ``.claude/worktrees/``, outside the step's
writes and the sandbox (a removal discards its uncommitted files), and Workflow runs a script
that starts subagents in the background, outside NEXT's one step at a time: all three are
refused while a job is active.
"""

from __future__ import annotations

from store.base import paths
from store.gate.call import mentions_protected, refuse
from store.state import approvals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from store.gate.call import Call
    from store.plan.plan import Plan


def decide_unread(call: Call, plan: Optional[Plan]) -> Optional[str]:
    """PowerShell: refused while a job is active; without one, only when it names baton's files."""
    command = call.input.get("command")
    if not isinstance(command, str) or "\x00" in command:
        return refuse("payload", f"baton denied this {call.tool} call: it has no command string, so it cannot be "
                                 "checked.")
    if plan is not None:
        return refuse("unread-shell", f"baton denied {call.tool}: while a job is active every command runs where "
                                      f"baton can check it, and baton can neither read a {call.tool} command nor run "
                                      "it in its sandbox. Use Bash for this command.")
    folded = paths.fold(command)
    if approvals.KEY_NAME in folded or "config/baton" in folded:
        return refuse("key", f"baton denied this {call.tool} command: it names baton's approval key, which no tool "
                             "may read or write.")
    named = mentions_protected(command)
    if named:
        return refuse("own-files", f"baton denied this {call.tool} command: {named}, and baton cannot read what a "
                                   f"{call.tool} command does.")
    return None


def socket_url(call: Call) -> Optional[str]:
    """The url of a Monitor on a WebSocket (judged as WebFetch is, by the policy), else ``None``."""
    socket = call.input.get("ws")
    url = socket.get("url") if isinstance(socket, dict) else None
    return url if isinstance(url, str) else None


def decide_monitor(call: Call, plan: Optional[Plan]) -> Optional[str]:
    """A Monitor with neither a command nor a WebSocket url: refused while a job is active."""
    if plan is None:
        return None
    return refuse("payload", "baton denied this Monitor: it has neither a command nor a WebSocket url, so baton "
                             "cannot tell what it would run or open.")


def decide_outside(call: Call, plan: Optional[Plan]) -> Optional[str]:
    """EnterWorktree, ExitWorktree and Workflow: refused while a job is active."""
    if plan is None:
        return None
    if call.tool == "Workflow":
        return refuse("workflow", "baton denied Workflow: a workflow script starts subagents in the background, "
                                  "outside the job's one step at a time, while a job is active. Do the step's work "
                                  "here, or start a subagent with the Agent tool (its calls are gated too).")
    return refuse("worktree", f"baton denied {call.tool}: it makes, enters or removes a git worktree under "
                              ".claude/worktrees/, outside the step's writes and baton's sandbox, while a job is "
                              "active. Work in this checkout; to run a job in several worktrees, the person starts "
                              "one session in each (see baton's docs on parallel steps).")
