"""What a ``baton once`` key is bound to: the command it ran, the folder it ran in (relative to the
project, so every clone of the ledger agrees) and the step. A key's intent and result records
carry the binding (``bind``, a digest, with ``cmd`` and ``cwd`` to show a person), and a later run
of the key with another binding is refused rather than answered with another command's result.

The command is compared as the ledger shows it, secrets masked (``store.once.redact``): the same
call with a rotated token is the same side effect, and no digest of a secret is ever written.
Records written before keys were bound carry no ``bind`` and are not compared.
"""

from __future__ import annotations

import os

from store.base.text import one_line
from store.once import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence

SHOWN = 200  # characters of the command kept in ``cmd`` for the refusal message
FIELDS = ("bind", "cmd", "cwd")


def place(cwd: str, project: str) -> str:
    """``cwd`` relative to the project (``.`` for the project itself), or absolute when outside it."""
    rel = os.path.relpath(os.path.realpath(cwd), os.path.realpath(project))
    return cwd if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def of(argv: Sequence[str], cwd: str, project: str, step: str) -> Dict[str, str]:
    """The binding fields of a run of ``argv`` from ``cwd`` in ``step``."""
    from hashlib import sha256

    command = redact.command(argv)
    where = place(cwd, project)
    digest = sha256("\0".join((command, where, step)).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return {"bind": digest, "cmd": one_line(command, SHOWN), "cwd": where}


def carried(record: Mapping[str, Any]) -> Dict[str, Any]:
    """The binding fields ``record`` holds (copied onto the result or settlement that follows it)."""
    fields = {k: record[k] for k in FIELDS if isinstance(record.get(k), str)}
    if "bind" in fields and "cmd" not in fields and record.get("status") == "intent":
        fields["cmd"] = one_line(str(record.get("note") or ""), SHOWN)
    return fields if "bind" in fields else {}


def differences(record: Mapping[str, Any], now: Mapping[str, str], step: str) -> List[str]:
    """What differs between the key's first run (``record``) and this one; empty when bound alike
    or when ``record`` predates bindings."""
    if not isinstance(record.get("bind"), str) or record.get("bind") == now["bind"]:
        return []
    said = []
    if record.get("cmd") != now["cmd"]:
        said.append("command")
    if record.get("cwd") != now["cwd"]:
        said.append(f"folder ({now['cwd']}, not {record.get('cwd')})")
    if str(record.get("step")) != step:
        said.append(f"step ({step}, not {record.get('step')})")
    return said or ["command"]  # the shown command is cut at SHOWN characters: the difference lies beyond


def refusal(key: str, record: Mapping[str, Any], now: Mapping[str, str], differs: Sequence[str]) -> str:
    """Why this run of ``key`` is refused, naming the command that first used it."""
    import shlex

    return (f"once {key} is bound to what it first ran: `{record.get('cmd')}` in step {record.get('step')}, "
            f"folder {record.get('cwd')} (record #{record.get('seq')} at {record.get('ts')}); this call differs in "
            f"its {', '.join(differs)}: `{now['cmd']}`. Nothing was run or replayed. A different side effect needs "
            f"its own key; if this is the same side effect, `baton once {shlex.quote(key)} --reuse-key -- ...` "
            "replays the stored result for it.")


def stored(record: Optional[Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
    """The record a binding is read from: the key's latest, unless it reopened the key (retry)."""
    if record is None or (record.get("status") == "result" and record.get("outcome") == "retry"):
        return None
    return {**record, **carried(record)}  # an intent shows its command as its note


def open_differs(record: Mapping[str, Any], differs: Sequence[str]) -> str:
    """A sentence for the unknown-outcome answer when this call is not what the open run ran."""
    if not differs:
        return ""
    return (f" This call differs from that run in its {', '.join(differs)}: once settled, the key stands for "
            "what that run ran.")
