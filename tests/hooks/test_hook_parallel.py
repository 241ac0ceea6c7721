"""The hooks with a parallel plan: each session is a worker that SessionStart gives a step of its
own; the gate applies that step's policy (and only reading to a worker without one); the Stop
hook sends a worker back while ready work exists for it, claiming it, and lets it go otherwise;
every tool call renews the worker's lease. A plan without ``needs`` keeps its old meaning."""

from __future__ import annotations

import time
from typing import Any, Dict, List

import hookkit
from conftest import Hook, JobDir, Payloads

from store.state import leases

ALPHA = "aaaaaaaa-1111-4000-8000-000000000001"
BETA = "bbbbbbbb-2222-4000-8000-000000000002"
GAMMA = "cccccccc-3333-4000-8000-000000000003"

PLAN = {"steps": [
    {"id": "docs", "needs": [], "writes": ["docs/**"]},
    {"id": "code", "needs": [], "writes": ["src/**"]},
    {"id": "ship", "needs": ["docs", "code"], "writes": ["CHANGELOG.md"]},
]}


def next_line(brief: str) -> str:
    return next(line for line in brief.splitlines() if line.startswith("NEXT: "))


def claims(job: JobDir) -> List[Dict[str, Any]]:
    return [r for r in job.ledger() if r["status"] in ("claim", "release")]


def start(hook: Hook, payload: Payloads, session: str) -> str:
    result = hook("SessionStart", payload("session_start_startup", session_id=session))
    return result.context


def write(payload: Payloads, job: JobDir, session: str, rel: str) -> hookkit.Payload:
    return payload("pre_tool_use_write", session_id=session, tool_input={"file_path": job.path(rel), "content": "x"})


def test_two_sessions_starting_get_different_steps(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    first, second, third = (start(hook, payload, s) for s in (ALPHA, BETA, GAMMA))
    assert next_line(first) == "NEXT: docs"
    assert next_line(second) == "NEXT: code"
    assert "OTHERS: 1 other worker: docs (aaaaaaaa, active" in second
    assert next_line(third) == ("NEXT: (nothing ready for you now: 2 held by other workers, 1 waiting for steps "
                                "not done yet - stop)")
    assert [(r["step"], r["status"], r["worker"]) for r in claims(job)] == [("docs", "claim", ALPHA),
                                                                            ("code", "claim", BETA)]
    again = start(hook, payload, ALPHA)  # resumed: the same step, no new claim
    assert next_line(again) == "NEXT: docs" and len(claims(job)) == 2


def test_the_gate_applies_the_claimed_steps_policy(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    start(hook, payload, ALPHA)
    start(hook, payload, BETA)
    assert not hook("PreToolUse", write(payload, job, ALPHA, "docs/guide.md")).denied
    refused = hook("PreToolUse", write(payload, job, ALPHA, "src/main.py"))
    assert refused.denied and "step docs may write only docs/**" in refused.reason
    assert not hook("PreToolUse", write(payload, job, BETA, "src/main.py")).denied
    assert hook("PreToolUse", write(payload, job, BETA, "docs/guide.md")).denied


def test_a_worker_without_a_step_may_only_read(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    start(hook, payload, ALPHA)
    start(hook, payload, BETA)
    start(hook, payload, GAMMA)  # nothing left for it
    refused = hook("PreToolUse", write(payload, job, GAMMA, "docs/guide.md"))
    assert refused.denied and refused.reason.endswith("[baton:no-claim]")
    assert "Run `baton claim` to take a ready step" in refused.reason
    bash = payload("pre_tool_use_bash", session_id=GAMMA, tool_input={"command": "baton claim", "description": "c"})
    assert not hook("PreToolUse", bash).denied
    reading = payload("pre_tool_use_bash", session_id=GAMMA, tool_input={"command": "ls src", "description": "l"})
    assert not hook("PreToolUse", reading).denied


def test_stop_sends_a_worker_to_the_next_ready_step_it_claims(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    start(hook, payload, ALPHA)
    start(hook, payload, BETA)
    blocked = hook("Stop", payload("stop", session_id=ALPHA))
    assert blocked.answer is not None and "NEXT: docs." in blocked.reason  # its own step, not done yet
    job.record("docs", "done", worker=ALPHA)
    let_go = hook("Stop", payload("stop", session_id=ALPHA))  # ship needs code, held by BETA: nothing ready
    assert let_go.out == "" and [r["status"] for r in job.ledger()].count("stop") == 0
    job.record("code", "done")
    sent = hook("Stop", payload("stop", session_id=BETA))
    assert sent.answer is not None and "NEXT: ship." in sent.reason
    assert claims(job)[-1]["step"] == "ship" and claims(job)[-1]["worker"] == BETA
    assert hook("Stop", payload("stop", session_id=ALPHA)).out == ""  # ship is BETA's


def test_a_worker_that_gives_up_gives_its_step_back(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    start(hook, payload, ALPHA)
    assert hook("Stop", payload("stop", session_id=ALPHA)).answer is not None
    assert hook("Stop", payload("stop", session_id=ALPHA)).out == ""  # nothing recorded since: let go
    assert [(r["step"], r["status"]) for r in job.ledger()][-2:] == [("docs", "stop"), ("docs", "release")]
    taken = start(hook, payload, BETA)
    assert next_line(taken) == "NEXT: docs"
    assert "LEFT RUNNING: docs was claimed by worker aaaaaaaa" in taken and "which gave it back" in taken


def test_tool_calls_renew_the_lease(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    start(hook, payload, ALPHA)
    time.sleep(1.2)  # leases are judged by the file system's clock, which a test cannot move: wait
    [before] = [lease for lease in leases.file_leases(job.layout, _plan(job), _snap(job)) if lease.worker == ALPHA]
    hook("PostToolUse", payload("post_tool_use_write", session_id=ALPHA,
                                tool_input={"file_path": job.path("docs/a.md"), "content": "x"}))
    [after] = [lease for lease in leases.file_leases(job.layout, _plan(job), _snap(job)) if lease.worker == ALPHA]
    assert before.idle >= 1 and after.idle < before.idle and after.left > before.left


def test_each_worker_counts_the_files_its_own_step_changed(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({**PLAN, "limits": {"changed_files": 2}})
    start(inproc, payload, ALPHA)
    start(inproc, payload, BETA)
    for n in range(3):  # the workers take turns; neither resets the other's count
        for session, folder in ((ALPHA, "docs"), (BETA, "src")):
            call = write(payload, job, session, f"{folder}/f{n}.md")
            answer = inproc("PreToolUse", call)
            assert answer.denied == (n == 2), (session, n, answer.reason)
            if n == 2:
                assert answer.reason.endswith("[baton:changed-files]")
                continue
            inproc("PostToolUse", {**call, "hook_event_name": "PostToolUse",
                                   "tool_response": {"type": "create", "filePath": call["tool_input"]["file_path"]}})


def test_commands_that_name_batons_tables_are_refused(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": [{"id": "open", "needs": []}]})  # a step that may write anything
    start(hook, payload, ALPHA)
    for command in ('psql "$BATON_DATABASE_URL" -c "DELETE FROM baton_records"',
                    "python3 -c 'import psycopg; psycopg.connect().execute(\"UPDATE BATON_CLAIMS SET worker=null\")'"):
        call = payload("pre_tool_use_bash", session_id=ALPHA, tool_input={"command": command, "description": "x"})
        refused = hook("PreToolUse", call)
        assert refused.denied and refused.reason.endswith("[baton:own-files]"), command
        assert "baton's tables in the job's database" in refused.reason
    fine = payload("pre_tool_use_bash", session_id=ALPHA, tool_input={"command": "psql -c 'select 1'",
                                                                         "description": "x"})
    assert not hook("PreToolUse", fine).denied


def test_without_needs_sessions_share_one_next_and_claim_nothing(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": ["a", "b"]})
    assert next_line(start(hook, payload, ALPHA)) == "NEXT: a"
    assert next_line(start(hook, payload, BETA)) == "NEXT: a"
    assert job.ledger() == []


def _plan(job: JobDir) -> Any:
    from store.plan.plan import load_plan

    return load_plan(job.layout.plan)


def _snap(job: JobDir) -> Any:
    from store.state import journal

    return journal.read_state(job.layout).snapshot
