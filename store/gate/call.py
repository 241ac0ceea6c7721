"""What the gate knows about one tool call, and the step policy that call is checked against.

``Call`` holds the tool, its input and the places that matter (cwd, project, ``.baton``, the
approval key's folder); ``Rules`` is the NEXT step's effective policy: its explicit fields, then
its phase's defaults (:data:`PHASE_DEFAULTS`). ``refuse`` words every refusal the same way: the
reason for the model, then ``[baton:CODE]``, the code that names the check that refused.
"""

from __future__ import annotations

import os
import stat

from store.base import paths
from store.sandbox.code_paths import HOME_CODE, PROJECT_CODE
from store.sandbox.own_paths import own_paths
from store.state import approvals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

    from store.plan.plan import Plan, Step

WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"}
TEST_COMMANDS = ("pytest*", "python -m pytest*", "python3 -m pytest*", "npm test*", "npm run test*",
                 "yarn test*", "pnpm test*", "make test*", "make check*", "go test*", "cargo test*",
                 "tox*", "nox*", "ruff*", "mypy*")
# phase -> defaults for fields the step leaves out (docs/plan-and-state.md: "Phase defaults")
PHASE_DEFAULTS: Dict[str, Dict[str, Tuple[str, ...]]] = {
    "discovered": {"writes": ()},
    "planned": {"writes": ()},
    "approved": {"writes": ()},
    "implemented": {},
    "validated": {"writes": (), "bash": TEST_COMMANDS},
    "published": {},
}
CHAINS = ";&|<>`\n\r"  # with "$(": what joins, pipes or redirects commands (no regex compiled at import)


def refuse(code: str, reason: str) -> str:
    """A refusal as the model reads it; ``code`` is listed in docs/gate.md's table of refusal codes."""
    return f"{reason} [baton:{code}]"


class Rules:
    """A step's effective policy: explicit fields, then its phase's defaults."""

    def __init__(self, step: Optional[Step]) -> None:
        self.step = step
        self.tools: Optional[Tuple[str, ...]] = self._pick("tools")
        self.writes: Optional[Tuple[str, ...]] = self._pick("writes")
        self.bash: Tuple[str, ...] = self._pick("bash") or ()

    def _pick(self, name: str) -> Optional[Tuple[str, ...]]:
        explicit: Optional[Tuple[str, ...]] = getattr(self.step, name) if self.step else None
        if explicit is not None:
            return explicit
        return PHASE_DEFAULTS.get(self.step.phase or "", {}).get(name) if self.step else None

    @property
    def name(self) -> str:
        return self.step.id if self.step else "?"

    @property
    def may_write(self) -> str:
        """What the step may write, as a refusal says it: "may write only src/**, tests/**"."""
        return f"may write only {', '.join(self.writes)}" if self.writes else "may not write any file (it only reads)"


class Call:
    """What the gate knows about one tool call."""

    def __init__(self, tool: str, tool_input: Mapping[str, Any], cwd: str, project: str, state_dir: str,
                 home: str, env: Mapping[str, str]) -> None:
        self.tool, self.input, self.cwd, self.home, self.env = tool, tool_input, cwd, home, env
        self.external = 0  # operations this call sends out of the machine (limits.external_ops)
        self.project = os.path.realpath(project)
        self.state_dirs = (state_dir, os.path.realpath(state_dir))
        self.key_dirs = (approvals.key_dir(env), os.path.realpath(approvals.key_dir(env)))

    def shown(self, target: str) -> str:
        """A path as the model should read it: resolved, project-relative when inside."""
        real = os.path.realpath(target)
        rel = paths.relative(real, self.project)
        return rel if rel else real


def protected(call: Call, real: str, raw_abs: str, plan: Optional[Plan]) -> Optional[Tuple[str, str]]:
    """(code, why) when a write to this path is never allowed, whatever the step."""
    for path in (real, raw_abs):
        if any(paths.under(path, d) for d in call.state_dirs):
            return "own-files", ("it is inside .baton/, baton's own state; the ledger changes only through "
                                 "`baton record`")
        if any(paths.under(path, d) for d in call.key_dirs):
            return "key", "it is baton's approval key; only a person approves steps, with /baton:approve"
        if any(paths.under(path, d) for d in own_paths(call.env)):
            return "own-files", ("it is baton's own code or state (the plugin's folder, its module cache or the "
                                 "sandbox probe), which every later hook runs or reads outside the sandbox")
    if plan and plan.protect and paths.allowed(real, call.project, call.home, plan.protect):
        return "protect", "the plan's `protect` list covers it"
    if plan and runs_code(call, real):
        return "runs-code", ("Claude Code, git or your shell would run what it holds later, outside baton's sandbox, "
                             "so while a job is active only the person edits it")
    return None


def runs_code(call: Call, real: str) -> bool:
    """``real`` is one of the files that make other programs run code later (``code_paths``), or
    one of the person's Claude Code settings files, wherever they lie."""
    home = os.path.realpath(call.home)
    if any(paths.under(real, os.path.join(call.project, rel)) for rel in PROJECT_CODE) or \
            any(paths.under(real, os.path.join(home, rel)) for rel in HOME_CODE):
        return True
    from store.sandbox.claude_settings import settings_files  # the person's: a --settings file may lie anywhere

    return any(paths.under(real, os.path.realpath(path)) for path in settings_files(call.project, call.env))


def hard_link(call: Call, real: str, plan: Optional[Plan]) -> Optional[Tuple[str, str]]:
    """(code, why) when writing ``real`` would also write a file by another name: a file with other
    hard links, one of them baton's own file or the key (found by looking there), or any while a
    job is active, since its other names may lie outside the step's writes, under ``protect`` or
    among the files that run code later, and cannot be listed. A new hard link is caught where it
    is made: ``ln`` counts its source as written."""
    try:
        info = os.stat(real)
    except OSError:
        return None
    if info.st_nlink < 2 or not stat.S_ISREG(info.st_mode):
        return None
    for code, folder, what in (("own-files", call.state_dirs[1], "baton's own file"),
                               ("key", call.key_dirs[1], "baton's approval key")):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            try:
                other = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                return code, f"it is a hard link to {name} in {folder}, {what}"
    if plan is not None:
        return "hard-link", (f"it has {info.st_nlink} hard links, and while a job is active baton cannot tell that "
                             "none of the other names is outside the step's writes or protected")
    return None


BATON_TABLES = r"\bbaton_(?:records|jobs|claims|writes|meta)\b"  # store.backend.postgres


def _mentions_tables(text: str) -> bool:
    import re  # only for a text that names one: most calls never load it

    return re.search(BATON_TABLES, text) is not None


def mentions_protected(command: str) -> Optional[str]:
    folded = paths.fold(command)
    if ".baton" in folded or "baton/approval" in folded or approvals.KEY_NAME in folded or \
            "baton/telemetry.env" in folded:
        return ("the command names baton's own files (.baton/, the approval key or the telemetry settings), which no "
                "tool may touch")
    if "baton_" in folded and _mentions_tables(folded):
        return "the command names baton's tables in the job's database, which change only through `baton record`"
    return None


def chains(command: str) -> bool:
    """``command`` joins, pipes or redirects (``;`` ``&`` ``|`` ``<`` ``>``, a backquote, ``$(``, a line break)."""
    return "$(" in command or any(c in command for c in CHAINS)


def matches_any(command: str, patterns: Sequence[str]) -> bool:
    """``command`` (whitespace collapsed) matches a pattern and chains nothing else."""
    from store.base.wild import fnmatchcase

    flat = " ".join(command.split())  # look for chaining before collapsing: a newline separates commands
    return not chains(command) and any(fnmatchcase(flat, p) for p in patterns)


def tools_check(call: Call, rules: Rules) -> Optional[str]:
    if rules.tools is not None and call.tool not in rules.tools:
        return refuse("tools", f"baton denied {call.tool}: step {rules.name} allows only the tools "
                               f"{', '.join(rules.tools) or '(none)'}. Use one of those, or record the step when it "
                               "is done.")
    return None
