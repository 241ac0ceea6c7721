"""SessionStart, as Claude Code starts it, tells a resumed session what it must not trust or
repeat: CHANGED and STALE for DONE steps whose checkpoint no longer holds, UNKNOWN for a side
effect whose outcome is unknown, ONCE for the side effects NEXT already ran."""

from __future__ import annotations

import os
from typing import List

from conftest import Hook, JobDir, Payloads

from store.cli import actions


def context_lines(hook: Hook, payload: Payloads, prefix: str) -> List[str]:
    result = hook("SessionStart", payload("session_start_startup"))
    return [line for line in result.context.splitlines() if line.startswith(prefix)]


def test_a_deleted_artifact_is_changed_in_the_injected_brief(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": [{"id": "build", "artifacts": ["out/app.bin"], "inputs": ["src"]}, "ship"]})
    (job.project / "out").mkdir()
    (job.project / "out" / "app.bin").write_bytes(b"app")
    (job.project / "src").mkdir()
    (job.project / "src" / "a.c").write_text("int a;\n")
    message, code = actions.record_step(job.layout, os.environ, "build", "done", "built")
    assert code == 0, message
    assert context_lines(hook, payload, "CHANGED") == [] and context_lines(hook, payload, "STALE") == []
    (job.project / "out" / "app.bin").unlink()
    (job.project / "src" / "b.c").write_text("int b;\n")
    [changed] = context_lines(hook, payload, "CHANGED: ")
    assert changed.startswith("CHANGED: build: out/app.bin is missing")
    [stale] = context_lines(hook, payload, "STALE: ")
    assert stale.startswith("STALE: build: its inputs changed since it was recorded done (changed: src/b.c)")


def test_an_unknown_outcome_and_a_stored_result_reach_the_session(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["deliver", "report"])
    job.record("deliver", "intent", "./send.sh", key="mail-1")
    job.record("deliver", "intent", "gh pr create", key="pr-1")
    job.record("deliver", "result", "exit 0", key="pr-1", outcome="ran", exit=0, id="https://x/pull/9")
    [unknown] = context_lines(hook, payload, "UNKNOWN: ")
    assert unknown.startswith("UNKNOWN: mail-1 (deliver) started ")
    assert unknown.endswith('verify, then settle: baton once --settle mail-1 done|failed|retry "<evidence>"')
    [ran] = context_lines(hook, payload, "ONCE: ")
    assert ran.startswith("ONCE: pr-1 (deliver) ran at ") and "id https://x/pull/9" in ran
