"""Whether a prompt came from the person's own Claude Code session, or from one the model started.

A ``claude -p '/baton:approve STEP'`` run through the Bash tool is a session of its own, and its
prompt hook cannot tell its prompt from a person's. Two markers tell: its CLI's launch environment
(``/proc/$CLAUDE_PID/environ``) holds the variables a Claude Code session sets for the commands it
runs, and its parent, through any shells and wrappers, is another Claude Code CLI or its Bash tool's
shell (the walk stops at the first other program: a terminal, a test runner). Both can be
scrubbed by a determined program (``env -i``, ``setsid``); under baton's sandbox such a program can
neither read the approval key nor write the ledger anyway. Linux only (``/proc``); elsewhere no marker.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping, Optional

MARKERS = ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "CLAUDE_CODE_CHILD_NOTES_DIR",
           "CLAUDE_CODE_MESSAGING_SOCKET")
CLIS = ("claude", "claude.exe")
PASS_THROUGH = ("sh", "bash", "dash", "zsh", "ksh", "fish", "env", "timeout", "nohup", "setsid", "sudo", "xargs",
                "nice", "stdbuf", "time", "script", "busybox", "bwrap")
MAX_HOPS = 32


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _parent(pid: int) -> int:
    stat = _read(f"/proc/{pid}/stat").decode("utf-8", "replace")
    fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm) "
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0


def _looks_like_claude(argv: List[str]) -> bool:
    if not argv:
        return False
    if os.path.basename(argv[0]) in CLIS or any("@anthropic-ai/claude-code" in a for a in argv[:2]):
        return True
    return any("/shell-snapshots/snapshot-" in a for a in argv)  # the Bash tool's own shell


def nested_session(env: Mapping[str, str]) -> Optional[str]:
    """Why the session answering this prompt was started by another Claude Code session, or ``None``."""
    pid = str(env.get("CLAUDE_PID", ""))
    if not pid.isdigit() or not os.path.isdir(f"/proc/{pid}"):
        return None
    names = {entry.split(b"=", 1)[0].decode("utf-8", "replace") for entry in _read(f"/proc/{pid}/environ").split(b"\0")}
    found = [m for m in MARKERS if m in names]
    if found:
        return f"its Claude Code was launched with {found[0]} set, by another Claude Code session"
    current = _parent(int(pid))
    for _ in range(MAX_HOPS):
        if current <= 1:
            break
        argv = [a.decode("utf-8", "replace") for a in _read(f"/proc/{current}/cmdline").split(b"\0") if a]
        if _looks_like_claude(argv):
            return f"its Claude Code was started from another Claude Code session (process {current})"
        if not argv or os.path.basename(argv[0]).lstrip("-") not in PASS_THROUGH:
            break  # a program that is neither a shell nor a wrapper: a terminal, an editor, a test runner
        current = _parent(current)
    return None
