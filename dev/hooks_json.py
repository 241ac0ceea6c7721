"""Write hooks/hooks.json from hooks/bootstrap.py, so the inline bootstrap stays readable.

Every hook runs ``/bin/sh -c LAUNCH <bootstrap> ${CLAUDE_PLUGIN_ROOT} <Event>`` (exec form): the
short launcher goes to ``/`` and starts ``python3 -S -c <bootstrap> ROOT EVENT <the folder it was
started in>``. Claude Code starts hooks in the session's current folder, which follows the model's
``cd``; a version manager's shim (pyenv, asdf, mise) picks the interpreter from files in that
folder and its parents (``.python-version``...), which the model can write. From ``/`` only the
person's own settings steer it; the bootstrap then goes back to the folder it was started in.
The bootstrap is inline because a missing script file makes ``python3 FILE`` exit 2, which Claude
Code treats as "block every matched call"; inline code still runs and can answer sensibly.
``-S`` skips site-packages: baton needs only the standard library, and starts faster without it.
Run ``python3 dev/hooks_json.py`` after editing the bootstrap; a test checks they agree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from store.gate.toolset import GATED as GATED_TOOLS  # noqa: E402  (the table of tools; standard library only)

GATED = "|".join(GATED_TOOLS)
RECORDED = "Write|Edit|NotebookEdit|Bash|Monitor"  # Monitor: a sandboxed command's run, checked after it starts
# tools that send data out, judged by allow_hosts and counted for limits.external_ops (a regex: MCP
# tools are named mcp__<server>__<tool>); a matcher cannot read the plan, so the gate starts for them always
EXTERNAL = "^(WebFetch|mcp__.+)$"


LAUNCH = 'here=$PWD; cd / || exit 1; exec python3 -S -c "$0" "$@" "$here"'


def hook(event: str, timeout: int, block: bool = False) -> Dict[str, Any]:
    code = (ROOT / "hooks" / "bootstrap.py").read_text()
    entry: Dict[str, Any] = {"type": "command", "command": "/bin/sh",
                             "args": ["-c", LAUNCH, code, "${CLAUDE_PLUGIN_ROOT}", event], "timeout": timeout}
    if block:
        entry["onFailure"] = "block"
    return entry


def key_reads() -> List[Dict[str, Any]]:
    """Read is not gated in general (it would start a process per read); only reads of baton's
    approval key and of its telemetry settings beside it (the collector's credentials) are, through
    permission-rule filters that start the hook for those paths alone, wherever XDG_CONFIG_HOME puts them.
    Grep and Glob are in ``GATED``: no such filter matched them in 2.1.328, and a Grep of ``~`` reaches
    the key, which no filter on its path could tell."""
    return [{"matcher": "Read", "hooks": [{**hook("PreToolUse", 10, block=True), "if": rule}]}
            for rule in ("Read(~/.config/baton/**)", "Read(**/approval.key)", "Read(**/baton/telemetry.env)")]


def build() -> Dict[str, Any]:
    key_read_hooks = key_reads()

    def group(event: str, timeout: int, matcher: str = "", block: bool = False) -> List[Dict[str, Any]]:
        item: Dict[str, Any] = {"hooks": [hook(event, timeout, block)]}
        if matcher:
            item = {"matcher": matcher, **item}
        return [item]

    return {
        "description": "baton: brief at session start, gates before tools, outcomes after, the Stop loop, "
                       "turns an API error ended, /baton: commands, the job's figures at session end",
        "hooks": {
            "SessionStart": group("SessionStart", 10),
            "UserPromptSubmit": group("UserPromptSubmit", 600),
            "PreToolUse": group("PreToolUse", 10, GATED, block=True) + group("PreToolUse", 10, EXTERNAL, block=True)
            + key_read_hooks,
            "PostToolUse": group("PostToolUse", 75, RECORDED),  # check_after_write runs here, 60 s at most
            "PostToolUseFailure": group("PostToolUseFailure", 10, RECORDED),
            "Stop": group("Stop", 10),
            "StopFailure": group("StopFailure", 10),  # counted in the figures; never blocks (answers nothing)
            "SessionEnd": group("SessionEnd", 10),
        },
    }


def render() -> str:
    return json.dumps(build(), indent=2) + "\n"


if __name__ == "__main__":
    target = ROOT / "hooks" / "hooks.json"
    if "--check" in sys.argv[1:]:
        sys.exit(0 if target.read_text() == render() else 1)
    target.write_text(render())
