"""``baton report --html FILE``: one self-contained HTML page (inline CSS and SVG, no script, nothing
fetched: its Content-Security-Policy forbids it) with the dashboard's figures; the timeline, one
lane per session that worked, named by when it ran and how it ended, and the steps' names on
their bars; every step with its notes and artifacts (:mod:`store.cli.page_steps`); approvals,
side effects, the gate's refusals, alerts and a short event log, with their times
(:mod:`store.cli.page_events`); cost and tokens per step (:mod:`store.cli.charts`); and the steps'
and sessions' figures in full."""

from __future__ import annotations

from html import escape

from store.cli import charts, lanes, page_events, page_steps
from store.cli.dashboard import count, money
from store.cli.timeline import COLOURS
from store.cli.timeline import svg as timeline_svg
from store.monitor.clock import span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping, Optional

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;
color:#111827;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}.sub{color:#6b7280}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(160px,1fr));gap:10px;margin-top:16px}
.card{border:1px solid #e5e7eb;border-radius:8px;padding:10px 12px}.card .v{font-size:20px;font-weight:600}
.card .k{color:#6b7280;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.progress{height:10px;background:#e5e7eb;border-radius:5px;overflow:hidden;margin:8px 0}
.progress div{height:100%;background:#2e9e5b}
svg text{font:11px system-ui,sans-serif;fill:#374151}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:3px 8px;border-bottom:1px solid
#f3f4f6}th{color:#6b7280;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:10px;height:10px;
margin-right:4px;border-radius:2px}.alert{color:#b91c1c}.empty{color:#6b7280}
svg text.bar-name{fill:#fff;font-weight:600}svg text.bar-name.light{fill:#1f2937}svg text.col-name{fill:#4b5563}
.step{border-top:1px solid #f3f4f6;padding:6px 0}.step-head .title{color:#374151}.step-id{font-size:14px}
.badge{display:inline-block;min-width:52px;text-align:center;font-size:11px;border-radius:9px;padding:0 6px;
color:#fff;background:#9aa5b1}.badge.status-done{background:#2e9e5b}.badge.status-failed{background:#d64545}
.badge.status-running{background:#3b82f6}.badge.status-pending{background:#e5e7eb;color:#374151}
ul.notes{margin:2px 0 2px 18px;padding:0;list-style:none}ul.notes li{margin:1px 0}
ul.notes time,td time{color:#6b7280;font-variant-numeric:tabular-nums}li.status-failed b{color:#b91c1c}
.artifacts{margin:2px 0 2px 18px;color:#374151}code{font:12px ui-monospace,Menlo,Consolas,monospace;
background:#f9fafb;padding:0 3px;border-radius:3px}.unknown{color:#b45309;font-weight:600}
.settled b{color:#15803d}span.code{color:#6b7280;font-size:12px}.kind{font-size:11px;color:#6b7280}
.kind.refused,.kind.alert{color:#b91c1c}
"""


def _card(key: str, label: str, shown: str, value: Any, note: str = "") -> str:
    raw = "" if value is None else escape(str(value))
    return (f'<div class="card"><div class="k">{escape(label)}</div><div class="v" id="{key}" data-value="{raw}">'
            f'{escape(shown)}</div>' + (f'<div class="sub">{escape(note)}</div>' if note else "") + "</div>")


def _cards(data: Mapping[str, Any]) -> str:
    cost, tokens, tools = data["cost"], data["tokens"], data["tools"]
    duration = data["duration"]
    refused = sum(tools["refusals"].values())
    cost_note = "complete" if cost["complete"] else (
        f"~{money(cost['estimated_usd'])} with unreported" if cost["estimated_usd"] is not None else "partly unknown")
    cards = [
        _card("steps-done", "steps done", f"{data['done']} / {data['total']}", data["done"]),
        _card("cost-reported", "cost reported", money(cost["reported_usd"]) if cost["reported_usd"] is not None
              else "unknown", cost["reported_usd"], cost_note),
        _card("cost-projected", "projected at completion", money(cost["projected_usd"]), cost["projected_usd"],
              f"limit {money(cost['limit_usd'])}" if cost["limit_usd"] else ""),
        _card("tokens-total", "tokens", count(tokens["total"]), tokens["total"],
              f"{count(tokens['input'])} in, {count(tokens['output'])} out"),
        _card("turns", "model turns", count(data["turns"]), data["turns"]),
        _card("tool-calls", "tool calls", count(tools["calls"]), tools["calls"]),
        _card("tool-failures", "tool failures", count(tools["failures"]), tools["failures"]),
        _card("retries", "retries", str(data["retries"]), data["retries"]),
        _card("approval-wait", "approval wait", span(data["approval_wait_s"]), data["approval_wait_s"]),
        _card("changed-files", "files changed", count(data["changed_files"]), data["changed_files"]),
        _card("sessions", "sessions", str(data["sessions_total"]), data["sessions_total"]),
        _card("wall", "since first record", span(duration["wall_s"]), duration["wall_s"]),
        _card("active", "active", span(duration["active_s"]), duration["active_s"]),
        _card("alerts", "alerts", str(data["alerts_total"]), data["alerts_total"]),
        _card("refusals", "refused by the gate", count(refused), refused),
    ]
    return '<div class="cards">' + "".join(cards) + "</div>"


def _cell(value: Any, numeric: bool = False) -> str:
    return f'<td class="n">{escape(str(value))}</td>' if numeric else f"<td>{escape(str(value))}</td>"


def _sessions_table(data: Mapping[str, Any]) -> str:
    """The sessions that worked, by number and lane name; how many only answered baton's commands."""
    shown, numbers, how = lanes.drawn(data), lanes.numbers(data), lanes.precision(data)
    head = ("<tr><th>session</th><th>ran</th><th>ended</th><th>id</th><th class=n>turns</th><th class=n>calls</th>"
            "<th class=n>failures</th><th class=n>tokens</th><th class=n>cost</th></tr>")
    rows = [f'<tr data-session="{escape(v["id"])}">' + _cell(f"#{numbers[v['id']]}" if v["id"] in numbers else "*")
            + _cell(lanes.span_of(v, how) if v["id"] != "*" else "") + _cell(lanes.ending(v) if v["id"] != "*"
                                                                           else v["ended"])
            + _cell(v["id"][:8] if v["id"] != "*" else "") + _cell(v["turns"], True) + _cell(v["calls"], True)
            + _cell(v["failures"], True) + _cell(count(v["tokens"]["total"]), True)
            + _cell(money(v["cost_usd"]) if v["cost_usd"] is not None else "unknown", True) + "</tr>"
            for v in shown]
    quiet = len(data["sessions"]) - len(shown)
    note = (f'<p class="sub" id="command-sessions">{quiet} more session{"s" if quiet > 1 else ""} only answered '
            "/baton: commands, without a model: not drawn</p>") if quiet else ""
    table = f'<table id="sessions">{head}{"".join(rows)}</table>'
    if len(rows) > 40:
        table = f"<details><summary>all {len(rows)} sessions</summary>{table}</details>"
    return table + note


def _database(data: Mapping[str, Any]) -> str:
    """While the job's database cannot be reached: the line that says the page shows the clone's copy."""
    from store.cli.views import database_lines

    return "".join(f'<p class="alert" id="database">{escape(line)}</p>' for line in database_lines(data))


def _timeline_legend() -> str:
    spans = "".join(f'<span><i style="background:{c}"></i>{o}</span>' for o, c in COLOURS.items())
    return (f'<p class="legend">{spans}<span><i style="background:#991b1b"></i>tool failure</span>'
            '<span><i style="background:#ea580c"></i>alert</span></p>')


def render(data: Mapping[str, Any], now: Optional[float] = None) -> str:
    """The whole page for a status document."""
    title = data["job"] or data["job_id"]
    done = 100 * data["done"] / data["total"] if data["total"] else 100
    current = data["current"]
    nxt = (f'next: <b id="next-step">{escape(current["step"])}</b>' + (f' ({escape(current["phase"])})'
           if current["phase"] else "")) if current else '<b id="next-step">all steps complete</b>'
    names = page_events.Names(data)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>baton report: {escape(title)}</title><style>{STYLE}</style></head>
<body>
<h1>baton report: <span id="job">{escape(title)}</span></h1>
<div class="sub">generated {escape(str(data["generated"]))}; {nxt}</div>
{_database(data)}
<div class="progress" title="{data['done']} of {data['total']} steps"><div style="width:{done:.1f}%"></div></div>
{_cards(data)}
<h2>Timeline</h2>
{timeline_svg(data, now)}
{_timeline_legend()}
<h2>Steps</h2>
{page_steps.section(data)}
<h2>Approvals</h2>
{page_events.approvals(data, names)}
<h2>Side effects (baton once)</h2>
{page_events.side_effects(data, names)}
<h2>Refused by the gate</h2>
{page_events.refusals(data, names)}
<h2>Alerts</h2>
{page_events.alerts(data, names)}
<h2>Event log</h2>
{page_events.log(data, names)}
<h2>Cost per step</h2>
{charts.cost_chart(data)}
<h2>Tokens per step</h2>
{charts.token_chart(data)}
<h2>Step figures</h2>
{page_steps.table(data)}
<h2>Sessions</h2>
{_sessions_table(data)}
</body></html>
"""
