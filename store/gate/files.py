"""Write, Edit and NotebookEdit: may the file this call names be written now?

Never inside ``.baton/``, the approval key's folder or the plan's ``protect`` globs, nor content a
``deny_content`` rule forbids; nothing while only reading is allowed; otherwise only tools the
step allows, inside the step's ``writes``.
Paths are resolved through symlinks before any comparison (see ``store.base.paths``). A file with
another hard link is refused when that name is baton's own file or the key, and any such file
while a job is active (the other name may lie outside the step's writes), and so is every write
while a sandboxed Bash command still runs in the background, or was allowed and has not started yet
(``store.sandbox.runs``): these tools run outside the sandbox, and such a command could swap a folder
on the path for a symlink between this check and the write.
"""

from __future__ import annotations

import os

from store.base import paths
from store.gate.call import WRITE_TOOLS, Call, Rules, hard_link, protected, refuse, tools_check

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Tuple

    from store.plan.plan import Plan


def target_reason(call: Call, raw: str, plan: Optional[Plan], rules: Rules) -> Optional[str]:
    real = paths.resolve(raw, call.cwd, call.home)
    raw_abs = os.path.normpath(os.path.join(call.cwd, raw))
    found = protected(call, real, raw_abs, plan)
    if found:
        return refuse(found[0], f"baton denied writing {raw}: {found[1]}.")
    if rules.writes is not None and not paths.allowed(real, call.project, call.home, rules.writes):
        shown = paths.relative(real, call.project)
        where = f"{shown} (resolved)" if shown is not None else f"{real}, outside the project"
        inside = "Write inside those paths, or finish" if rules.writes else "Finish"
        return refuse("writes", f"baton denied writing {where}: step {rules.name} {rules.may_write}. {inside} "
                                "this step and record it (`baton record STEP done`) first.")
    return None


def decide_write(call: Call, plan: Optional[Plan], rules: Rules,
                 read_only: Optional[Tuple[str, str]]) -> Optional[str]:
    raw = call.input.get(WRITE_TOOLS[call.tool]) if isinstance(call.input, dict) else None
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        return refuse("payload", f"baton denied {call.tool}: the call has no usable path, so it cannot be checked.")
    never = target_reason(call, raw, plan, Rules(None)) or _linked(call, raw, plan) or _racing(call, raw, plan)
    if never:
        return never
    if plan is not None:
        from store.gate.rules import checks_for  # the plan's rules that judge a file's writes (deny_content)

        for check in checks_for(plan, "write"):
            verdict = check(call, plan, raw)
            if verdict:
                return verdict
    if read_only:
        return refuse(read_only[0], f"baton denied {call.tool} on {raw}: {read_only[1]}")
    return tools_check(call, rules) or target_reason(call, raw, plan, rules)


def _linked(call: Call, raw: str, plan: Optional[Plan]) -> Optional[str]:
    """A hard link would let this tool write another file under this name (:func:`store.gate.call.hard_link`)."""
    found = hard_link(call, paths.resolve(raw, call.cwd, call.home), plan)
    if found is None:
        return None
    return refuse(found[0], f"baton denied writing {raw}: {found[1]}. Remove this name (`rm` it; the other names keep "
                            "the content) and write a new file.")


def _racing(call: Call, raw: str, plan: Optional[Plan]) -> Optional[str]:
    if plan is None:
        return None
    from store.sandbox import runs

    live = runs.running(call.state_dirs[1])
    if not live:
        return None
    shown = " ".join(str(live[0].get("command", "")).split())[:80]
    if all(run.get("pending") for run in live):
        return refuse("background", f"baton denied {call.tool} on {raw}: the sandboxed command `{shown}` was allowed "
                                    "and its shell has not started yet (Claude Code starts it, in the background or "
                                    "after its approval), and this tool writes outside the sandbox, where that command "
                                    "could swap a folder on the path for a symlink. Edit the file with a Bash command "
                                    f"(it runs sandboxed), or try again once it has started or within "
                                    f"{runs.PENDING_SECONDS:g} s if it was refused.")
    return refuse("background", f"baton denied {call.tool} on {raw}: the sandboxed command `{shown}` is still running "
                                "(in the background), and this tool writes outside the sandbox, where that command "
                                "could swap a folder on the path for a symlink. Edit the file with a Bash command "
                                "(it runs sandboxed), or stop the background command first.")
