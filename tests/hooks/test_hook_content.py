"""deny_content through the hook: Write on its content, Edit applied to the current file, NotebookEdit
on the notebook's cells, Bash refused when it writes (or may write) a covered file. Then by doing:
what passes is applied as Claude Code would apply it, and no covered file ends up matching."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, NamedTuple, Optional

import pytest
from conftest import Hook, JobDir, Payloads

PATTERN = r"DEBUG\s*=\s*True|-----BEGIN [A-Z ]*PRIVATE KEY-----|api_key\s*="
RULE = {"id": "safe-config", "deny_content": {"files": ["settings/prod*.py", "**/*.pem", "**/*.ipynb"],
                                             "pattern": PATTERN}, "reason": "production runs without debug"}
NOTEBOOK = {"cells": [{"id": "c1", "cell_type": "code", "source": ["api_key = 'x'\n"], "metadata": {},
                       "outputs": [], "execution_count": None},
                      {"id": "c2", "cell_type": "code", "source": "print(1)", "metadata": {}, "outputs": [],
                       "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


class Case(NamedTuple):
    tool: str
    path: str
    tool_input: Dict[str, Any]
    before: Optional[str]  # the file's content before the call (None: absent)
    refused: bool


R, P = True, False
CASES: List[Case] = [
    Case("Write", "settings/prod.py", {"content": "DEBUG = True\n"}, None, R),
    Case("Write", "settings/prod.py", {"content": "x = 1\nDEBUG=True\n"}, "DEBUG = False\n", R),
    Case("Write", "settings/prod_eu.py", {"content": "DEBUG = True\n"}, None, R),
    Case("Write", "settings/prod.py", {"content": "DEBUG = False\n"}, "DEBUG = True\n", P),
    Case("Write", "settings/dev.py", {"content": "DEBUG = True\n"}, None, P),
    Case("Write", "keys/server.pem", {"content": "-----BEGIN RSA PRIVATE KEY-----\nMII\n"}, None, R),
    Case("Write", "keys/server.pem", {"content": "-----BEGIN CERTIFICATE-----\n"}, None, P),
    Case("Edit", "settings/prod.py", {"old_string": "False", "new_string": "True"}, "DEBUG = False\n", R),
    Case("Edit", "settings/prod.py", {"old_string": "# end", "new_string": "# fin"}, "DEBUG = True\n# end\n", R),
    Case("Edit", "settings/prod.py", {"old_string": "DEBUG = True", "new_string": "DEBUG = False"},
         "DEBUG = True\n", P),
    Case("Edit", "settings/prod.py", {"old_string": "x", "new_string": "DEBUG = True", "replace_all": True},
         "x\nx\n", R),
    Case("Edit", "settings/prod.py", {"old_string": "absent", "new_string": "DEBUG = True"}, "y = 1\n", P),
    Case("Edit", "settings/prod.py", {"old_string": "", "new_string": "DEBUG = True\n"}, None, R),
    Case("Edit", "settings/prod.py", {"old_string": "y = 1", "new_string": "y = 2"}, "y = 1\n", P),
    Case("NotebookEdit", "nb/a.ipynb", {"cell_id": "c2", "new_source": "api_key = 'k'"},
         json.dumps({**NOTEBOOK, "cells": NOTEBOOK["cells"][1:]}), R),
    Case("NotebookEdit", "nb/a.ipynb", {"cell_id": "c1", "new_source": "key = load()"}, json.dumps(NOTEBOOK), P),
    Case("NotebookEdit", "nb/a.ipynb", {"cell_id": "c1", "edit_mode": "delete", "new_source": ""},
         json.dumps(NOTEBOOK), P),
    Case("NotebookEdit", "nb/a.ipynb", {"cell_id": "c2", "new_source": "print(2)"}, json.dumps(NOTEBOOK), R),
]
BASH: List[tuple[str, bool]] = [
    ("echo 'DEBUG = True' >> settings/prod.py", R),
    ("sed -i s/False/True/ settings/prod.py", R),
    ("cp settings/dev.py settings/prod.py", R),
    ("tee settings/prod.py < /dev/null", R),
    ("cd settings && echo x > prod.py", R),
    ("python3 fix.py settings/prod.py", R),
    ("cat settings/prod.py", P),
    ("grep DEBUG settings/prod.py", P),
    ("echo 'DEBUG = True' > settings/dev.py", P),
    ("python3 other.py", P),
]


def payload_for(payload: Payloads, job: JobDir, case: Case) -> Dict[str, Any]:
    key = "notebook_path" if case.tool == "NotebookEdit" else "file_path"
    name = {"Write": "pre_tool_use_write", "Edit": "pre_tool_use_edit",
            "NotebookEdit": "pre_tool_use_notebook_edit"}[case.tool]
    return payload(name, tool_input={key: job.path(case.path), **case.tool_input})


def apply(case: Case, text: Optional[str]) -> str:
    """What Claude Code writes for the call (the cells' sources for a notebook)."""
    if case.tool == "Write":
        return str(case.tool_input["content"])
    if case.tool == "Edit":
        old, new = case.tool_input["old_string"], case.tool_input["new_string"]
        if text is None or old not in text:
            return text if text is not None else new
        return text.replace(old, new) if case.tool_input.get("replace_all") else text.replace(old, new, 1)
    cells = [c for c in json.loads(text or "{}").get("cells", []) if c["id"] != case.tool_input["cell_id"]]
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
    added = [] if case.tool_input.get("edit_mode") == "delete" else [case.tool_input["new_source"]]
    return "\n".join(sources + added)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.tool} {c.path} {c.tool_input}"[:70] for c in CASES])
def test_writes(case: Case, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"rules": [RULE], "steps": ["a"]})
    target = job.project / case.path
    target.parent.mkdir(parents=True, exist_ok=True)
    if case.before is not None:
        target.write_text(case.before)
    result = hook("PreToolUse", payload_for(payload, job, case))
    assert result.denied is case.refused, result.reason
    if result.denied:
        assert result.reason.endswith("[baton:deny-content]") and "safe-config" in result.reason
        assert (target.read_text() if target.exists() else None) == case.before  # nothing ran
    elif case.path != "settings/dev.py":  # by doing: the content Claude Code now writes does not match
        assert re.search(PATTERN, apply(case, case.before), re.MULTILINE) is None


@pytest.mark.parametrize("command,refused", BASH, ids=[c for c, _ in BASH])
def test_bash(command: str, refused: bool, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"rules": [RULE], "steps": ["a"]})
    (job.project / "settings").mkdir()
    (job.project / "settings" / "prod.py").write_text("DEBUG = False\n")
    result = hook("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": command, "description": "x"}))
    assert result.denied is refused, result.reason
    if refused:
        assert "[baton:deny-content]" in result.reason and "Use Write or Edit" in result.reason


def test_the_reason_names_the_rule_the_line_and_the_match(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"rules": [RULE], "steps": ["a"]})
    case = Case("Write", "settings/prod.py", {"content": "A = 1\nDEBUG = True\n"}, None, R)
    reason = inproc("PreToolUse", payload_for(payload, job, case)).reason
    assert "the file would match the job's rule safe-config" in reason
    assert "at line 2: `DEBUG = True`: production runs without debug. Write it without that." in reason
