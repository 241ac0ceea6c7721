"""``baton report --html FILE``: one self-contained HTML page (inline CSS and SVG, no script, nothing
fetched: its Content-Security-Policy forbids it) with the dashboard's figures, the timeline, cost
and tokens per step, the alerts, and the steps and sessions in full. Past :data:`MAX_BARS` steps
the per-step charts show groups of consecutive steps."""

from __future__ import annotations

from html import escape

from store.cli.dashboard import count, money
from store.cli.timeline import COLOURS
from store.cli.timeline import svg as timeline_svg
from store.monitor.clock import span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple

MAX_BARS = 100
TOKEN_COLOURS = (("input", "#2563eb"), ("output", "#16a34a"), ("cache_read", "#93c5fd"), ("cache_creation", "#f59e0b"))
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
"""


def _card(key: str, label: str, shown: str, value: Any, note: str = "") -> str:
    raw = "" if value is None else escape(str(value))
    return (f'<div class="card"><div class="k">{escape(label)}</div><div class="v" id="{key}" data-value="{raw}">'
            f'{escape(shown)}</div>' + (f'<div class="sub">{escape(note)}</div>' if note else "") + "</div>")


def _cards(data: Mapping[str, Any]) -> str:
    cost, tokens, tools = data["cost"], data["tokens"], data["tools"]
    duration = data["duration"]
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
    ]
    return '<div class="cards">' + "".join(cards) + "</div>"


def groups(steps: Sequence[Mapping[str, Any]]) -> List[Tuple[str, List[Mapping[str, Any]]]]:
    """Consecutive steps in at most :data:`MAX_BARS` groups, each with a label."""
    size = max(1, -(-len(steps) // MAX_BARS))
    out = []
    for first in range(0, len(steps), size):
        chunk = list(steps[first:first + size])
        label = chunk[0]["id"] if size == 1 else f"steps {first + 1}-{first + len(chunk)}: {chunk[0]['id']} ... " \
                                                 f"{chunk[-1]['id']}"
        out.append((label, chunk))
    return out


def _bars(chart: str, rows: Sequence[Tuple[str, Sequence[Tuple[str, float, str]]]],
          unit: Callable[[float], str]) -> str:
    """A bar chart: one column per row, stacked segments (name, value, colour)."""
    width, height, left, bottom = 1000, 180, 60, 20
    top = max((sum(v for _, v, _ in segs) for _, segs in rows), default=0.0) or 1.0
    step = (width - left) / max(len(rows), 1)
    parts = [f'<svg id="{chart}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%">',
             f'<text x="{left - 6}" y="12" text-anchor="end">{escape(unit(top))}</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width}" y2="{height - bottom}" stroke="#d1d5db"/>']
    for i, (label, segs) in enumerate(rows):
        x, y = left + i * step, float(height - bottom)
        total = sum(v for _, v, _ in segs)
        title = escape(f"{label}: " + ", ".join(f"{name} {unit(v)}" for name, v, _ in segs))
        parts.append(f'<g class="col" data-label="{escape(label)}" data-value="{total}"><title>{title}</title>')
        for _, value, colour in segs:
            h = (height - bottom - 16) * value / top
            y -= h
            parts.append(f'<rect x="{x + step * 0.1:.1f}" y="{y:.1f}" width="{max(step * 0.8, 0.8):.1f}" '
                         f'height="{h:.1f}" fill="{colour}"/>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def _cost_chart(data: Mapping[str, Any]) -> str:
    rows = []
    for label, chunk in groups(data["steps"]):
        reported = sum(s["cost_usd"] or 0.0 for s in chunk)
        estimated = sum((s["cost_estimated_usd"] or 0.0) for s in chunk) - reported
        rows.append((label, [("reported", reported, "#2563eb"), ("estimated, not reported", max(estimated, 0.0),
                                                                "#bfdbfe")]))
    legend = ('<p class="legend"><span><i style="background:#2563eb"></i>reported</span><span>'
              '<i style="background:#bfdbfe"></i>estimated (not reported yet)</span></p>')
    return _bars("cost-chart", rows, money) + legend


def _token_chart(data: Mapping[str, Any]) -> str:
    rows = [(label, [(kind, float(sum(s["tokens"][kind] for s in chunk)), colour) for kind, colour in TOKEN_COLOURS])
            for label, chunk in groups(data["steps"])]
    legend = '<p class="legend">' + "".join(f'<span><i style="background:{c}"></i>{k.replace("_", " ")}</span>'
                                             for k, c in TOKEN_COLOURS) + "</p>"
    return _bars("token-chart", rows, count) + legend


def _cell(value: Any, numeric: bool = False) -> str:
    return f'<td class="n">{escape(str(value))}</td>' if numeric else f"<td>{escape(str(value))}</td>"


def _steps_table(data: Mapping[str, Any]) -> str:
    head = ("<tr><th>step</th><th>phase</th><th>status</th><th class=n>attempt</th><th class=n>calls</th>"
            "<th class=n>failures</th><th class=n>tokens</th><th class=n>cost</th><th class=n>approval wait</th>"
            "<th>validation</th><th>last error</th></tr>")
    rows = []
    for s in data["steps"]:
        cost = money(s["cost_usd"]) if s["cost_usd"] is not None else (
            "~" + money(s["cost_estimated_usd"]) if s["cost_estimated_usd"] is not None else "-")
        error = (s["last_error"] or {}).get("error", "")
        rows.append(f'<tr data-step="{escape(s["id"])}">' + _cell(s["id"]) + _cell(s["phase"] or "")
                    + _cell(s["status"]) + _cell(s["attempt"], True) + _cell(s["calls"], True)
                    + _cell(s["failures"], True) + _cell(count(s["tokens"]["total"]), True) + _cell(cost, True)
                    + _cell(span(s["approval_wait_s"]) if s["approval_wait_s"] else "", True)
                    + _cell(s["validation"] or "") + _cell(error[:120]) + "</tr>")
    table = f'<table id="steps">{head}{"".join(rows)}</table>'
    if len(rows) > MAX_BARS:
        return f"<details><summary>all {len(rows)} steps</summary>{table}</details>"
    return table


def _sessions_table(data: Mapping[str, Any]) -> str:
    head = ("<tr><th>session</th><th>start</th><th>end</th><th>ended</th><th class=n>turns</th>"
            "<th class=n>calls</th><th class=n>failures</th><th class=n>tokens</th><th class=n>cost</th></tr>")
    rows = [f'<tr data-session="{escape(v["id"])}">' + _cell(v["id"][:8]) + _cell(v["start"] or "")
            + _cell(v["end"] or "") + _cell(v["ended"]) + _cell(v["turns"], True) + _cell(v["calls"], True)
            + _cell(v["failures"], True) + _cell(count(v["tokens"]["total"]), True)
            + _cell(money(v["cost_usd"]) if v["cost_usd"] is not None else "unknown", True) + "</tr>"
            for v in data["sessions"]]
    table = f'<table id="sessions">{head}{"".join(rows)}</table>'
    return f"<details><summary>all {len(rows)} sessions</summary>{table}</details>" if len(rows) > 40 else table


def _alerts(data: Mapping[str, Any]) -> str:
    if not data["alerts"]:
        return '<p class="empty" id="no-alerts">No alert was raised.</p>'
    items = "".join(f'<li class="alert">{escape(str(a.get("ts")))}: {escape(str(a.get("message")))}</li>'
                    for a in data["alerts"][-50:])
    return f'<ul id="alert-list">{items}</ul>'


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
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>baton report: {escape(title)}</title><style>{STYLE}</style></head>
<body>
<h1>baton report: <span id="job">{escape(title)}</span></h1>
<div class="sub">generated {escape(str(data["generated"]))}; {nxt}</div>
<div class="progress" title="{data['done']} of {data['total']} steps"><div style="width:{done:.1f}%"></div></div>
{_cards(data)}
<h2>Timeline</h2>
{timeline_svg(data, now)}
{_timeline_legend()}
<h2>Cost per step</h2>
{_cost_chart(data)}
<h2>Tokens per step</h2>
{_token_chart(data)}
<h2>Alerts</h2>
{_alerts(data)}
<h2>Steps</h2>
{_steps_table(data)}
<h2>Sessions</h2>
{_sessions_table(data)}
</body></html>
"""
