"""The report's steps as a person reads them: each step's name, title and status, the notes its
records carried, attempt by attempt with their times, its validation and its artifacts; then the
figures of every step in one table. Past :data:`MAX_SHOWN` steps both fold away in ``<details>``."""

from __future__ import annotations

from html import escape

from store.cli.dashboard import count, money
from store.cli.lanes import clock, precision
from store.monitor.clock import span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Mapping

MAX_SHOWN = 100


def _notes(step: Mapping[str, Any], how: str) -> List[str]:
    """One line per note a record of the step carried, oldest first (the latest note alone when the
    figures predate notes on attempts)."""
    rows = []
    for attempt in step["attempts"]:
        for note in attempt.get("notes") or ():
            tried = f" (attempt {attempt['n']})" if attempt["n"] else ""
            rows.append(f'<li class="note status-{escape(note["status"])}"><time>{escape(clock(note["ts"], how))}'
                        f'</time> <b>{escape(note["status"])}</b>{escape(tried)}: {escape(note["note"])}</li>')
    if not rows and step.get("note"):
        rows.append(f'<li class="note status-{escape(step["status"])}"><time>{escape(clock(step["ts"], how))}</time> '
                    f'<b>{escape(step["status"])}</b>: {escape(step["note"])}</li>')
    return rows


def _facts(step: Mapping[str, Any], approved: bool) -> str:
    facts = [f"attempt {step['attempt']}"] if step["attempt"] > 1 else []
    facts += [f"validation {step['validation']}"] if step["validation"] not in (None, "none") else []
    facts += [f"{step['refusals']} refused by the gate"] if step["refusals"] else []
    if step["approval"]:
        facts.append("approved by a person" if approved or step["approved"] else "needs a person's approval")
    facts += [f"waited {span(step['approval_wait_s'])} for it"] if step["approval_wait_s"] else []
    return f' <span class="sub">{escape(", ".join(facts))}</span>' if facts else ""


def _one(step: Mapping[str, Any], how: str, approved: bool) -> str:
    title = f' <span class="title">{escape(step["title"])}</span>' if step.get("title") else ""
    notes = _notes(step, how)
    listed = f'<ul class="notes">{"".join(notes)}</ul>' if notes else '<p class="empty">no record yet</p>'
    artifacts = ""
    if step["artifacts"]:
        names = ", ".join(f"<code>{escape(str(a))}</code>" for a in step["artifacts"])
        artifacts = f'<p class="artifacts">artifacts: {names}</p>'
    return (f'<div class="step" id="step-{escape(step["id"])}" data-step="{escape(step["id"])}">'
            f'<div class="step-head"><span class="badge status-{escape(step["status"])}">{escape(step["status"])}'
            f'</span> <b class="step-id">{escape(step["id"])}</b>{title}{_facts(step, approved)}</div>{listed}'
            f'{artifacts}</div>')


def section(data: Mapping[str, Any]) -> str:
    """Every step with its notes and artifacts."""
    how = precision(data)
    approved = {a["step"] for a in data.get("approvals") or ()}
    blocks = "".join(_one(s, how, s["id"] in approved) for s in data["steps"])
    body = f'<div id="step-notes">{blocks}</div>'
    if len(data["steps"]) > MAX_SHOWN:
        return f"<details><summary>all {len(data['steps'])} steps, with their notes</summary>{body}</details>"
    return body


def _cell(value: Any, numeric: bool = False) -> str:
    return f'<td class="n">{escape(str(value))}</td>' if numeric else f"<td>{escape(str(value))}</td>"


def table(data: Mapping[str, Any]) -> str:
    """The figures of every step."""
    head = ("<tr><th>step</th><th>phase</th><th>status</th><th class=n>attempt</th><th class=n>calls</th>"
            "<th class=n>failures</th><th class=n>refused</th><th class=n>tokens</th><th class=n>cost</th>"
            "<th class=n>approval wait</th><th>validation</th><th>last error</th></tr>")
    rows = []
    for s in data["steps"]:
        cost = money(s["cost_usd"]) if s["cost_usd"] is not None else (
            "~" + money(s["cost_estimated_usd"]) if s["cost_estimated_usd"] is not None else "-")
        error = (s["last_error"] or {}).get("error", "")
        rows.append(f'<tr data-step="{escape(s["id"])}">' + _cell(s["id"]) + _cell(s["phase"] or "")
                    + _cell(s["status"]) + _cell(s["attempt"], True) + _cell(s["calls"], True)
                    + _cell(s["failures"], True) + _cell(s["refusals"], True) + _cell(count(s["tokens"]["total"]), True)
                    + _cell(cost, True) + _cell(span(s["approval_wait_s"]) if s["approval_wait_s"] else "", True)
                    + _cell(s["validation"] if s["validation"] not in (None, "none") else "") + _cell(error[:120])
                    + "</tr>")
    body = f'<table id="steps">{head}{"".join(rows)}</table>'
    if len(rows) > MAX_SHOWN:
        return f"<details><summary>all {len(rows)} steps</summary>{body}</details>"
    return body
