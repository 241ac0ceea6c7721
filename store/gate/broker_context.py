"""What the gate sets up for a sandboxed command that calls ``baton``: the broker's context file,
the line that starts it, and the calls the person is shown (see :mod:`store.gate.broker`).

The context (``.baton/run/<id>.broker``, which nothing in a sandbox can write) holds the socket's
path, the run's id, the payload fields the gate judges each call with (session, permission mode,
subagent), the part of the hook's environment the gate reads (no tokens), and the ``baton`` calls
a person was shown when they were asked about the whole command.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Mapping

ENV = "BATON_BROKER"
# what the gate needs from the hook's environment to judge a call as the hook would (no tokens)
HOOK_ENV = ("HOME", "USER", "PATH", "CLAUDE_PROJECT_DIR", "CLAUDE_PID", "CLAUDE_CONFIG_DIR", "CLAUDE_PLUGIN_DATA",
            "CLAUDE_CODE_SESSION_ID")
HOOK_ENV_PREFIXES = ("BATON_", "XDG_")
PAYLOAD_KEYS = ("session_id", "permission_mode", "agent_id", "agent_type", "transcript_path")


def visible_calls(command: str, cwd: str, home: str) -> List[List[str]]:
    """The ``baton`` calls a person sees in ``command`` (its words after ``baton``): what they say yes to
    when they are asked about the whole command."""
    from store.shell import analyse

    return [list(argv[1:]) for argv in analyse(command, cwd, home).baton if argv and argv[0] == "baton"]


def write_context(files: Mapping[str, str], rid: str, where: Mapping[str, str], payload: Mapping[str, Any],
                  env: Mapping[str, str], approved: List[List[str]]) -> None:
    """What the broker of run ``rid`` needs (``files``: :func:`store.sandbox.runs.paths`; ``where``: the
    job's ``project`` and ``state_dir``), in ``.broker``."""
    from store.base import jsonc
    from store.sandbox.rewrite import write_file

    kept = {k: v for k, v in env.items() if k in HOOK_ENV or k.startswith(HOOK_ENV_PREFIXES)}
    data = {"id": rid, "socket": files["socket"], "project": where["project"], "state_dir": where["state_dir"],
            "env": kept, "approved": approved,
            "payload": {k: payload[k] for k in PAYLOAD_KEYS if isinstance(payload.get(k), str)}}
    write_file(files["broker"], jsonc.dumps(data, ensure_ascii=True).encode("ascii"))


def launch(context_file: str) -> List[str]:
    """The command line that starts the broker, before the ``LAUNCH`` it starts."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "broker.py")
    return [sys.executable or "/usr/bin/python3", "-I", "-S", here, context_file, "--"]
