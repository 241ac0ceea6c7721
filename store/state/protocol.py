"""The words baton puts in front of the model: the resume protocol and the Stop reminder.

Written as one loop on purpose: an instruction to "do one step and stop" gets obeyed.
"""

from __future__ import annotations

PROTOCOL = (
    "baton keeps this job's plan and progress on disk, outside the conversation. You may be resuming "
    "a job that is already partly done: trust the brief below, do not start over and do not redo steps "
    "listed under DONE. Work in one loop until the job is complete: (1) do the one step that NEXT names; "
    "(2) when it is finished, record it: baton record <step> done \"<one line: what you produced>\" "
    "(or failed \"<why>\"); run a side effect that must not happen twice (a message, a pull request, a "
    "deploy) as baton once <key> -- <command>, which never runs the same key twice; "
    "(3) run baton brief and go on with the new NEXT. baton commands may follow your work in one command "
    "(work && baton record ...); one that answers it cannot be carried there must be run as a command of its "
    "own. Stop only when NEXT says all steps are complete, or "
    "when a line says WAITING for a person. Lines such as LEFT RUNNING, UNKNOWN, CHANGED, STALE, RETRY or "
    "DEGRADED are news to act on."
)

HEADER = "baton brief (current state of this job):"


def session_context(brief: str) -> str:
    return f"{PROTOCOL}\n\n{HEADER}\n{brief}"


def stop_reason(next_line: str, step_id: str, used: int, budget: int) -> str:
    return (f"baton: the job is not finished. {next_line}. Do that step, record it with "
            f"baton record {step_id} done \"<note>\", run baton brief, and keep going until NEXT says all "
            f"steps are complete. (baton has sent this session back {used} of at most {budget} times.)")
