"""deny_content: would a write leave a covered file holding what a rule forbids?

Write is judged on its content, Edit on the current file with the edit applied (as Claude Code
applies it: the first occurrence of ``old_string``, or all with ``replace_all``; an edit that
cannot apply changes nothing), NotebookEdit on the notebook's cell sources after the edit. Bash
cannot show what it writes: a Bash command that writes a covered file is refused, and so is one
whose effect baton cannot tell while its words name a covered file.
"""

from __future__ import annotations

import os

from store.base import bounded, jsonc, paths
from store.gate.call import refuse
from store.plan.rules import of_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Mapping, Optional, Sequence

    from store.gate.call import Call
    from store.plan.plan import Plan
    from store.plan.rules import Rule
    from store.shell import Scan

MAX_BYTES = 20 * 1024 * 1024


def write(call: Call, plan: Plan, raw: str) -> Optional[str]:
    """Write, Edit or NotebookEdit on ``raw``: the refusal when the file would match a rule, or None."""
    return check_write(call, of_kind(plan.rules, "deny_content"), raw)


def bash(call: Call, plan: Plan, command: str, scan: Scan, step: str) -> Optional[str]:
    """The refusal for a command that writes (or may write) a covered file, or None."""
    return check_bash(call, of_kind(plan.rules, "deny_content"), scan)


def covering(rules: Sequence[Rule], real: str, project: str, home: str) -> List[Rule]:
    return [rule for rule in rules if paths.allowed(real, project, home, rule.value["files"])]


def check_write(call: Call, rules: Sequence[Rule], raw: str) -> Optional[str]:
    """Write, Edit, NotebookEdit on ``raw``: None, or the refusal naming the rule and the match."""
    real = paths.resolve(raw, call.cwd, call.home)
    found = covering(rules, real, call.project, call.home)
    if not found:
        return None
    try:
        text = resulting_text(call.tool, call.input, real)
    except OSError as exc:
        return refuse("deny-content", f"baton denied {call.tool} on {raw}: the job's rule {found[0].name} covers it "
                                      f"and baton cannot read the file to check the edit ({exc.strerror or exc}).")
    if text is None:
        return None
    for rule in found:
        m = rule.value["regex"].search(text)
        if m is not None:
            line = text.count("\n", 0, m.start()) + 1
            shown = text[text.rfind("\n", 0, m.start()) + 1 :].split("\n", 1)[0].strip()[:100]
            return refuse("deny-content", f"baton denied {call.tool} on {raw}: the file would match the job's rule "
                                          f"{rule.name} (`{rule.value['pattern']}`) at line {line}: `{shown}`: "
                                          f"{rule.reason}. Write it without that.")
    return None


def resulting_text(tool: str, tool_input: Mapping[str, Any], real: str) -> Optional[str]:
    """The text the file would hold after the call (None: the call cannot apply, nothing changes)."""
    if tool == "Write":
        content = tool_input.get("content")
        return content if isinstance(content, str) else ""
    current = _read(real)
    if tool == "Edit":
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        if current is None:
            return new if old == "" else None
        if old == "":
            return new + current
        if old not in current:
            return None
        return current.replace(old, new) if tool_input.get("replace_all") else current.replace(old, new, 1)
    return _notebook(tool_input, current)


def _read(real: str) -> Optional[str]:
    try:
        if os.path.getsize(real) > MAX_BYTES:
            raise OSError(f"larger than {MAX_BYTES // (1024 * 1024)} MB")
        return bounded.read_regular(real, MAX_BYTES).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except bounded.Unreadable as exc:  # a FIFO or device the model planted: refused as unreadable
        raise OSError(str(exc)) from None


def _notebook(tool_input: Mapping[str, Any], current: Optional[str]) -> str:
    """The notebook's cell sources after the edit, one cell after another."""
    new = tool_input.get("new_source")
    new_text = new if isinstance(new, str) else ""
    try:
        cells = jsonc.loads(current or "{}").get("cells", [])
    except (ValueError, AttributeError):
        cells = []
    sources = []
    for cell in cells if isinstance(cells, list) else []:
        if isinstance(cell, dict) and cell.get("id") == tool_input.get("cell_id") and \
                tool_input.get("edit_mode", "replace") in ("replace", "delete"):
            continue
        source = cell.get("source") if isinstance(cell, dict) else ""
        sources.append("".join(source) if isinstance(source, list) else str(source or ""))
    if tool_input.get("edit_mode") != "delete":
        sources.append(new_text)
    return "\n".join(sources)


def check_bash(call: Call, rules: Sequence[Rule], scan: Scan) -> Optional[str]:
    """A Bash command that writes a covered file, or may (opaque) and names one, is refused."""
    for target in scan.writes:
        found = covering(rules, os.path.realpath(target), call.project, call.home)
        if found:
            return refuse("deny-content", f"baton denied this command: it writes {call.shown(target)}, which the "
                                          f"job's rule {found[0].name} covers, and baton cannot see what Bash writes "
                                          f"({found[0].reason}). Use Write or Edit for that file.")
    if not scan.opaque:
        return None
    for inv in scan.invocations:
        for word in inv.argv[1:]:
            for cwd in inv.cwds if word else ():
                if cwd is None or word is None:
                    continue
                found = covering(rules, os.path.realpath(os.path.join(cwd, word)), call.project, call.home)
                if found:
                    return refuse("deny-content", f"baton denied this command: baton cannot tell what it writes "
                                                  f"({scan.opaque[0]}) and it names {word}, which the job's rule "
                                                  f"{found[0].name} covers ({found[0].reason}). Use Write or Edit "
                                                  "for that file.")
    return None
