"""The report's sections of what happened, each with its times: approvals, side effects run through
``baton once`` (each key's intent and how it ended: ran, still unknown, or settled by hand), the
gate's refusals (what was refused and why), the alerts, and a short event log that puts the latest
records, session starts and ends, refusals and alerts in one order. Sessions are named by their
number (:mod:`store.cli.lanes`), never their ids."""

from __future__ import annotations

from html import escape

from store.base.text import one_line
from store.cli.lanes import clock, drawn, ending, numbers, precision
from store.monitor.clock import epoch, iso, span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

LOG_ROWS = 30
SHOWN = 50  # rows of a section shown; the rest are counted


def _row(cells: List[str], attrs: str = "") -> str:
    return f"<tr{attrs}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _table(key: str, head: List[str], rows: List[str], total: int, what: str) -> str:
    more = f'<p class="sub">the latest {len(rows)} of {total} {what}</p>' if total > len(rows) else ""
    return (f'<table id="{key}"><tr>' + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"
            + "".join(rows) + "</table>" + more)


class Names:
    """How a time and a session are written on this page."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.how, self.numbers = precision(data), numbers(data)

    def at(self, ts: Optional[str]) -> str:
        return f'<time datetime="{escape(str(ts or ""))}">{escape(clock(ts, self.how))}</time>'

    def session(self, sid: Optional[str]) -> str:
        if not sid:
            return "outside a session"
        number = self.numbers.get(sid)
        return f"#{number}" if number else "an earlier one"


def approvals(data: Mapping[str, Any], names: Names) -> str:
    items = data.get("approvals") or []
    if not items:
        return '<p class="empty" id="no-approvals">No step was approved.</p>'
    waits = {s["id"]: s["approval_wait_s"] for s in data["steps"]}
    rows = []
    for a in items[-SHOWN:]:
        waited = waits.get(a["step"])
        who = " ".join(x for x in (a.get("by") or "", a.get("via") or "") if x)
        rows.append(_row([names.at(a["ts"]), f'<b>{escape(a["step"])}</b>', escape(a["note"] or ""), escape(who),
                          escape(span(waited) if waited else "")], f' data-step="{escape(a["step"])}"'))
    return _table("approvals", ["approved", "step", "note", "by", "waited"], rows, len(items), "approvals")


UNKNOWN = '<span class="unknown">outcome unknown: no result was recorded</span>'
OPEN = '<span class="unknown">no result yet: running now, or unknown until settled</span>'


def _result(result: Mapping[str, Any], names: Names) -> str:
    when = names.at(result["ts"])
    if result.get("settles") is not None:
        where = "in a terminal" if not result.get("session") else f"in session {names.session(result['session'])}"
        return (f'{when} <span class="settled">settled <b>{escape(result["outcome"])}</b> by hand '
                f'({escape(where)})</span>: {escape(result.get("note") or "")}')
    if result["outcome"] == "ran":
        found = f", id {escape(result['id'])}" if result.get("id") else ""
        return f"{when} ran: exit {escape(str(result['exit']))}{found}"
    return f"{when} not run: {escape(result.get('note') or '')}"


def _outcome(results: List[Mapping[str, Any]], open_now: bool, names: Names) -> List[str]:
    """How one run ended: its result, or that it had none (and how that was settled)."""
    lines: List[str] = []
    for result in results:
        if result.get("settles") is not None and not lines:
            lines.append(UNKNOWN)
        lines.append(_result(result, names))
    return lines or [OPEN if open_now else UNKNOWN]


def _runs(records: List[Mapping[str, Any]]) -> List[Tuple[Mapping[str, Any], List[Mapping[str, Any]]]]:
    """Each intent with the results that followed it for its key, in order."""
    rows: List[Tuple[Mapping[str, Any], List[Mapping[str, Any]]]] = []
    latest: Dict[str, int] = {}
    for record in records:
        if record["status"] == "intent":
            latest[record["key"]] = len(rows)
            rows.append((record, []))
        elif record["key"] in latest:
            rows[latest[record["key"]]][1].append(record)
    return rows


def side_effects(data: Mapping[str, Any], names: Names) -> str:
    once = data["once"]
    records = once.get("records") or []
    if not records:
        return '<p class="empty" id="no-effects">No side effect ran through baton once.</p>'
    still_open = {o["key"]: o["seq"] for o in once["open"]}
    runs = _runs(records)
    last = {intent["key"]: i for i, (intent, _) in enumerate(runs)}
    rows = []
    for i, (intent, results) in enumerate(runs):
        open_now = intent["key"] in still_open and last[intent["key"]] == i
        rows.append(_row([names.at(intent["ts"]), f'<b>{escape(intent["key"])}</b>', escape(intent["step"]),
                          f'<code>{escape(intent["note"] or "")}</code>',
                          "<br>".join(_outcome(results, open_now, names))], f' data-key="{escape(intent["key"])}"'))
    return _table("side-effects", ["started", "key", "step", "command", "outcome"], rows[-SHOWN:], len(rows),
                  "side effects")


def refusals(data: Mapping[str, Any], names: Names) -> str:
    items = data.get("refused") or []
    counted = data["tools"]["refusals"]
    if not items and not counted:
        return '<p class="empty" id="no-refusals">The gate refused nothing.</p>'
    codes = ", ".join(f"{escape(code)} {n}" for code, n in sorted(counted.items(), key=lambda kv: -kv[1]))
    rows = [_row([names.at(r["ts"]), escape(names.session(r["session"])), escape(r["step"] or ""),
                  escape(r["tool"] or "?"), f'<code>{escape(r["target"] or "")}</code>',
                  f'{escape(r["reason"])} <span class="code">[{escape(r["code"])}]</span>'])
            for r in items[-SHOWN:]]
    total = sum(counted.values())
    summary = f'<p class="sub">{total} refused in all, by code: {codes}</p>' if counted else ""
    return summary + _table("refusals", ["refused", "session", "step", "tool", "what", "why"], rows, total,
                            "refusals")


def alerts(data: Mapping[str, Any], names: Names) -> str:
    if not data["alerts"]:
        return '<p class="empty" id="no-alerts">No alert was raised.</p>'
    items = "".join(f'<li class="alert">{names.at(a.get("ts"))} {escape(str(a.get("message")))}</li>'
                    for a in data["alerts"][-SHOWN:])
    return f'<ul id="alert-list">{items}</ul>'


def _record_text(record: Mapping[str, Any]) -> str:
    status, note = str(record.get("status")), one_line(str(record.get("note") or ""), 160)
    if status in ("intent", "result"):
        key = record.get("key") or ""
        return f"once {key}: " + (f"started {note}" if status == "intent" else
                                  f"settled {record.get('outcome')}: {note}" if record.get("settles")
                                  else f"result, {note}")
    return f"{record.get('step')} {status}" + (f": {note}" if note else "")


def log(data: Mapping[str, Any], names: Names) -> str:
    """The latest :data:`LOG_ROWS` events of every kind, in time order."""
    found: List[Tuple[float, str, str, str]] = []  # time, session, kind, what
    for record in data.get("last") or ():
        found.append((epoch(record.get("ts")) or 0.0, names.session(record.get("session")), "record",
                      _record_text(record)))
    for view in drawn(data):
        if view["id"] == "*":
            continue
        found.append((epoch(view["start"]) or 0.0, names.session(view["id"]), "session",
                      f"started ({view['source'] or 'startup'})"))
        if view["ended"] != "open":
            found.append((epoch(view["end"]) or 0.0, names.session(view["id"]), "session", ending(view)))
    for r in data.get("refused") or ():
        found.append((epoch(r["ts"]) or 0.0, names.session(r["session"]), "refused",
                      f"{r['tool'] or 'a call'} refused [{r['code']}]: {one_line(r['target'] or r['reason'], 120)}"))
    for a in data["alerts"]:
        found.append((epoch(a.get("ts")) or 0.0, names.session(a.get("session")), "alert", str(a.get("message"))))
    found.sort(key=lambda item: item[0])
    rows = [_row([names.at(iso(t)), escape(who), f'<span class="kind {kind}">{kind}</span>', escape(what)])
            for t, who, kind, what in found[-LOG_ROWS:]]
    if not rows:
        return '<p class="empty">Nothing has happened yet.</p>'
    return _table("event-log", ["time", "session", "kind", "what"], rows, len(rows), "events")
